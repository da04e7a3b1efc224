"""The dataset card: what was built, in numbers (``stats.json``), prose tables (``README.md``) and
histograms (``figures/*.png``). Everything here is derived from the final records and the build's
rejection log, never from timings, so the card is as reproducible as the data."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from data.catalog import Catalog
from data.config import SynthConfig
from data.graph import DependencyGraph


def _hist(values: list[int]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(Counter(values).items())}


def shape_stats(examples: list[dict[str, Any]], splits: dict[str, list[int]], seed: int,
                coverage: dict[str, int], min_tool_examples: int) -> dict[str, Any]:
    """The keys of ``stats.json`` that depend only on the records (sizes, kinds, shapes, coverage):
    shared by the kit's build and a user's server's (``data.byo.synth``), so the card and the
    launcher read both alike."""
    return {
        "seed": seed,
        "total": len(examples),
        "splits": {s: len(v) for s, v in splits.items()},
        "kinds": dict(sorted(Counter(ex["kind"] for ex in examples).items())),
        "chain_length": _hist([len(ex["meta"].get("chain", [])) for ex in examples]),
        "turns": _hist([ex["complexity"]["n_turns"] for ex in examples]),
        "calls_per_example": _hist([ex["complexity"]["n_calls"] for ex in examples]),
        "steps_per_example": _hist([ex["complexity"]["n_steps"] for ex in examples]),
        "tool_coverage": coverage,
        "tools_below_min": sorted(t for t, c in coverage.items() if c < min_tool_examples),
    }


def compute_stats(examples: list[dict[str, Any]], splits: dict[str, list[int]], catalog: Catalog,
                  graph: DependencyGraph, rejections: dict[str, int], cfg: SynthConfig, seed: int) -> dict[str, Any]:
    n = len(examples)
    kinds = Counter(ex["kind"] for ex in examples)
    per_domain: dict[str, Counter[str]] = {d: Counter() for d in catalog.domains}
    coverage = dict.fromkeys(sorted(catalog.tools), 0)
    outcomes: Counter[str] = Counter()
    for ex in examples:
        for d in ex["servers"]:
            per_domain[d][ex["kind"]] += 1
        names = {c["name"] for t in ex["turns"] for g in t["gold"] for c in g["calls"]}
        for name in names:
            coverage[name] += 1
        outcomes.update(ex["meta"].get("outcomes", []))
    convs = [ex for ex in examples if ex["kind"] == "conversation"]
    failures = Counter((ex["meta"].get("failure") or {}).get("recovery", "none") for ex in convs)
    parallel = sum(1 for ex in examples if any(len(g["calls"]) > 1 for t in ex["turns"] for g in t["gold"]))

    def rate(k: int) -> float:
        return round(k / n, 4) if n else 0.0

    stats = {
        **shape_stats(examples, splits, seed, coverage, cfg.min_tool_examples),
        "per_domain": {d: dict(sorted(c.items())) for d, c in per_domain.items()},
        "multi_server": sum(1 for ex in examples if len(ex["servers"]) > 1),
        "knob_rates": {
            "distractors": rate(sum(1 for ex in examples if ex["meta"].get("distractors"))),
            "enum_stripping": rate(sum(1 for ex in examples if ex["meta"].get("enum_stripped"))),
            "irrelevance": rate(kinds["irrelevance"]),
            "missing_function": rate(kinds["clarification"] + kinds["abstention"]),
            "parallel_steps": rate(parallel),
            "multi_server": rate(sum(1 for ex in examples if len(ex["servers"]) > 1)),
        },
        "info_levels": dict(sorted(Counter(ex["meta"].get("info_level", "complete") for ex in convs).items())),
        "designed_failures": dict(sorted(failures.items())),
        "step_outcomes": dict(sorted(outcomes.items())),
        "rejections": dict(sorted(rejections.items())),
        "graph_pairs": graph.counts(),
        "inferred_metadata": {d: v for d, v in catalog.inferred.items() if v},
        "config": cfg.to_dict(),
    }
    return stats


def _figures(stats: dict[str, Any], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir = out / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    made = []

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        fig.savefig(fig_dir / name, dpi=80, metadata={"Software": None})
        plt.close(fig)
        made.append(f"figures/{name}")

    for key, title in (("chain_length", "chain length"), ("turns", "turns per example"),
                       ("calls_per_example", "gold calls per example"), ("steps_per_example", "gold steps per example")):
        hist = stats[key]
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.bar(list(hist), list(hist.values()), color="#4c72b0")
        ax.set_title(title)
        ax.set_ylabel("examples")
        save(fig, f"{key}.png")
    domains = list(stats["per_domain"])
    kinds = sorted({k for c in stats["per_domain"].values() for k in c})
    fig, ax = plt.subplots(figsize=(7, 3.5))
    bottom = [0] * len(domains)
    for kind in kinds:
        vals = [stats["per_domain"][d].get(kind, 0) for d in domains]
        ax.bar(domains, vals, bottom=bottom, label=kind)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.legend(fontsize=7)
    ax.set_title("examples per server and kind")
    ax.tick_params(axis="x", labelrotation=30, labelsize=7)
    save(fig, "per_domain.png")
    cov = sorted(stats["tool_coverage"].items(), key=lambda kv: (kv[1], kv[0]))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(range(len(cov)), [c for _, c in cov], color="#55a868")
    ax.axhline(stats["config"]["min_tool_examples"], color="red", linewidth=1)
    ax.set_title("examples per user-visible tool (sorted)")
    ax.set_xlabel("tool rank")
    save(fig, "tool_coverage.png")
    return made


def _table(rows: list[tuple[Any, ...]], header: tuple[str, ...]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def render_example(ex: dict[str, Any]) -> list[str]:
    """One example as a reader sees a conversation: system line, user turns, gold calls, replies."""
    lines = [f"### `{ex['id']}` — {ex['kind']}, {', '.join(ex['servers'])}", "",
             f"> *system (last line):* {ex['system'].splitlines()[-1]}", ">"]
    for t in ex["turns"]:
        lines.append(f"> **user:** {t['user']}")
        for g in t["gold"]:
            for c in g["calls"]:
                args = json.dumps(c["arguments"], ensure_ascii=False)
                args = args if len(args) <= 160 else args[:157] + "..."
                flag = " *(fails by design)*" if c.get("expect_error") else ""
                lines.append(f"> &nbsp;&nbsp;`{c['name']}({args})`{flag}")
        lines.append(f"> **assistant:** {t['reply']}")
        lines.append(">")
    return [*lines[:-1], ""]


def sample_examples(examples: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` examples at random, every kind represented, spread over servers (deterministic per seed)."""
    import random

    rng = random.Random(seed)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for ex in examples:
        by_kind.setdefault(ex["kind"], []).append(ex)
    picked = [rng.choice(v) for _, v in sorted(by_kind.items())]
    rest = [ex for ex in examples if ex not in picked]
    rng.shuffle(rest)
    seen_domains = {d for ex in picked for d in ex["servers"]}
    rest.sort(key=lambda ex: all(d in seen_domains for d in ex["servers"]))  # new servers first (stable)
    for ex in rest:
        if len(picked) >= n:
            break
        picked.append(ex)
        seen_domains.update(ex["servers"])
    return sorted(picked[:n], key=lambda ex: ex["id"])


