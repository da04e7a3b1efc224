"""Jinja chat templates generated from our renderers' rules, for tokenizers we create ourselves.

The tiny CPU run trains its own tokenizer and exports an HF directory; for that directory to be
usable by ``transformers``/vLLM-style servers (``apply_chat_template``) it needs a
``chat_template`` string in ``tokenizer_config.json``. We write one here from the same family
constants as :mod:`prove_jax.chat.templates`, so a tiny model speaks exactly the format its
target family speaks (each format's :class:`~prove_jax.chat.families.ChatFamily` names its
builder). ``tests/chat`` checks that this Jinja output equals our Python renderer.

Known gap: arguments given as a JSON *string* are written raw by both (consistent); content
must be a string or absent (no multimodal parts), as in the Python renderer.
"""

from __future__ import annotations

import json

from prove_jax.chat import templates as T


def _lit(text: str) -> str:
    """A Jinja string literal (JSON string syntax is valid Jinja)."""
    return json.dumps(text)


_CALLS = """{%- macro calls(m, c) -%}
{%- for tc in (m.tool_calls or []) -%}
{%- set f = tc.function if tc.function is defined and tc.function else tc -%}
{%- if c or not loop.first %}{{ '\\n' }}{% endif -%}
{{- '<tool_call>\\n{"name": "' ~ f.name ~ '", "arguments": ' -}}
{{- f.arguments if f.arguments is string else ((f.arguments if f.arguments is defined else {}) | tojson) -}}
{{- '}\\n</tool_call>' -}}
{%- endfor -%}
{%- endmacro -%}
"""

_TOOL_TURNS = """{%- elif m.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{ OPEN_USER }}{% endif -%}
{{- '\\n<tool_response>\\n' ~ c ~ '\\n</tool_response>' -}}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{ EOT ~ '\\n' }}{% endif -%}
{%- endif -%}
{%- endfor -%}
"""


def chatml_jinja(*, thinking: bool, default_system: str | None) -> str:
    """ChatML as Qwen writes it: with ``thinking`` the Qwen3 ``<think>`` rules, else Qwen2.5's;
    ``default_system`` is the system turn written when there is none (None: no system turn)."""
    head, tail = _lit(T._QWEN_TOOLS_HEAD), _lit(T._QWEN_TOOLS_TAIL)
    sys_text = "messages[0].content" if default_system is None else (
        f"(messages[0].content if has_sys else {_lit(default_system)})"
    )
    parts = [
        "{%- set OPEN_USER = '<|im_start|>user' -%}{%- set EOT = '<|im_end|>' -%}",
        _CALLS,
        "{%- set has_sys = messages and messages[0].role == 'system' -%}",
        "{%- set tool_lines = namespace(s='') -%}",
        "{%- for t in (tools or []) %}{% set tool_lines.s = tool_lines.s ~ '\\n' ~ (t | tojson) %}{% endfor -%}",
    ]
    if default_system is None:
        parts.append(
            "{%- if tools -%}{{- '<|im_start|>system\\n' ~ (messages[0].content ~ '\\n\\n' if has_sys else '')"
            f" ~ {head} ~ tool_lines.s ~ {tail} ~ '<|im_end|>\\n' -}}}}"
            "{%- elif has_sys -%}{{- '<|im_start|>system\\n' ~ messages[0].content ~ '<|im_end|>\\n' -}}{%- endif -%}"
        )
    else:
        parts.append(
            f"{{{{- '<|im_start|>system\\n' ~ {sys_text} -}}}}"
            f"{{%- if tools %}}{{{{- '\\n\\n' ~ {head} ~ tool_lines.s ~ {tail} -}}}}{{% endif -%}}"
            "{{- '<|im_end|>\\n' -}}"
        )
    parts.append("{%- set ns = namespace(q=(messages | length) - 1) -%}")
    if thinking:
        parts.append(
            "{%- for m in messages -%}{%- if m.role == 'user' and m.content is string and not "
            "(m.content.startswith('<tool_response>') and m.content.endswith('</tool_response>')) -%}"
            "{%- set ns.q = loop.index0 -%}{%- endif -%}{%- endfor -%}"
        )
    parts.append(
        "{%- for m in messages -%}{%- set c = m.content if m.content is string else '' -%}"
        "{%- if m.role == 'user' or (m.role == 'system' and not loop.first) -%}"
        "{{- '<|im_start|>' ~ m.role ~ '\\n' ~ c ~ '<|im_end|>\\n' -}}"
        "{%- elif m.role == 'assistant' -%}"
    )
    if thinking:
        parts.append(
            "{%- if m.reasoning_content is string %}{% set r = m.reasoning_content -%}"
            "{%- elif m.reasoning is string %}{% set r = m.reasoning -%}"
            "{%- elif '</think>' in c %}{% set r = c.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') -%}"
            "{%- set c = c.split('</think>')[-1].lstrip('\\n') -%}"
            "{%- else %}{% set r = '' %}{% endif -%}"
            "{{- '<|im_start|>assistant\\n' -}}"
            "{%- if loop.index0 > ns.q and (loop.last or r) -%}"
            "{{- '<think>\\n' ~ r.strip('\\n') ~ '\\n</think>\\n\\n' ~ c.lstrip('\\n') -}}"
            "{%- else %}{{ c }}{% endif -%}"
        )
    else:
        parts.append("{{- '<|im_start|>assistant\\n' ~ c -}}")
    parts.append("{{- calls(m, c) ~ '<|im_end|>\\n' -}}")
    parts.append(_TOOL_TURNS)
    gen = "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}"
    if thinking:
        gen += "{%- if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{% endif -%}"
    parts.append(gen + "{%- endif -%}")
    return "\n".join(parts)


