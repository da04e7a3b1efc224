"""The trainer -> engine weight transfer (``engine.weights.WeightSync``), the sampler's side of it
(engine-dtype weights, release and lazy re-creation of its buffers) and the recipes' meshes.

One process over 8 simulated CPU devices (tests/conftest.py); the several-process path runs in
tests/rl/test_multihost.py and tests/rl/test_multihost_grpo.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from flax import nnx

from prove_jax.config import LaunchConfig, load
from prove_jax.engine import GREEDY, Engine, EngineConfig, Sampler, compiled_program_count
from prove_jax.engine.weights import WeightSync, local_engine_mesh
from prove_jax.models import init_model, make_mesh
from prove_jax.rl.losses import LossConfig
from prove_jax.rl.objectives import GRPOObjective
from prove_jax.rl.step import OptimConfig, Trainer
from tests.rl.rl_testlib import VOCAB, tiny_config

ROOT = Path(__file__).resolve().parents[2]
ENGINE = EngineConfig(slots=2, max_len=96, min_chunk=32, max_chunk=32, prefill_rows=2, decode_block=4)


def _host(tree: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


def _as(dtype: Any, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [a.astype(dtype) for a in arrays]


def _perturbed(params: Any, scale: float) -> Any:
    """New trainer params in the trainer's own shardings (what a train step hands back)."""
    return jax.jit(lambda p: jax.tree.map(lambda x: x * (1 + scale) + scale, p))(params)


def test_cast_and_reshard_run_as_one_program_on_device() -> None:
    """f32 FSDP x TP trainer params -> bf16 on a data-parallel engine layout: exact casts, the
    engine's shardings, the bytes of one bf16 copy, and one compiled program for every call."""
    mesh = make_mesh("fsdp=4,tensor=2")
    cfg = tiny_config()
    params = nnx.split(init_model(cfg, seed=0, mesh=mesh))[1]
    sync = WeightSync(cfg, params, dtype="bfloat16", mesh="data=4,tensor=2")
    assert not sync.zero_copy and sync.one_program and sync.describe()["mode"] == "one program"
    assert sync.config.param_dtype == "bfloat16" and sync.mesh is not None and sync.mesh.shape["data"] == 4
    n_params = sum(x.size for x in jax.tree.leaves(params))
    assert sync.bytes == 2 * n_params

    for step in range(2):
        out = sync(params)
        for got, want, target in zip(jax.tree.leaves(out), _as(ml_dtypes.bfloat16, _host(params)), sync.shardings,
                                     strict=True):
            assert got.dtype == jnp.bfloat16 and got.sharding == target
            assert "fsdp" not in str(got.sharding.spec), "the engine layout is data parallel, not FSDP"
            np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))
        assert sync.last_seconds > 0 and sync.transfers == step + 1
        params = _perturbed(params, 0.01)
    assert sync._program._cache_size() == 1  # same shapes/dtypes/shardings: compiled once


def test_same_dtype_and_layout_is_zero_copy(tmp_path: Path) -> None:
    """An f32 engine on the trainer's mesh keeps decoding from the trainer's own buffers; asking
    for a bf16 engine gets a sync and a bf16 engine model."""
    from prove_jax.pipeline.context import Run

    base = [f"out_dir={tmp_path}", "model.mesh=fsdp=4,tensor=2", "engine.mesh=fsdp=4,tensor=2"]
    cfg = tiny_config()
    trainer = Trainer(init_model(cfg, seed=0, mesh=make_mesh("fsdp=4,tensor=2")), OptimConfig(),
                      GRPOObjective(LossConfig()))
    model, sync = Run(load(LaunchConfig, None, base)).engine_model(trainer)
    assert sync is None
    assert all(a is b for a, b in zip(jax.tree.leaves(nnx.state(model)), jax.tree.leaves(trainer.params),
                                      strict=True))
    direct = WeightSync(cfg, trainer.params)
    assert direct.zero_copy and direct.bytes == 0 and direct(trainer.params) is not None

    model, sync = Run(load(LaunchConfig, None, [*base, "engine.param_dtype=bfloat16"])).engine_model(trainer)
    assert sync is not None and model.config.param_dtype == "bfloat16"
    assert {x.dtype for x in jax.tree.leaves(nnx.state(model))} == {jnp.dtype(jnp.bfloat16)}
    assert model.mesh == trainer.mesh  # same layout, another dtype

    # the eval stage decodes each evaluated model as the rollouts' engine holds it
    run = Run(load(LaunchConfig, None, base))
    assert run.eval_sync(trainer.model()) is None  # the trainer's layout and dtype: the model itself
    scanned = init_model(cfg.replace(scan_layers=True), seed=0, mesh=make_mesh("fsdp=4,tensor=2"))
    sync = run.eval_sync(scanned)
    assert sync is not None and not sync.config.scan_layers  # per-layer KV caches
    bf16 = Run(load(LaunchConfig, None, [*base, "engine.param_dtype=bfloat16"])).eval_sync(trainer.model())
    assert bf16 is not None and bf16.config.param_dtype == "bfloat16"


