"""Language quality of synthesized data: builds (or reads) a dataset and prints its quality figures.

    python benchmarks/bench_data_quality.py [--size tiny|paper] [--seed 7] [--data DIR] [--workers 2]

Figures (``data/quality.py`` defines each; goals from the data-2 issue):
description-overlap rate (goal <= 5 %), param:value echo rate (goal <= 10 %), distinct-4-gram ratio,
id-in-text rate, label-resolution rate (goal 100 %, recomputed against the live servers' discovery
tools), no-op gold rate (goal 0, every example replayed with a state comparison around each write)
and rejections per reason from the build. Each goal gets a ``RESULT`` line with its ratio to the goal
(ratios <= 1 meet it), measured on data built in the same run unless ``--data`` points at a build.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from data.build import build  # noqa: E402
from data.catalog import get_catalog  # noqa: E402
from data.quality import measure  # noqa: E402
from data.sampler import LiveStateSampler  # noqa: E402
from data.validate import Validator  # noqa: E402


def load(path: Path) -> list[dict]:
    out = []
    for split in ("train", "validation", "test"):
        with open(path / f"{split}.jsonl") as fh:
            out.extend(json.loads(line) for line in fh)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=("tiny", "paper"), default="tiny")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--data", default="", help="an existing build to measure instead of building one")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    if args.data:
        out = Path(args.data)
        stats = json.loads((out / "stats.json").read_text())
        build_s = float("nan")
    else:
        out = Path(tempfile.mkdtemp(prefix="quality-"))
        res = build(out, args.seed, args.size, workers=args.workers, progress=True)
        stats, build_s = res.stats, res.timings["total"]
    examples = load(out)
    catalog = get_catalog(tuple(stats["per_domain"]))
    t1 = time.perf_counter()
    q = measure(examples, catalog, sampler=LiveStateSampler(catalog), validator=Validator(catalog))
    t_measure = time.perf_counter() - t1
    rejected = sum(stats["rejections"].values())
    slots = stats["total"] + rejected
    print(f"data: {out} ({stats['total']} examples, {q['gold_calls']} gold calls, {q['user_turns']} user turns); "
          f"build {build_s:.1f} s, measure {t_measure:.1f} s")
    for k, v in q.items():
        if k != "unresolved_labels":
            print(f"  {k}: {v}")
    if q.get("unresolved_labels"):
        print("  unresolved:", ", ".join(q["unresolved_labels"]))
    print(f"  rejections: {rejected} of {slots} generated ({rejected / max(1, slots):.1%}):",
          json.dumps(stats["rejections"], sort_keys=True))
    tag = f"{args.size}/seed{args.seed}"
    print(f"RESULT description_overlap {tag}: {q['description_overlap_rate']:.2%} (goal <= 5%, "
          f"ratio {q['description_overlap_rate'] / 0.05:.2f})")
    print(f"RESULT param_echo {tag}: {q['param_echo_rate']:.2%} (goal <= 10%, ratio {q['param_echo_rate'] / 0.10:.2f})")
    print(f"RESULT distinct_4gram {tag}: {q['distinct_4gram_ratio']:.3f}")
    print(f"RESULT id_in_text {tag}: {q['id_in_text_rate']:.2%} of user turns")
    print(f"RESULT label_resolution {tag}: {q['label_resolution_rate']:.2%} of {q['label_mentions']} labels "
          f"(goal 100%)")
    print(f"RESULT noop_gold {tag}: {q['noop_gold_rate']:.2%} of {q['gold_writes']} writes (goal 0)")
    print(f"RESULT rejection_rate {tag}: {rejected / max(1, slots):.2%}")


if __name__ == "__main__":
    main()