def granite_jinja() -> str:
    """Granite 4.1's role markup (system turn only with a system message or tools)."""
    head, tail = _lit(T._GRANITE_TOOLS_HEAD), _lit(T._GRANITE_TOOLS_TAIL)
    return "\n".join(
        [
            "{%- set OPEN_USER = '<|start_of_role|>user<|end_of_role|>' -%}{%- set EOT = '<|end_of_text|>' -%}",
            _CALLS,
            "{%- set has_sys = messages and messages[0].role == 'system' -%}",
            "{%- set s = namespace(tools='', text='') -%}",
            f"{{%- if tools -%}}{{%- set s.tools = {head} -%}}"
            "{%- for t in tools %}{% set s.tools = s.tools ~ '\\n' ~ (t | tojson) %}{% endfor -%}"
            f"{{%- set s.tools = s.tools ~ {tail} -%}}{{%- endif -%}}",
            "{%- if has_sys -%}{%- set s.text = messages[0].content ~ ('\\n\\n' ~ s.tools if s.tools else '') -%}"
            "{%- else -%}{%- set s.text = s.tools -%}{%- endif -%}",
            "{%- if s.text %}{{ '<|start_of_role|>system<|end_of_role|>' ~ s.text ~ '<|end_of_text|>\\n' }}{% endif -%}",
            "{%- for m in messages -%}{%- set c = m.content if m.content is string else '' -%}"
            "{%- if m.role == 'user' or (m.role == 'system' and not loop.first) -%}"
            "{{- '<|start_of_role|>' ~ m.role ~ '<|end_of_role|>' ~ c ~ '<|end_of_text|>\\n' -}}"
            "{%- elif m.role == 'assistant' -%}"
            "{{- '<|start_of_role|>assistant<|end_of_role|>' ~ c ~ calls(m, c) ~ '<|end_of_text|>\\n' -}}",
            _TOOL_TURNS,
            "{%- if add_generation_prompt %}{{ '<|start_of_role|>assistant<|end_of_role|>' }}{% endif -%}",
        ]
    )
