"""The benchmark registry: a benchmark is one registration — its settings section, runner, CLI flags
and report columns follow from it — and the launcher's YAML nests settings per benchmark."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from prove_jax.eval import __main__ as eval_main
from prove_jax.eval import config as eval_config
from prove_jax.eval import registry, suite
from prove_jax.eval.markdown import pct
from prove_jax.eval.registry import Benchmark, RunContext
from prove_jax.yamlconf import ConfigError, build


@dataclasses.dataclass(frozen=True)
class ToySettings:
    """A benchmark that answers from its settings."""

    enabled: bool = False  # run it in the suite
    level: int = 3  # how many points of 10 the policy scores


class Echo:
    """A chat client the toy's runner asks once."""

    def __init__(self) -> None:
        self.asked = 0

    async def chat(self, messages: Any, tools: Any = None, **_: Any) -> Any:
        self.asked += 1
        return None


async def _run_toy(cfg: ToySettings, ctx: RunContext) -> dict[str, Any]:
    await ctx.client.chat([{"role": "user", "content": "hi"}])
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    (ctx.out_dir / "toy.json").write_text(json.dumps({"level": cfg.level}))
    return {"score": cfg.level / 10, "model": ctx.name}


TOY = Benchmark(name="toy", title="a toy benchmark", settings=ToySettings, suite_default=ToySettings(),
                run=_run_toy, headline=("toy_score", "Toy score", lambda r: r.get("score")),
                section=lambda rows: ["", "## Toy", *(f"{m}: {pct(r['score'])}" for m, r in rows)],
                oracle=Echo)