QUALITY_ROWS = (("description_overlap_rate", "gold calls whose user text copies >= 5 words of the tool description",
                 "<= 0.05"),
                ("param_echo_rate", "gold calls whose user text spells an argument as `name: value`", "<= 0.10"),
                ("distinct_4gram_ratio", "distinct / total word 4-grams over user turns", "higher is more varied"),
                ("id_in_text_rate", "user turns stating an internal id (not an order number, ticket key, ...)",
                 "lower reads more natural"),
                ("label_resolution_rate", "entity labels shown to users that single out the gold id via discovery",
                 "1.0"),
                ("rejection_rate", "generated examples that validation or dedup rejected", "see rejections"))


def write_card(stats: dict[str, Any], out: Path, examples: list[dict[str, Any]] | None = None, *,
               intro: str | None = None) -> None:
    """``intro``: the card's first paragraph (who built it, against what), when not ``data.build``."""
    figures = _figures(stats, out)
    (out / "stats.json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")
    kinds = sorted({k for c in stats["per_domain"].values() for k in c})
    dom_rows = [(d, *[c.get(k, 0) for k in kinds], sum(c.values())) for d, c in stats["per_domain"].items()]
    cov = stats["tool_coverage"]
    low = sorted(cov.items(), key=lambda kv: (kv[1], kv[0]))[:10]
    parts = [
        "# PROVE synthetic tool-use dataset",
        "",
        intro or (f"Built by `python -m data.build` with seed {stats['seed']}: {stats['total']} examples against the "
                  "project's live MCP servers (programmatic teacher; every gold call was executed and replayed)."),
        "",
        "## Splits and kinds",
        _table([(s, v) for s, v in stats["splits"].items()], ("split", "examples")),
        "",
        _table([(k, v) for k, v in stats["kinds"].items()], ("kind", "examples")),
        "",
        f"Multi-server examples: {stats['multi_server']}.",
        "",
        "## Examples per server (an example counts once for each server it opens)",
        _table(dom_rows, ("server", *kinds, "total")),
        "",
        "## Shape",
        _table([(k, v) for k, v in stats["chain_length"].items()], ("chain length", "examples")),
        "",
        _table([(k, v) for k, v in stats["turns"].items()], ("turns", "examples")),
        "",
        _table([(k, v) for k, v in stats["calls_per_example"].items()], ("gold calls", "examples")),
        "",
        "## Knobs and state-machine rates",
        _table([(k, v) for k, v in stats["knob_rates"].items()], ("knob", "rate")),
        "",
        _table([(k, v) for k, v in stats["info_levels"].items()], ("information level (conversations)", "examples")),
        "",
        _table([(k, v) for k, v in stats["designed_failures"].items()], ("designed failure recovery", "conversations")),
        "",
        _table([(k, v) for k, v in stats["step_outcomes"].items()], ("gold step outcome", "steps")),
        "",
        "## Tool coverage",
        f"{sum(1 for c in cov.values() if c >= stats['config']['min_tool_examples'])} of {len(cov)} user-visible "
        f"tools appear in at least {stats['config']['min_tool_examples']} examples. Least used:",
        "",
        _table(low, ("tool", "examples")),
        "",
        "## Language quality (`data/quality.py`; `benchmarks/bench_data_quality.py` adds the no-op replay)",
        _table([(k, stats.get("quality", {}).get(k, "-"), what, goal) for k, what, goal in QUALITY_ROWS],
               ("figure", "value", "what it counts", "goal")),
        "",
        "## Rejections",
        _table([(k, v) for k, v in stats["rejections"].items()] or [("none", 0)], ("reason", "count")),
        "",
        "## Dependency graph",
        _table([(k, v) for k, v in stats["graph_pairs"].items()], ("ordered pair class", "pairs")),
        "",
        "Metadata inferred where the servers declare none (see `stats.json` -> `inferred_metadata`).",
        "",
        "## Figures",
        *[f"![{Path(f).stem}]({f})" for f in figures],
        "",
    ]
    if examples:
        shown = sample_examples(examples, 30, stats["seed"])
        parts += ["## 30 examples, rendered", "",
                  "Drawn at random (every kind, as many servers as possible); tool lists and knobs omitted.", ""]
        for ex in shown:
            parts += render_example(ex)
    (out / "README.md").write_text("\n".join(parts))
