"""The planner: every program of a run compiled for a topology, per-device memory against HBM, and a
refusal that names the program and the knob.

The suite runs with 8 simulated CPU devices (tests/conftest.py), so ``cpu-8`` plans in-process.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from prove_jax.config import LaunchConfig, load
from prove_jax.plan import plan_run, resolve
from prove_jax.plan.__main__ import NO_FIT_EXIT, main
from prove_jax.plan.planner import KNOBS
from prove_jax.plan.topology import GiB

TINY = "configs/runs/tiny_cpu.yaml"
REPO = Path(__file__).resolve().parents[2]


def _cfg(*overrides: str) -> LaunchConfig:
    return load(LaunchConfig, str(REPO / TINY), ["model.mesh=fsdp=-1", *overrides])


@pytest.fixture(scope="module")
def tiny_report():  # type: ignore[no-untyped-def]
    return plan_run(_cfg(), resolve("cpu-8"), progress=lambda _m: None)


def test_every_program_of_a_grpo_run_is_compiled(tiny_report) -> None:  # type: ignore[no-untyped-def]
    r = tiny_report
    names = [p.name for p in r.programs]
    assert names[:2] == ["accumulate[2048]", "accumulate[1024]"]  # the binding bucket and its half
    assert {"update", "decode", "prefill", "weight_transfer"} <= set(names)
    for p in r.programs:
        assert p.compile_s > 0 and p.live > 0, p
    # Activations are linear in tokens: the 2048 bucket needs more than the 1024 one.
    acc = {p.name: p for p in r.programs}
    assert acc["accumulate[2048]"].temporaries > 1.5 * acc["accumulate[1024]"].temporaries
    assert r.fits and r.refusal() is None
    # Phases add the resident state the program does not hold as arguments.
    upd = next(p for p in r.phases if p.name == "update")
    assert upd.peak == upd.live + r.resident["adam"] + r.resident["engine_params"]
    assert r.longest_fit is not None and r.longest_fit > r.max_tokens


def test_a_budget_that_is_too_small_is_refused_naming_the_program_and_knob(tiny_report) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    r = dataclasses.replace(tiny_report, hbm=int(tiny_report.peak.peak * 0.5))
    msg = r.refusal()
    assert msg is not None and not r.fits
    assert "accumulate[2048]" in msg and KNOBS["accumulate"] in msg


def test_engine_slots_are_the_knob_when_the_kv_cache_is_the_peak() -> None:
    r = plan_run(_cfg("engine.slots=4096"), resolve("cpu-8"), progress=lambda _m: None)
    assert r.peak.name == "rollout"
    r.hbm = int(r.peak.peak * 0.8)
    assert "engine.slots" in (r.refusal() or "")


def test_rows_that_cannot_split_over_the_mesh_are_refused() -> None:
    from prove_jax.plan import PlanError

    with pytest.raises(PlanError, match=r"grpo\.rows_per_micro"):
        plan_run(_cfg("grpo.rows_per_micro=3"), resolve("cpu-8"), progress=lambda _m: None)


def test_cli_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plan.json"
    rc = main(["--config", str(REPO / TINY), "--topology", "cpu-8", "--hbm-gib", "0.01", "--json", str(out),
               "model.mesh=fsdp=-1"])
    text = capsys.readouterr().out
    assert rc == NO_FIT_EXIT
    assert "does not fit cpu-8" in text and "Change:" in text
    data = json.loads(out.read_text())
    assert data["fits"] is False and data["budget_bytes"] == int(0.01 * GiB * 0.9)
    assert main(["--config", str(REPO / TINY), "--topology", "nope-3"]) == 2


def test_tpu_slice_names_resolve_to_libtpu_topologies() -> None:
    pytest.importorskip("libtpu")
    t = resolve("v5p-32")
    assert (t.chips, t.hosts, t.chips_per_host, t.chip.hbm_bytes) == (16, 4, 4, 95 * GiB)
    assert len(t.host_devices(1)) == 4 and all(d.process_index == 1 for d in t.host_devices(1))
    assert resolve("v5e-4").chips == 4
    assert resolve("8xh100").method == "analytic"


def test_the_8b_recipe_is_refused_on_a_v5e_4_without_compiling() -> None:
    pytest.importorskip("libtpu")
    cfg = load(LaunchConfig, str(REPO / "configs/runs/qwen3_8b_prove.yaml"))
    r = plan_run(cfg, resolve("v5e-4"), progress=lambda _m: None)
    assert not r.fits and r.programs == []
    assert "model.mesh" in (r.refusal() or "")
    # f32 params + two Adam moments + a bf16 reference of 8.19 B params over 4 chips.
    assert r.peak.peak == pytest.approx(8.19e9 * (4 + 8 + 2) / 4, rel=0.01)


def test_the_launcher_refuses_a_run_that_does_not_fit_before_any_rollout(tmp_path: Path) -> None:
    from prove_jax.launch import main as launch

    out = tmp_path / "run"
    with pytest.raises(SystemExit) as e:
        launch(["--config", str(REPO / TINY), "stages=[grpo]", "plan.hbm_gib=0.001", f"out_dir={out}",
                "model.mesh=fsdp=-1", "progress=false"])
    assert "does not fit" in str(e.value.code) and "Change:" in str(e.value.code)
    assert not (out / "grpo").exists() and not (out / "data").exists()


def test_the_startup_check_is_skipped_on_cpu_unless_a_budget_is_given() -> None:
    from prove_jax.plan.config import PlanConfig
    from prove_jax.plan.startup import check_startup

    cfg = _cfg()
    assert check_startup(cfg, PlanConfig()) is None  # CPU reports no device memory
    assert check_startup(cfg, PlanConfig(check=False, hbm_gib=0.001)) is None
    report = check_startup(cfg, PlanConfig(hbm_gib=4.0))
    assert report is not None and report.fits and report.topology.chips == 8


def _row_shards(report: Any) -> int:
    """The engine's row shards (data x fsdp of its mesh): the decode layout, not the trainer's.
    The tiny model (2 KV heads) on 8 devices: tensor=2, data=4."""
    mesh = dict(part.split("=") for part in report.model["engine_mesh"].split(","))
    assert mesh == {"data": "4", "fsdp": "1", "tensor": "2"}
    return int(mesh["data"]) * int(mesh["fsdp"])


def test_engine_slots_zero_are_sized_from_the_memory_budget() -> None:
    """``engine.slots: 0`` with the dense cache: the KV cache takes what the rollout phase's budget
    leaves, in whole rows per device, capped at the episodes of one step; a smaller budget gets
    fewer slots."""
    big = plan_run(_cfg("engine.slots=0", "engine.kv=dense"), resolve("cpu-8"), hbm_bytes=2 * GiB,
                   progress=lambda _m: None)
    assert big.engine_slots == 32  # 4 prompts x 8 samples: no use for more
    assert big.fits and any("engine.slots=0" in n for n in big.notes)
    # 512 episodes per step, a budget the KV cache binds: the slots fill it, in whole rows per device,
    # and one more row per device would not fit (counting the programs' fixed scratch as per-slot
    # once left ~2/3 of such a budget unused on a v5p chip)
    small = plan_run(_cfg("engine.slots=0", "engine.kv=dense", "grpo.prompts_per_step=64"), resolve("cpu-8"),
                     hbm_bytes=int(0.06 * GiB), progress=lambda _m: None)
    shards = _row_shards(small)
    assert small.engine_slots % shards == 0 and shards < small.engine_slots < 512
    roll = next(p for p in small.phases if p.name == "rollout")
    kv_per_row_per_device = (small.decode["bytes_full"] - small.resident["engine_params"]) / (small.engine_slots / shards)
    assert roll.peak <= small.budget < roll.peak + kv_per_row_per_device


def test_engine_pages_zero_fill_the_budget_and_slots_follow_the_mean_transcript() -> None:
    """The paged engine (the default): ``engine.pages: 0`` makes the pool what the rollout budget
    holds, whole rows' worth per device, and ``engine.slots: 0`` as many rows of the mean
    transcript (here the tiny run's 2,048-token cap) as the pool holds, capped at the episodes."""
    from prove_jax.plan.planner import mean_transcript

    big = plan_run(_cfg("engine.slots=0"), resolve("cpu-8"), hbm_bytes=2 * GiB, progress=lambda _m: None)
    assert big.engine_slots == 32 and big.fits and any("engine.pages=0" in n for n in big.notes)
    small = plan_run(_cfg("engine.slots=0", "grpo.prompts_per_step=64"), resolve("cpu-8"),
                     hbm_bytes=int(0.06 * GiB), progress=lambda _m: None)
    ecfg = dataclasses.replace(_cfg("engine.slots=0").engine, slots=8, max_len=2048)  # the tiny run's cap
    row_pages, page, shards = ecfg.row_pages, ecfg.page_len, _row_shards(small)
    assert small.engine_pages % (shards * row_pages) == 0 and small.engine_pages >= shards * row_pages
    fit = small.engine_pages * page // (mean_transcript(ecfg) + page)
    assert small.engine_slots == max(shards, fit // shards * shards)
    roll = next(p for p in small.phases if p.name == "rollout")
    kv_per_device = small.decode["bytes_full"] - small.resident["engine_params"]
    one_more_unit = kv_per_device * (shards * row_pages) / small.engine_pages  # a row's pages more per row shard
    assert roll.peak <= small.budget < roll.peak + one_more_unit


def test_a_program_the_tpu_compiler_refuses_is_reported_not_raised() -> None:
    """``CompileTimeHbmOom`` is an answer: the program is reported with the temporaries the
    compiler asked for, so the plan refuses the run naming it instead of crashing."""
    pytest.importorskip("libtpu")
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from prove_jax.plan import programs as P

    topo = resolve("v5e:2x2")
    mesh = Mesh(np.array(topo.devices[:1]), ("x",))
    big = jax.jit(lambda x: jnp.cumsum(jnp.sin(x[:, None] * x[None, :]), axis=0)[::1000])  # 18 GiB scratch
    with P.no_persistent_cache():
        c = P.compile_program("big", big, jax.ShapeDtypeStruct((3 << 14,), jnp.float32,
                                                               sharding=NamedSharding(mesh, PartitionSpec())))
    assert "REFUSED" in c.note and c.temporaries > topo.chip.hbm_bytes and c.arguments == (3 << 14) * 4


def test_engine_slots_sized_too_many_are_shrunk_until_the_rollout_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sizing is an estimate from one small compile; the engine is compiled again at the chosen
    count, and when that does not fit the slots shrink (noted) until the rollout phase does (the
    dense cache, whose size follows the slots)."""
    kv = "dense"
    import prove_jax.plan.planner as planner

    monkeypatch.setattr(planner, "SCRATCH_ROWS", -60)  # under-count each slot's bytes: too many slots
    r = plan_run(_cfg("engine.slots=0", "grpo.prompts_per_step=64", f"engine.kv={kv}"), resolve("cpu-8"),
                 hbm_bytes=int(0.06 * GiB), progress=lambda _m: None)
    assert any("retried at" in n for n in r.notes), r.notes
    roll = next(p for p in r.phases if p.name == "rollout")
    assert roll.peak <= r.budget and r.engine_slots % _row_shards(r) == 0


@pytest.mark.parametrize("quant", [None, "nf4"])
def test_a_lora_run_plans_adapters_adam_and_the_frozen_base(tiny_report, quant) -> None:  # type: ignore[no-untyped-def]
    """With LoRA the planner compiles the run's own programs over adapters (trained params and AdamW
    moments adapter-shaped), the frozen base as the reference argument, and the merging transfer."""
    over = ["lora.rank=2", "lora.alpha=4"] + ([f"lora.quant={quant}"] if quant else [])
    r = plan_run(_cfg(*over), resolve("cpu-8"), progress=lambda _m: None)
    full = tiny_report.resident
    assert set(r.resident) == {"adapters", "adam", "frozen_base", "engine_params"}
    assert 0 < r.resident["adapters"] < 0.1 * full["params"]
    assert 0 <= r.resident["adam"] - 2 * r.resident["adapters"] <= 64  # mu, nu + scalar counts
    # the base: the full model's f32 params, or (nf4) codes + scales with the embeddings/norms in f32
    base_share = r.resident["frozen_base"] / full["params"]
    assert base_share == pytest.approx(1.0) if quant is None else 0.2 < base_share < 0.9
    assert r.resident["engine_params"] == full["engine_params"]  # merged: the plain model in the engine dtype
    xfer = next(p for p in r.programs if p.name == "weight_transfer")
    assert xfer.note.startswith("LoRA merge") and any("LoRA rank 2" in n for n in r.notes)
    upd = {p.name: p for p in r.programs}["update"]
    assert upd.live < 0.5 * {p.name: p for p in tiny_report.programs}["update"].live  # AdamW over adapters only
    assert r.fits


def test_paged_decode_bytes_count_pages_in_whole_blocks() -> None:
    """The planner's decode count for a paged engine: a row reads its pages rounded up to the
    kernel's block of pages (not its tokens, not the cap), the weights once; the dense cache read
    every row up to the fullest row. Qwen3-8B's shapes, 64 rows, one at the 28,768-token cap."""
    from prove_jax.engine.config import EngineConfig
    from prove_jax.models import Qwen3Config
    from prove_jax.plan.planner import paged_decode_bytes

    mc = Qwen3Config(vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_layers=36, num_heads=32,
                     num_kv_heads=8, head_dim=128, dtype="bfloat16", param_dtype="bfloat16")
    weights = 16.4e9
    ecfg = EngineConfig(slots=64, max_len=28768, max_chunk=512, pages=64 * 450)
    d = paged_decode_bytes(mc, ecfg, weights, "tpu")
    kv_tok = 2 * 36 * 8 * 128 * 2
    assert d["kv_bytes_per_token"] == kv_tok and d["block_pages"] == 8
    # all rows at the cap: 28,768 tokens = 450 pages, read in 57 blocks of 8 pages (512 tokens)
    assert d["paged_over_ideal_q100"] == pytest.approx((weights + 64 * 57 * 512 * kv_tok) / (weights + 64 * 28768 * kv_tok))
    assert d["paged_over_ideal_q25"] < 1.3 < d["dense_over_ideal_q25"]
    assert 1 <= d["paged_over_ideal_q50"] < d["dense_over_ideal_q50"] and d["paged_over_ideal_q25"] >= 1
    # one short row: 65 tokens are 2 pages, a whole block of 8 pages (512 tokens) read
    one = paged_decode_bytes(mc, EngineConfig(slots=1, max_len=65, max_chunk=64), 0.0, "xla", fills=(1.0,))
    assert one["paged_over_ideal_q100"] == pytest.approx(512 / 65)
    assert one["slots_fit"] == 1 * 64 * 2 // (min(6244, 65) + 64)  # rows of the mean transcript, capped at max_len