@pytest.fixture()
def toy(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The toy registered (and removed again afterwards); returns the BenchmarksConfig generated
    with it. Every module that binds the class is imported above, before it is swapped here."""
    monkeypatch.setattr(registry, "BENCHMARKS", dict(registry.BENCHMARKS))
    registry.register(TOY)
    cfg = eval_config._make_config()
    for mod in (eval_config, eval_main):
        monkeypatch.setattr(mod, "BenchmarksConfig", cfg)
    monkeypatch.setattr(eval_main, "BENCHMARKS", registry.BENCHMARKS)
    return cfg


def test_registration_order_is_table_3() -> None:
    assert registry.names() == ["bfcl", "tau2", "teval"]
    assert [f.name for f in dataclasses.fields(eval_config.BenchmarksConfig)] == ["bfcl", "tau2", "teval"]
    assert eval_config.BenchmarksConfig().enabled() == []  # the launcher runs none unless its config says so
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(registry.get("bfcl"))
    with pytest.raises(KeyError, match="choose from"):
        registry.get("bfc")


def test_one_registration_gives_config_runner_report_and_cli(toy: Any, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from prove_jax.eval.report import headline, markdown

    main, parse = eval_main.main, eval_main.parse
    # the settings section (YAML eval.benchmarks.toy), switched off by default
    cfg = build(toy, {"toy": {"enabled": True, "level": 7}})
    assert cfg.toy == ToySettings(enabled=True, level=7) and toy().enabled() == []
    with pytest.raises(ConfigError, match="level"):
        build(toy, {"toy": {"level": "high"}})
    # the runner, through run_benchmarks, into its own directory
    client = Echo()
    res = asyncio.run(suite.run_benchmarks(client, "m", tmp_path / "suite", cfg))
    assert res == {"toy": {"score": 0.7, "model": "m"}} and client.asked == 1
    assert json.loads((tmp_path / "suite" / "toy" / "toy.json").read_text()) == {"level": 7}
    # the report: a headline column and its section
    row = {"model": "m", **res}
    assert headline(row)["toy_score"] == 0.7
    md = markdown([row])
    assert "| model | BFCL-MT overall | τ² avg | T-Eval | Toy score | in-domain success |" in md
    assert "## Toy" in md and "m: 70.0" in md
    # the CLI: `eval toy` with flags from its settings, `eval all --toy --toy-level`
    out = main(["toy", "--policy", "oracle", "--level", "4", "--out", str(tmp_path / "cli")])
    assert out == {"score": 0.4, "model": "oracle"}
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == out
    args = parse(["all", "--model", "m", "--toy", "--toy-level", "2"])
    assert (args.toy, args.toy_level) == (True, 2)


def test_a_failed_benchmark_is_reported_not_fatal(tmp_path: Path) -> None:
    """A benchmark that raises leaves ``{"error": ...}``; the report says so and keeps the others."""
    from prove_jax.eval.report import markdown, normalise

    cfg = eval_config.BenchmarksConfig(teval=registry.get("teval").settings(data=str(tmp_path)))  # no embedder
    res = asyncio.run(suite.run_benchmarks(Echo(), "m", tmp_path, cfg))
    assert "embedder" in res["teval"]["error"]
    md = markdown([normalise({"model": "m", "bfcl": {"error": "boom"}, **res})])
    assert "> bfcl failed for m: boom" in md and "> teval failed for m:" in md
    assert "| m | – | – | – | – |" in md


def test_launcher_yaml_nests_settings_per_benchmark() -> None:
    from prove_jax.config import LaunchConfig, load

    cfg = load(LaunchConfig, None, ["eval.benchmarks.bfcl.enabled=true", "eval.benchmarks.bfcl.limit=2",
                                    "eval.benchmarks.tau2.domains=[airline]", "eval.benchmarks.teval.limit=5"])
    b = cfg.eval.benchmarks
    assert (b.bfcl.limit, b.tau2.domains, b.tau2.num_trials, b.teval.limit) == (2, ("airline",), 4, 5)
    assert b.enabled() == ["bfcl", "tau2"]
    assert b.local().enabled() == ["bfcl", "tau2"] and b.over_http().enabled() == []  # native τ²: in-process
    cli = load(LaunchConfig, None, ["eval.benchmarks.tau2.domains=[airline]", "eval.benchmarks.tau2.runner=tau2-cli"])
    assert cli.eval.benchmarks.local().enabled() == [] and cli.eval.benchmarks.over_http().enabled() == ["tau2"]
    with pytest.raises(ConfigError, match=r"known: \['bfcl', 'tau2', 'teval'\]"):
        load(LaunchConfig, None, ["eval.benchmarks.bfcl_limit=2"])  # the old flat key names the sections


def test_eval_all_flags_are_the_suite_settings() -> None:
    """``eval all``'s benchmark flags build BenchmarksConfig; BFCL is on unless --no-bfcl, and
    the flags scripts use keep working (--tau2-trials, --tau2-user-url, --tau2-python)."""
    from prove_jax.cli import dataclass_from_args
    from prove_jax.eval.__main__ import _suite_defaults, _suite_skip, parse

    def bench(*flags: str) -> Any:
        return dataclass_from_args(eval_config.BenchmarksConfig, parse(["all", "--model", "m", *flags]),
                                   defaults=_suite_defaults(), skip=_suite_skip())

    assert bench().enabled() == ["bfcl"]
    b = bench("--no-bfcl", "--tau2-domains", "airline", "--tau2-trials", "2", "--tau2-user-url", "http://u/v1",
              "--tau2-python", "/py", "--teval-data", "d", "--teval-embedder", "e", "--bfcl-limit", "1")
    assert b.enabled() == ["tau2", "teval"] and b.bfcl.limit == 1
    assert (b.tau2.domains, b.tau2.num_trials, b.tau2.user_base_url, b.tau2.tau2_python) == (
        ("airline",), 2, "http://u/v1", "/py")
    assert (b.teval.data, b.teval.embedder) == ("d", "e")
    with pytest.raises(SystemExit):
        parse(["all", "--model", "m", "--tau2-agent-model", "x"])  # the suite points τ² at the policy itself


def test_tau2_runner_points_the_agent_at_the_served_policy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from prove_jax.eval import tau2

    seen: list[Mapping[str, Any]] = []
    monkeypatch.setattr(tau2, "run_tau2", lambda cfg, out: seen.append(dataclasses.asdict(cfg)) or {"avg": 50.0})
    cfg = eval_config.BenchmarksConfig(tau2=tau2.Tau2Config(domains=("airline",), user_model="gpt-4.1",
                                                           runner="tau2-cli"))
    res = asyncio.run(suite.run_benchmarks(Echo(), "m", tmp_path, cfg.over_http(), url="http://h:1/v1",
                                           served_name="srv"))
    assert res == {"tau2": {"avg": 50.0}}
    assert (seen[0]["agent_model"], seen[0]["agent_base_url"], seen[0]["user_model"]) == ("srv", "http://h:1/v1",
                                                                                          "gpt-4.1")
    no_url = asyncio.run(suite.run_benchmarks(Echo(), "m", tmp_path, cfg))
    assert "needs the policy over HTTP" in no_url["tau2"]["error"]
