"""Throughput of the chat layer on CPU: tool-call parsing, rendering, transcript appends.

Why it matters: every rollout turn is parsed and every tool result is appended on the host
while the accelerator waits; these must stay far below sampling time (a 512-rollout GRPO batch
with ~6 turns is ~3k parses and ~3k appends per step).

Run: ``python benchmarks/bench_chat.py [--seconds S]``. Prints ``RESULT`` lines (DESIGN.md).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable

from prove_jax.chat import Transcript, get_template, parse_tool_calls, train_tiny_tokenizer
from prove_jax.chat.tokenizer import ChatTokenizer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": f"domain_tool_{i}",
            "description": "Look something up in the domain database by id or name.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["id"],
            },
        },
    }
    for i in range(12)
]
TURN = {
    "role": "assistant",
    "content": "I'll look up both records.",
    "reasoning_content": "Two independent lookups, run them in parallel.",
    "tool_calls": [
        {"name": "domain_tool_1", "arguments": {"id": "A-17", "limit": 5}},
        {"name": "domain_tool_4", "arguments": {"id": "Zürich", "limit": 1}},
    ],
}
RESULT_TEXT = '{"id": "A-17", "status": "active", "items": [1, 2, 3], "note": "ok"}'


def rate(fn: Callable[[], object], seconds: float) -> float:
    """Calls per second of ``fn`` over about ``seconds`` of wall time (after one warm-up call)."""
    fn()
    n, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        fn()
        n += 1
    return n / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=2.0, help="measuring time per figure")
    args = ap.parse_args()

    tpl = get_template("qwen3")
    text = tpl.assistant_body(TURN)
    corpus = [tpl.render([{"role": "user", "content": "hi"}, TURN], TOOLS), RESULT_TEXT] * 20
    with tempfile.TemporaryDirectory() as d:
        tok = ChatTokenizer.from_dir(train_tiny_tokenizer("qwen3", corpus, 1024, out_dir=d))
    gen_ids = tok.encode(text)
    start_msgs = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Find A-17."}]

    parse_rate = rate(lambda: parse_tool_calls(text), args.seconds)
    render_rate = rate(lambda: tpl.render([*start_msgs, TURN], TOOLS, add_generation_prompt=True), args.seconds)

    def episode() -> None:
        tr = Transcript.start(tpl, tok, start_msgs, TOOLS)
        for _ in range(3):
            tr.start_assistant()
            tr.append_generated(gen_ids)
            tr.append_tool_results([RESULT_TEXT, RESULT_TEXT])

    episode_rate = rate(episode, args.seconds)
    print(f"RESULT chat_parse_turns_per_s {parse_rate:.0f} turns/s goal=>=10000")
    print(f"RESULT chat_render_per_s {render_rate:.0f} renders/s goal=>=2000")
    print(f"RESULT chat_transcript_3turn_episodes_per_s {episode_rate:.0f} episodes/s goal=>=100")


if __name__ == "__main__":
    main()
