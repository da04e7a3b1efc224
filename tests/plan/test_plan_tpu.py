"""One program at the paper's scale, compiled for a TPU pod without one: the GRPO accumulate step of a
Qwen3-8B-shaped model (2 of its 36 layers under ``scan``, so the compile fits the suite's budget)
for 16 TPU v5p chips at 16k tokens, one row per chip, with the KL reference forward.

Before splash attention this program's attention alone needed ~48 GiB of temporaries per chip at
16k tokens (XLA materialises ``[heads, S, S]`` scores); at the recipe's 28.7k cap the TPU
compiler refused it outright. The full-depth figures come from ``benchmarks/bench_plan.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prove_jax.config import LaunchConfig, load
from prove_jax.plan import programs as P
from prove_jax.plan.planner import _objective, model_shape
from prove_jax.plan.topology import GiB, resolve

REPO = Path(__file__).resolve().parents[2]
TOKENS = 16384


def test_qwen3_8b_accumulate_at_16k_fits_a_v5p_chip_with_splash_attention() -> None:
    pytest.importorskip("libtpu")
    cfg = load(LaunchConfig, str(REPO / "configs/runs/qwen3_8b_prove.yaml"),
               ["model.mesh=fsdp=-1", "model.init.num_layers=2", "grpo.rows_per_micro=4"])
    topo = resolve("v5p:2x2x4")
    mc = model_shape(cfg)
    assert (mc.hidden_size, mc.vocab_size, mc.num_heads, mc.num_kv_heads, mc.scan_layers, mc.remat) == \
        (4096, 151936, 32, 8, True, "full")
    mesh = P.trainer_mesh(cfg.model.mesh, topo)
    assert dict(mesh.shape) == {"data": 1, "fsdp": 16, "tensor": 1}
    train = P.build_train_side(mc, mesh, _objective(cfg, True), cfg.grpo.optim, reference=True, reference_dtype=None)
    rows = cfg.grpo.rows_per_micro * topo.hosts  # 4 per process x 4 hosts: one row per chip
    batch = P.micro_batch(train, rows, TOKENS, mc.sharding_rules, True)
    acc = P.accumulator(train, batch)
    lowered = train.programs.accumulate.lower(train.static, train.params, train.ref, acc, batch,
                                              P.denominators(train))
    assert "tpu_custom_call" in lowered.as_text()  # the Pallas splash kernels, not XLA's dense path
    with P.no_persistent_cache():
        mem = lowered.compile().memory_analysis()
    live = mem.argument_size_in_bytes + mem.output_size_in_bytes - mem.alias_size_in_bytes + mem.temp_size_in_bytes
    peak = live + P.nbytes_per_device(train.opt_state)
    print(f"accumulate 16 x {TOKENS}: temp {mem.temp_size_in_bytes / GiB:.2f} GiB, peak {peak / GiB:.2f} GiB per chip")
    assert mem.temp_size_in_bytes < 12 * GiB  # XLA attention alone: ~48 GiB here
    assert peak < topo.chip.hbm_bytes * 0.9


@pytest.mark.parametrize("kv", ["dense", "paged"])
def test_the_engine_decodes_per_layer_caches_in_place_on_tpu(kv: str) -> None:
    """The engine's decode of a scanned recipe (4 of Qwen3-8B's layers, 16 slots x 8k, bf16, 4 chips
    of one v5p host) holds its KV cache once: temporaries stay a small fraction of the cache. A
    scanned decode carried the stacked cache through the layer loop, where the TPU compiler gave it
    another layout and copied it in and out every step (temporaries ~1.1x the cache). The paged
    pool (the TPU kernel per shard) is written in place the same way."""
    pytest.importorskip("libtpu")
    from prove_jax.engine.config import EngineConfig

    cfg = load(LaunchConfig, str(REPO / "configs/runs/qwen3_8b_prove.yaml"), ["model.init.num_layers=4"])
    mc = model_shape(cfg)
    assert mc.scan_layers
    topo = resolve("v5p:2x2x4")
    side = P.build_engine_side(mc, P.engine_mesh("tensor=4", topo.host_devices(0)),
                               EngineConfig(slots=16, max_len=8192, decode_block=8, max_chunk=512, kv=kv), "bfloat16")
    assert (side.lowered.kernel is None) == (kv == "dense")
    if kv == "paged":
        assert side.lowered.kernel.name == "tpu"
    kv_b = P.nbytes_per_device(side.cache.kv if kv == "paged" else (side.cache.k, side.cache.v))
    with P.no_persistent_cache():
        dec = P.compile_decode(side)
    print(f"decode ({kv}): KV {kv_b / GiB:.2f} GiB, temporaries {dec.temporaries / GiB:.2f} GiB per chip")
    assert kv_b >= 0.5 * GiB and dec.aliased >= kv_b  # the cache is donated and written in place
    assert dec.temporaries < 0.2 * kv_b


def test_the_weight_transfer_compiles_for_a_pod_whose_trainer_mesh_interleaves_hosts() -> None:
    """On a 4-host v5p slice the trainer's topology-aware mesh lists devices in another order than
    the hosts' stacked engine meshes; the transfer is then the cast in the trainer's layout (jit
    needs one device order) followed by a device_put, as ``WeightSync`` runs it. Planning it with
    the engine target as the output once failed after a 20-minute plan."""
    pytest.importorskip("libtpu")
    cfg = load(LaunchConfig, str(REPO / "configs/runs/qwen3_8b_prove.yaml"), ["model.init.num_layers=2"])
    mc = model_shape(cfg)
    topo = resolve("v5p:2x2x4")
    train = P.build_train_side(mc, P.trainer_mesh(cfg.model.mesh, topo), _objective(cfg, True), cfg.grpo.optim,
                               reference=False, reference_dtype=None)
    with P.no_persistent_cache():
        xfer = P.compile_transfer(train, mc, P.transfer_mesh(cfg.model.mesh, topo), "bfloat16")
    assert "device_put" in xfer.note
    assert xfer.outputs == pytest.approx(P.nbytes_per_device(train.params) / 2, rel=0.01)  # bf16, trainer layout