def test_device_order_mismatch_casts_then_reshards() -> None:
    """A trainer mesh listing the devices in another order than the engine's cannot share one
    jit program with it; the sync casts on the trainer mesh and ``device_put`` reshards."""
    mesh = make_mesh("fsdp=4,tensor=2", devices=jax.devices()[::-1])
    cfg = tiny_config()
    params = nnx.split(init_model(cfg, seed=1, mesh=mesh))[1]
    sync = WeightSync(cfg, params, dtype="bfloat16", mesh="fsdp=4,tensor=2")
    assert not sync.one_program
    out = sync(params)
    for got, want, target in zip(jax.tree.leaves(out), _as(ml_dtypes.bfloat16, _host(params)), sync.shardings,
                                 strict=True):
        assert got.sharding == target
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))


def _generate(sampler: Sampler, prompts: list[list[int]]) -> list[list[int]]:
    async def go() -> list[list[int]]:
        async with Engine(sampler, ENGINE, sampling=dataclasses.replace(GREEDY, max_new_tokens=12)) as eng:
            return [g.ids for g in await eng.generate(prompts)]

    return asyncio.run(go())


PROMPTS = [[int(x) for x in np.random.default_rng(3).integers(0, VOCAB, n)] for n in (7, 40)]


def test_sampler_decodes_the_synced_weights_without_recompiling() -> None:
    """A bf16 engine over an f32 trainer: after ``update_params(sync(new))`` the engine generates
    exactly what an engine built on the new weights does, with the programs it compiled for the
    first weights; weights of another dtype or layout are refused."""
    cfg = tiny_config()
    params = nnx.split(init_model(cfg, seed=2))[1]
    sync = WeightSync(cfg, params, dtype="bfloat16")
    sampler = Sampler(sync.engine_model(params), ENGINE, stop_ids=())
    before = _generate(sampler, PROMPTS)
    programs = compiled_program_count()

    new = _perturbed(params, 0.05)
    sampler.update_params(sync(new))
    after = _generate(sampler, PROMPTS)
    assert compiled_program_count() == programs, "new weights of the same signature recompiled the engine"
    fresh = Sampler(sync.engine_model(new), ENGINE, stop_ids=())
    assert after == _generate(fresh, PROMPTS)
    assert after != before, "the perturbation should change greedy tokens of a random model"

    with pytest.raises(ValueError, match="does not match"):
        sampler.update_params(new)  # f32: the trainer's dtype, not the engine's
    mesh2 = make_mesh("fsdp=2", devices=jax.devices()[:2])
    moved = jax.tree.map(lambda x: jax.device_put(x, jax.sharding.NamedSharding(mesh2, jax.sharding.PartitionSpec())),
                         sync(new))
    with pytest.raises(ValueError, match="sharding"):
        sampler.update_params(moved)
    with pytest.raises(ValueError, match="param_dtype"):  # bf16 weights under an f32 config
        Sampler(nnx.merge(nnx.split(init_model(cfg, seed=2))[0], sync(new)), ENGINE, stop_ids=())


def test_release_frees_the_cache_and_the_next_use_recreates_it() -> None:
    cfg = tiny_config()
    params = nnx.split(init_model(cfg, seed=4))[1]
    sampler = Sampler(nnx.merge(nnx.split(init_model(cfg, seed=4))[0], params), ENGINE, stop_ids=())
    first = _generate(sampler, PROMPTS)
    old = jax.tree.leaves((sampler.cache, sampler.state))
    sampler.release()
    assert not sampler.buffers_live and all(x.is_deleted() for x in old)
    assert _generate(sampler, PROMPTS) == first  # re-created empty, same tokens
    assert sampler.buffers_live

    sampler.release(params=True)
    with pytest.raises(RuntimeError, match="update_params"):
        sampler.decode(1)
    sampler.update_params(params)
    assert _generate(sampler, PROMPTS) == first


def _mesh_specs() -> dict[str, str]:
    """Every shipped recipe's and model file's ``model.mesh`` (the recipes include the model files)."""
    from prove_jax.config import read_yaml

    specs = {p.name: load(LaunchConfig, p).model.mesh for p in sorted((ROOT / "configs" / "runs").glob("*.yaml"))}
    for p in sorted((ROOT / "configs" / "models").glob("*.yaml")):
        specs[p.name] = read_yaml(p)["model"]["mesh"]
    return specs


@pytest.mark.parametrize("n_devices", [8, 16, 32])
def test_recipe_meshes_fit_8_gpus_and_pods(n_devices: int) -> None:
    """One recipe runs on 8 GPUs or a 16/32-chip pod: each mesh spec resolves over that many
    devices (make_mesh's own fill logic; the CPU devices are repeated to stand for a pod's chips,
    which make_mesh does not check), and on a pod host's 4 local chips for the per-host engine."""
    devices = (jax.devices() * 4)[:n_devices]
    specs = _mesh_specs()
    assert len(specs) >= 9
    for name, spec in specs.items():
        if not spec:  # tiny_cpu: one device
            continue
        mesh = make_mesh(spec, devices=devices)
        assert int(np.prod(list(mesh.shape.values()))) == n_devices, name
        assert mesh.shape["tensor"] == 2 and mesh.shape["fsdp"] == n_devices // 2, (name, dict(mesh.shape))
        host = local_engine_mesh(spec, jax.devices()[:4])
        assert dict(host.shape) == {"data": 1, "fsdp": 2, "tensor": 2}, name


