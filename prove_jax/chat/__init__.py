"""prove_jax.chat: tokenizers, chat templates, token-exact transcripts and tool-call parsing.

Knows nothing of env, servers, rewards or rl (DESIGN.md, Layering) and never imports
transformers or torch; those are test-only references.

Typical rollout use::

    tok = ChatTokenizer.from_dir(hf_dir)
    tpl = get_template(detect_family(tok.chat_template, tok.added_tokens), enable_thinking=False)
    tr = Transcript.start(tpl, tok, [{"role": "system", ...}, {"role": "user", ...}], tools)
    prompt = tr.start_assistant()
    tr.append_generated(sampled_ids, logprobs)        # loss_mask 1
    result = parse_tool_calls(tok.decode(sampled_ids))
    tr.append_tool_results([...])                     # loss_mask 0
"""

from prove_jax.chat.families import (
    FAMILIES,
    ChatFamily,
    chat_family,
    detect_family,
    get_template,
    jinja_template,
    register_chat_family,
    unregister_chat_family,
)
from prove_jax.chat.templates import (
    ChatTemplate,
    Granite41Template,
    Message,
    Qwen3Template,
    Qwen25Template,
    SmolLM2Template,
)
from prove_jax.chat.tiny_tokenizer import family_tokens, train_tiny_tokenizer
from prove_jax.chat.tokenizer import ChatTokenizer
from prove_jax.chat.toolcall import BlockError, ParseResult, ToolCall, parse_tool_calls, split_reasoning
from prove_jax.chat.transcript import Span, SpecialIds, Transcript, special_ids

__all__ = [
    "FAMILIES",
    "BlockError",
    "ChatFamily",
    "ChatTemplate",
    "ChatTokenizer",
    "Granite41Template",
    "Message",
    "ParseResult",
    "Qwen3Template",
    "Qwen25Template",
    "SmolLM2Template",
    "Span",
    "SpecialIds",
    "ToolCall",
    "Transcript",
    "chat_family",
    "detect_family",
    "family_tokens",
    "get_template",
    "jinja_template",
    "parse_tool_calls",
    "register_chat_family",
    "special_ids",
    "split_reasoning",
    "train_tiny_tokenizer",
    "unregister_chat_family",
]
