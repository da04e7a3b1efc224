"""Text for training a tiny tokenizer: whole gold conversations with *live* tool results.

A small BPE (the tiny CPU run's tokenizer, ``chat.train_tiny_tokenizer``) is only efficient on
text like what it will encode: system prompts, tool schemas, user turns, tool calls, replies —
and tool results, which are most of the generated context after the first turn and exist only by
running the calls. So every example's gold calls are executed against a fresh session of its
servers (one pass, no tokenizer needed) and the conversation is rendered with the family's chat
template exactly as the episode driver will lay it out. Results are clipped as episodes clip them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from prove_jax.chat import ChatTemplate
from prove_jax.env.episode import opening_messages
from prove_jax.env.pool import MCPPool
from prove_jax.records import Example


def _clip(text: str, limit: int | None) -> str:
    return text if limit is None or len(text) <= limit else text[:limit]


async def conversation_text(example: Example, pool: MCPPool, template: ChatTemplate,
                            max_result_chars: int | None = 2000) -> str:
    """The rendered gold conversation of ``example`` with real tool results."""
    parts = [template.render(opening_messages(example), example.tools)]
    async with pool.episode(example.servers, seed=example.seed) as ep:
        for i, turn in enumerate(example.turns):
            if i:
                parts.append(template.turn("user", turn.user))
            for step in sorted(turn.gold, key=lambda s: s.step):
                calls = [{"name": c.name, "arguments": c.arguments} for c in step.calls]
                parts.append(template.generation_prompt()
                             + template.assistant_body({"role": "assistant", "content": "", "tool_calls": calls})
                             + template.turn_separator)
                results = []
                for c in calls:
                    res = await ep.call(c["name"], c["arguments"], allow_hidden=True)
                    results.append(_clip(res.text, max_result_chars))
                    if ep.failed:
                        break
                if ep.failed:
                    break
                parts.append(template.tool_results_turn(results))
            parts.append(template.generation_prompt()
                         + template.assistant_body({"role": "assistant", "content": turn.reply})
                         + template.turn_separator)
    return "".join(parts)


async def tokenizer_corpus(examples: Sequence[Example], pool: MCPPool, template: ChatTemplate, *,
                           max_result_chars: int | None = 2000, concurrency: int = 32) -> list[str]:
    """:func:`conversation_text` of every example (in order)."""
    sem = asyncio.Semaphore(concurrency)

    async def one(ex: Example) -> str:
        async with sem:
            return await conversation_text(ex, pool, template, max_result_chars)

    return list(await asyncio.gather(*(one(ex) for ex in examples)))