def test_the_default_engine_layout_is_for_decode(tmp_path: Path) -> None:
    """``engine.mesh`` empty: tensor parallel over the devices the KV heads split over, data
    parallel over the rest, never the trainer's fsdp (whose weights a decode step would gather);
    one device keeps the trainer's placement. The 8B recipe on a 4-chip host: tensor=4."""
    from prove_jax.engine.weights import decode_layout
    from prove_jax.pipeline.context import Run

    cfg = tiny_config()  # 4 heads, 2 KV heads
    assert decode_layout(cfg, 8) == {"data": 4, "fsdp": 1, "tensor": 2}
    assert decode_layout(cfg, 1) is None
    from prove_jax.models.config import FAMILY_CLASSES

    qwen8b = load(LaunchConfig, ROOT / "configs/runs/qwen3_8b_prove.yaml").model
    big = FAMILY_CLASSES[qwen8b.family](**qwen8b.init)
    assert decode_layout(big, 4) == {"data": 1, "fsdp": 1, "tensor": 4}
    assert decode_layout(big, 16) == {"data": 2, "fsdp": 1, "tensor": 8}

    trainer = Trainer(init_model(cfg, seed=0, mesh=make_mesh("fsdp=4,tensor=2")), OptimConfig(),
                      GRPOObjective(LossConfig()))
    model, sync = Run(load(LaunchConfig, None, [f"out_dir={tmp_path}", "model.mesh=fsdp=4,tensor=2"])
                      ).engine_model(trainer)
    assert sync is not None and dict(model.mesh.shape) == {"data": 4, "fsdp": 1, "tensor": 2}
    q = model.layers[0].attn.q_proj[...]  # [heads, head_dim, embed]: the trainer shards embed over fsdp
    assert q.sharding.spec == jax.sharding.PartitionSpec("tensor"), "weights replicated but for tensor"
    assert _generate(Sampler(model, ENGINE, stop_ids=[]), PROMPTS) == _generate(
        Sampler(trainer.model(), ENGINE, stop_ids=[]), PROMPTS)


def test_a_sync_frees_the_engines_previous_weights() -> None:
    """The engine's first copy (the stage still holds the model it was built from) is deleted
    at the first sync, not left to the garbage collector: an update never runs beside two copies."""
    from prove_jax.rl.grpo import GRPOContext

    cfg = tiny_config()
    trainer = Trainer(init_model(cfg, seed=0), OptimConfig(), GRPOObjective(LossConfig()))
    sync = WeightSync(cfg, trainer.sync_source, dtype="bfloat16")
    first = sync.engine_model(trainer.sync_source)
    engine = Engine(Sampler(first, ENGINE, stop_ids=()), ENGINE)
    ctx = GRPOContext(trainer=trainer, engine=engine, pool=None, template=None, tokenizer=None,  # type: ignore[arg-type]
                      episode=None, reward=None, max_len=96, to_engine=sync)  # type: ignore[arg-type]
    old = jax.tree.leaves(nnx.state(first))
    ctx.sync_engine(False)
    assert all(x.is_deleted() for x in old)
    assert not any(x.is_deleted() for x in jax.tree.leaves(engine.sampler.params))
    assert not any(x.is_deleted() for x in jax.tree.leaves(trainer.params)), "the trainer's own weights stay"


def test_a_scanned_trainer_feeds_a_per_layer_engine_that_decodes_the_same_tokens() -> None:
    """The engine always decodes an unscanned model (one KV cache per layer: a scanned decode's
    loop-carried stacked cache gets its own layout on TPU and is copied every step): the sync
    splits the trainer's stacked params per layer, exactly, and greedy decoding from the split
    model gives the scanned model's tokens."""
    mesh = make_mesh("fsdp=4,tensor=2")
    cfg = tiny_config().replace(scan_layers=True)
    model = init_model(cfg, seed=3, mesh=mesh)
    params = nnx.split(model)[1]
    sync = WeightSync(cfg, params)
    assert not sync.config.scan_layers and not sync.zero_copy, "a stacked trainer cannot be decoded in place"
    engine_params = sync(params)
    stacked = params["layers"]["attn"]["q_proj"][...]
    for i in range(cfg.num_layers):
        np.testing.assert_array_equal(np.asarray(engine_params["layers"][i]["attn"]["q_proj"][...]),
                                      np.asarray(stacked[i]))
    engine_model = sync.engine_model(params)
    assert sync.bytes == 4 * sum(x.size for x in jax.tree.leaves(params))

    ref = _generate(Sampler(model, ENGINE, stop_ids=[]), PROMPTS)
    assert _generate(Sampler(engine_model, ENGINE, stop_ids=[]), PROMPTS) == ref
    with pytest.raises(ValueError, match="the trainer stacks 2 layers"):
        WeightSync(cfg.replace(scan_layers=False, num_layers=cfg.num_layers + 1), params)
