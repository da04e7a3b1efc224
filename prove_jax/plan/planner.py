"""Plan a run: compile its programs for a topology, add up what is live per device in each phase
of a GRPO step, and say whether it fits the chip's HBM — naming the program and the knob when
it does not.

A phase's peak per device = the resident state not among the program's own arguments + the
program's ``live`` bytes (arguments + outputs not aliased to inputs + temporaries):

* ``rollout``: train state + reference + decode/prefill (engine params, KV cache, slot state);
* ``update``: accumulate (params, reference, f32 accumulator, micro-batch) + AdamW moments +
  engine params (+ the KV cache when it is not released: the async mode keeps it);
* ``apply``: the update program (train state, accumulator) + reference + engine params;
* ``transfer``: train state + reference + the transfer program (old engine params released).

The longest transcript that fits: temporaries of the accumulate program are measured at the
binding bucket and at half of it; the planner extrapolates linearly in tokens (exact enough with
remat + fused kernels: activations are linear in T) and the KV cache grows with the engine's
capacity. It is reported as an estimate.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from prove_jax.engine.config import EngineConfig
from prove_jax.engine.weights import engine_mesh_spec
from prove_jax.models import ModelConfig
from prove_jax.models.config import FAMILY_CLASSES
from prove_jax.plan import programs as P
from prove_jax.plan.topology import GiB, Topology
from prove_jax.rl.batch import length_buckets

if TYPE_CHECKING:
    from prove_jax.config import LaunchConfig

KNOBS = {
    "accumulate": "grpo.rows_per_micro (fewer rows per micro-batch), model.attention_impl (a fused kernel), "
                  "model.remat=full, episode.max_tokens_limit",
    "update": "model.mesh (shard the train state over more chips) or a larger topology",
    "decode": "engine.slots (fewer concurrent rows) or engine.max_chunk; the KV cache is slots x max_len",
    "prefill": "engine.prefill_rows or engine.max_chunk",
    "weight_transfer": "engine.param_dtype=bfloat16, model.mesh",
    "resident": "model.mesh (more fsdp), grpo.reference_dtype=bfloat16, engine.param_dtype=bfloat16, "
                "or a larger topology",
}


class PlanError(ValueError):
    """The run cannot be planned as configured (a shape or layout that cannot run at all)."""


@dataclasses.dataclass
class Phase:
    name: str
    program: str
    resident: int
    live: int

    @property
    def peak(self) -> int:
        return self.resident + self.live


@dataclasses.dataclass
class PlanReport:
    run: str
    topology: Topology
    method: str
    model: dict[str, Any]
    programs: list[P.Compiled]
    phases: list[Phase]
    hbm: int
    headroom: float
    resident: dict[str, int]
    max_tokens: int
    longest_fit: int | None
    flops_per_step: float
    step_s_at_40: float
    decode: dict[str, float]
    transfer: dict[str, float]
    notes: list[str] = dataclasses.field(default_factory=list)
    engine_slots: int = 0  # the engine's slots as planned (sized from the budget when engine.slots is 0)
    engine_pages: int = 0  # a paged engine's pool as planned (sized from the budget when engine.pages is 0)

    @property
    def budget(self) -> int:
        return int(self.hbm * (1.0 - self.headroom))

    @property
    def peak(self) -> Phase:
        return max(self.phases, key=lambda p: p.peak)

    @property
    def fits(self) -> bool:
        return self.peak.peak <= self.budget

    def refusal(self) -> str | None:
        """None when it fits, else which program does not fit and the knob to change."""
        if self.fits:
            return None
        ph = self.peak
        kind = ph.program.split("[")[0]
        state = sum(self.resident.values())
        knob = KNOBS["resident"] if state > self.budget else KNOBS.get(kind, KNOBS["resident"])
        return (f"{self.run} does not fit {self.topology.name}: the {ph.name} phase ({ph.program}) needs "
                f"{ph.peak / GiB:.1f} GiB per device, budget {self.budget / GiB:.1f} GiB "
                f"(HBM {self.hbm / GiB:.1f} GiB less {self.headroom:.0%} headroom). Change: {knob}.")


def model_shape(cfg: LaunchConfig) -> ModelConfig:
    """The model's architecture from ``model.init`` (the recipe's shape: no weights needed), or
    from ``model.hf_dir``'s config.json when it exists."""
    from pathlib import Path

    m = cfg.model
    runtime: dict[str, Any] = {"dtype": m.dtype, "param_dtype": m.param_dtype, "remat": m.remat,
                               "scan_layers": m.scan_layers}
    impl = getattr(m, "attention_impl", None)
    if impl:
        runtime["attention_impl"] = impl
    if "vocab_size" in m.init:
        return FAMILY_CLASSES[m.family](**m.init, **runtime)
    if m.hf_dir and (Path(m.hf_dir) / "config.json").exists():
        return ModelConfig.from_hf_dir(m.hf_dir, **runtime)
    if not m.hf_dir:  # a random init: the vocabulary is the tiny tokenizer's, padded as the run pads it
        from prove_jax.model_record import VOCAB_MULTIPLE

        vocab = math.ceil(cfg.tokenizer.vocab_size / VOCAB_MULTIPLE) * VOCAB_MULTIPLE
        return FAMILY_CLASSES[m.family](vocab_size=vocab, **{"tie_word_embeddings": False, **m.init}, **runtime)
    raise PlanError("model.init must give the architecture (vocab_size, hidden_size, ...) to plan without "
                    "weights; configs/models/*.yaml carry it for the paper's models")


def param_count(mc: ModelConfig) -> int:
    e, m, v, layers = mc.hidden_size, mc.intermediate_size, mc.vocab_size, mc.num_layers
    attn = e * mc.head_dim * (2 * mc.num_heads + 2 * mc.num_kv_heads)
    per_layer = attn + 3 * e * m + 2 * e
    return layers * per_layer + v * e * (1 if mc.tie_word_embeddings else 2) + e


def model_flops(mc: ModelConfig, rows: int, length: int, with_ref: bool) -> float:
    """Model FLOPs of one GRPO update over ``rows`` transcripts of ``length`` tokens: 6·N·T for
    fwd+bwd of the matmuls (the head included, the embedding lookup not), the causal attention
    products, and a forward (2·N·T + attention/3) for the reference. Remat is not counted."""
    n = param_count(mc) - mc.vocab_size * mc.hidden_size * (0 if mc.tie_word_embeddings else 1)
    t = rows * length
    attn = 6 * mc.num_layers * mc.num_heads * mc.head_dim * rows * length**2  # 12/2 causal
    train = 6 * n * t + attn
    return train + ((2 * n * t + attn / 3) if with_ref else 0.0)


def engine_config(cfg: LaunchConfig, max_len: int) -> EngineConfig:
    """The run's engine section at ``max_len`` (and one slot per chip to start from when ``slots: 0``)."""
    return dataclasses.replace(cfg.engine, slots=cfg.engine.slots or 1, max_len=max_len)


def _engine_dtype(cfg: LaunchConfig) -> str:
    return cfg.engine.param_dtype or cfg.model.dtype


def plan_run(cfg: LaunchConfig, topo: Topology, *, all_buckets: bool = False, headroom: float = 0.1,
             hbm_bytes: int | None = None, progress: Any = print) -> PlanReport:
    """Compile (or, for analytic targets, estimate) every program of ``cfg`` for ``topo``."""
    import contextlib

    guard = P.no_persistent_cache() if topo.platform == "tpu" else contextlib.nullcontext()
    with guard:
        return _plan(cfg, topo, all_buckets=all_buckets, headroom=headroom, hbm_bytes=hbm_bytes, progress=progress)


def _plan(cfg: LaunchConfig, topo: Topology, *, all_buckets: bool, headroom: float, hbm_bytes: int | None,
          progress: Any) -> PlanReport:
    mc = model_shape(cfg)
    grpo = "grpo" in cfg.stages
    max_tokens = cfg.episode.max_tokens or cfg.episode.max_tokens_limit
    max_tokens = min(max_tokens, mc.max_position_embeddings)
    buckets = length_buckets(max_tokens)
    rows_local = cfg.grpo.rows_per_micro if grpo else cfg.sft.rows_per_micro
    rows = rows_local * topo.hosts
    n_params = param_count(mc)
    hbm = hbm_bytes or topo.chip.hbm_bytes
    with_ref = grpo and cfg.grpo.loss.kl_coef > 0
    edt = _engine_dtype(cfg)
    ecfg = engine_config(cfg, max_tokens)
    notes: list[str] = []
    if not topo.compiled:
        if cfg.lora.enabled:
            raise PlanError("lora: analytic (GPU) targets model full fine-tuning only; plan LoRA on a compiled "
                            "target (a TPU topology, or this machine's devices)")
        return _analytic(cfg, topo, mc, rows, buckets[-1], max_tokens, headroom, hbm, with_ref, edt, ecfg)

    tmesh = P.trainer_mesh(cfg.model.mesh, topo)
    batch_shards = tmesh.shape["data"] * tmesh.shape["fsdp"]
    if rows % batch_shards:
        raise PlanError(f"a micro-batch of {rows} rows ({rows_local} per process x {topo.hosts} processes) does not "
                        f"split over data x fsdp = {batch_shards} devices: set grpo.rows_per_micro to a multiple "
                        f"of {math.ceil(batch_shards / topo.hosts)}")
    objective = _objective(cfg, grpo)
    optim = cfg.grpo.optim if grpo else cfg.sft.optim
    lora = cfg.lora if cfg.lora.enabled else None
    train = P.build_train_side(mc, tmesh, objective, optim, reference=with_ref,
                               reference_dtype=getattr(cfg.grpo, "reference_dtype", None), lora=lora)
    state_b = sum(P.nbytes_per_device(t) for t in (train.params, train.opt_state, train.ref) if t is not None)
    if state_b > hbm * (1.0 - headroom):  # no program can fit: say so without compiling anything
        return PlanReport(
            run=cfg.name, topology=topo, method=topo.method + ", state only",
            model={"family": mc.family, "params": n_params, "mesh": _describe(tmesh)}, programs=[],
            phases=[Phase("resident", "train state", state_b, 0)], hbm=hbm, headroom=headroom,
            resident={"params+adam+reference": state_b}, max_tokens=max_tokens, longest_fit=0,
            flops_per_step=0.0, step_s_at_40=0.0, decode={}, transfer={},
            notes=["the train state alone exceeds the budget: nothing was compiled"])
    compiled: list[P.Compiled] = []
    todo = list(buckets) if all_buckets else sorted({buckets[-1], _half(buckets)})
    accs: dict[int, P.Compiled] = {}
    for length in reversed(todo):
        progress(f"compiling accumulate at {rows} x {length} ...")
        accs[length] = P.compile_accumulate(train, rows, length, mc.sharding_rules, grpo)
        compiled.append(accs[length])
    progress("compiling update ...")
    upd = P.compile_apply(train)
    compiled.append(upd)

    espec = engine_mesh_spec(cfg.engine.mesh, mc, len(topo.host_devices(0)))
    emesh = P.engine_mesh(espec, topo.host_devices(0))
    if grpo and cfg.engine.slots == 0:
        ecfg = _auto_slots(cfg, mc, emesh, ecfg, edt, train, topo, hbm * (1.0 - headroom), progress, notes)
    eside = P.build_engine_side(mc, emesh, ecfg, edt) if grpo else None
    dec = pre = xfer = None
    if eside is not None:
        shards = emesh.shape["data"] * emesh.shape["fsdp"]
        while True:  # state_b: the train state resident through the rollout phase (computed above)
            progress(f"compiling engine decode and prefill at {ecfg.slots} slots ...")
            dec, pre = P.compile_decode(eside), P.compile_prefill(eside)
            over = state_b + max(dec.live, pre.live) - hbm * (1.0 - headroom)
            pool_left = ecfg.paged and cfg.engine.pages == 0 and ecfg.pages > ecfg.row_pages
            if cfg.engine.slots != 0 or over <= 0 or (ecfg.slots <= shards and not pool_left):
                break  # fits, fixed by the user (the phase check names the knob), or nothing to shrink
            slots = max(shards, int(ecfg.slots * 0.85) // shards * shards)
            if ecfg.paged and cfg.engine.pages == 0:  # the pool is what fills the budget: it shrinks too
                pages = max(ecfg.row_pages, int(ecfg.pages * 0.85))
                notes.append(f"engine.pages=0: {ecfg.pages} pages compiled {over / GiB:.1f} GiB over; retried at {pages}")
                ecfg = dataclasses.replace(ecfg, pages=pages)
            notes.append(f"engine.slots=0: {ecfg.slots} slots compiled {over / GiB:.1f} GiB over; retried at {slots}")
            ecfg = dataclasses.replace(ecfg, slots=slots)
            eside = P.build_engine_side(mc, emesh, ecfg, edt)
        if grpo and ecfg.paged and cfg.engine.pages == 0 and over <= 0:
            ecfg, eside, dec, pre = _grow_pool(mc, emesh, ecfg, edt, eside, dec, pre, -over, shards,
                                               _slot_cap(cfg, topo, shards), progress, notes)
        progress("compiling weight transfer ...")
        xfer = P.compile_transfer(train, mc, P.transfer_mesh(espec, topo), edt)
        compiled += [dec, pre, xfer]

    params_b = P.nbytes_per_device(train.params)
    opt_b = P.nbytes_per_device(train.opt_state)
    ref_b = P.nbytes_per_device(train.ref) if train.ref is not None else 0
    eng_b = P.nbytes_per_device(eside.leaves) if eside else 0
    kv_b = P.nbytes_per_device((eside.cache, eside.state)) if eside else 0
    resident = {"params": params_b, "adam": opt_b, "reference": ref_b, "engine_params": eng_b}
    if lora is not None:  # the trained params are the adapters; the frozen base is also the reference
        resident = {"adapters": params_b, "adam": opt_b, "frozen_base": ref_b, "engine_params": eng_b}
        notes.append(f"LoRA rank {lora.rank} on {','.join(lora.target_names)}"
                     + (f" over a {lora.quant} base" if lora.quant else "") + ": params and AdamW are the "
                     "adapters'; the frozen base is the KL reference; the engine gets merged weights")
    kv_released = grpo and not cfg.grpo.async_rollouts
    top = accs[buckets[-1]]
    phases = [Phase("update", top.name, opt_b + eng_b + (0 if kv_released else kv_b), top.live),
              Phase("apply", upd.name, ref_b + eng_b + (0 if kv_released else kv_b), upd.live)]
    if dec is not None and pre is not None and xfer is not None:
        biggest = max(dec, pre, key=lambda c: c.live)
        phases.insert(0, Phase("rollout", biggest.name, params_b + opt_b + ref_b, biggest.live))
        phases.append(Phase("transfer", xfer.name, opt_b + ref_b, xfer.live))
    if not kv_released and grpo:
        notes.append("async rollouts keep the KV cache through the update")
    longest = _longest_fit(accs, buckets, phases, hbm, headroom, kv_b, ecfg, eside is not None)
    steps_rows = (cfg.grpo.prompts_per_step * cfg.grpo.group_size) if grpo else cfg.sft.rows_per_step
    flops = model_flops(mc, steps_rows, max_tokens, with_ref)
    report = PlanReport(
        run=cfg.name, topology=topo, method=topo.method,
        model={"family": mc.family, "params": n_params, "layers": mc.num_layers, "attention_impl": mc.attention_impl,
               "remat": mc.remat, "scan_layers": mc.scan_layers, "mesh": _describe(tmesh),
               "engine_mesh": _describe(emesh), "rows_per_micro_global": rows},
        programs=compiled, phases=phases, hbm=hbm, headroom=headroom, resident=resident, max_tokens=max_tokens,
        longest_fit=longest, flops_per_step=flops,
        step_s_at_40=flops / (0.4 * topo.chip.peak_flops * topo.chips),
        decode=_decode_roofline(mc, ecfg, topo, eng_b, kv_b, _kernel_name(eside)) if eside else {},
        transfer=_transfer_figures(n_params, edt, topo, xfer), notes=notes, engine_slots=ecfg.slots,
        engine_pages=ecfg.pool_pages if ecfg.paged else 0)
    if eside is not None and eside.lowered.kernel is not None:
        k = eside.lowered.kernel
        notes.append(f"engine attention (decode and prefill): {k.name} ({k.reason})")
    return report


def _auto_slots(cfg: LaunchConfig, mc: ModelConfig, emesh: Any, ecfg: EngineConfig, edt: str, train: P.TrainSide,
                topo: Topology, budget: float, progress: Any, notes: list[str]) -> EngineConfig:
    """``engine.slots: 0``: as many slots as the rollout phase's budget holds. The engine programs
    are compiled at one row per device (``shards`` slots). Of what they hold beyond the engine's
    weights, the KV cache and slot state grow with the slot count (exact, from their shapes) plus
    each row's sampling scratch (a few f32 vocabulary rows); the rest (prefill's gathered rows,
    gathered weights) is fixed. Counting everything as per-slot sized a 4B recipe's engine at 26
    slots where ~3x fit. The caller compiles the engine at the chosen count and shrinks it if the
    rollout phase does not fit after all. Rounded down to a multiple of the batch shards and
    capped at the episodes one process plays per step."""
    shards = emesh.shape["data"] * emesh.shape["fsdp"]
    probe = dataclasses.replace(ecfg, slots=shards)
    side = P.build_engine_side(mc, emesh, probe, edt)
    progress(f"sizing the KV cache: engine programs at {shards} slots ...")
    live = max(P.compile_decode(side).live, P.compile_prefill(side).live)
    eng_b = P.nbytes_per_device(side.leaves)
    resident = sum(P.nbytes_per_device(t) for t in (train.params, train.opt_state, train.ref) if t is not None)
    tensor = emesh.shape["tensor"] if mc.vocab_size % emesh.shape["tensor"] == 0 else 1  # logits split over vocab
    per_unit = P.nbytes_per_device((side.cache, side.state)) + SCRATCH_ROWS * mc.vocab_size * 4 // tensor
    fixed = max(0, live - eng_b - per_unit)
    units = int((budget - resident - eng_b - fixed) // per_unit)
    episodes = max(shards, cfg.grpo.prompts_per_step * cfg.grpo.group_size // topo.hosts)
    slots = max(shards, min(units * shards, _slot_cap(cfg, topo, shards)))
    if ecfg.paged and cfg.engine.pages == 0:
        # a paged row costs its live tokens: the budget's KV memory as pages, and as many slots as
        # rows of the mean transcript fill it (at most the episodes). A unit of pages costs only
        # the pool's bytes; the slots' state and sampling scratch follow the slots, so the pool
        # gets what the slots leave (two passes: the slots depend on the pool)
        kv_unit = P.nbytes_per_device(side.cache.kv)
        slot_unit = per_unit - kv_unit
        mean = mean_transcript(probe)
        slots = _slot_cap(cfg, topo, shards)
        for _ in range(2):
            units = int((budget - resident - eng_b - fixed - slot_unit * (slots // shards)) // kv_unit)
            pages = max(probe.row_pages, units * shards * probe.row_pages)
            fit = pages * ecfg.page_len // (mean + ecfg.page_len)
            slots = max(shards, min(fit // shards * shards, _slot_cap(cfg, topo, shards)))
        notes.append(f"engine.pages=0: {pages} pages of {ecfg.page_len} tokens sized from the budget (the memory "
                     f"of {max(units * shards, 0)} dense rows); engine.slots=0: {slots} slots (room for {fit} rows of "
                     f"the {mean}-token mean transcript, {episodes} episodes per process per step)")
        return dataclasses.replace(ecfg, slots=slots, pages=pages)
    notes.append(f"engine.slots=0: {slots} slots sized from the budget (room for {max(units * shards, 0)}, "
                 f"{episodes} episodes per process per step)")
    return dataclasses.replace(ecfg, slots=slots)


def _slot_cap(cfg: LaunchConfig, topo: Topology, shards: int) -> int:
    """The most slots worth having: one process's episodes per step, in whole row shards."""
    episodes = max(shards, cfg.grpo.prompts_per_step * cfg.grpo.group_size // topo.hosts)
    return -(-episodes // shards) * shards


def _grow_pool(mc: ModelConfig, emesh: Any, ecfg: EngineConfig, edt: str, eside: Any, dec: Any, pre: Any,
               room: float, shards: int, cap: int, progress: Any, notes: list[str]) -> tuple[Any, Any, Any, Any]:
    """``engine.pages=0``: the sizing estimates from one small compile; when the compiled engine
    leaves room for more whole rows' pages (one per row shard), they are added and compiled
    once more, kept only if the rollout still fits."""
    unit = shards * ecfg.row_pages  # one more row's pages per row shard: the estimate's rounding
    per_unit = P.nbytes_per_device(eside.cache.kv) * unit / max(ecfg.pool_pages, 1)
    if per_unit <= 0 or room < per_unit:
        return ecfg, eside, dec, pre
    extra = unit
    grown = dataclasses.replace(ecfg, pages=ecfg.pool_pages + extra)
    fit = grown.pool_pages * ecfg.page_len // (mean_transcript(grown) + ecfg.page_len)
    grown = dataclasses.replace(grown, slots=max(ecfg.slots, min(fit // shards * shards, cap)))
    progress(f"compiling engine decode and prefill with {grown.pages} pages ...")
    side = P.build_engine_side(mc, emesh, grown, edt)
    d, p = P.compile_decode(side), P.compile_prefill(side)
    if max(d.live, p.live) - max(dec.live, pre.live) > room:
        return ecfg, eside, dec, pre
    notes.append(f"engine.pages=0: {ecfg.pool_pages} pages left room for {extra} more ({grown.pages}, "
                 f"{grown.slots} slots)")
    return grown, side, d, p


SCRATCH_ROWS = 4
"""f32 vocabulary rows of sampling scratch per slot the sizing counts (logits, probabilities,
the cumulative distribution, top-k candidates): ~2.4 MB per slot at Qwen's 152k vocabulary,
over the tensor axis when the logits split over it."""


def _half(buckets: tuple[int, ...]) -> int:
    target = buckets[-1] // 2
    return min(buckets, key=lambda b: abs(b - target))


def _objective(cfg: LaunchConfig, grpo: bool) -> Any:
    from prove_jax.rl.objectives import GRPOObjective, SFTObjective

    return GRPOObjective(cfg.grpo.loss, cfg.grpo.sampling.temperature) if grpo else SFTObjective()


def _describe(mesh: Any) -> str:
    return ",".join(f"{a}={mesh.shape[a]}" for a in mesh.axis_names)


def _longest_fit(accs: dict[int, P.Compiled], buckets: tuple[int, ...], phases: list[Phase], hbm: int,
                 headroom: float, kv_b: int, ecfg: EngineConfig, engine: bool) -> int | None:
    """Longest transcript whose update and rollout phases fit, linear in tokens between the two
    compiled accumulate points (and KV bytes proportional to the engine's capacity)."""
    budget = hbm * (1.0 - headroom)
    lengths = sorted(accs)
    if len(lengths) < 2:
        return None
    (t0, c0), (t1, c1) = (lengths[0], accs[lengths[0]]), (lengths[-1], accs[lengths[-1]])
    slope = (c1.live - c0.live) / max(1, t1 - t0)
    upd = next(p for p in phases if p.name == "update")
    base = upd.resident + c1.live - slope * t1
    fit_update = (budget - base) / slope if slope > 0 else float("inf")
    fit_roll = float("inf")
    roll = next((p for p in phases if p.name == "rollout"), None)
    if engine and roll is not None and kv_b > 0:
        per_token = kv_b / ecfg.capacity
        fit_roll = ecfg.max_len + (budget - roll.peak) / per_token
    best = min(fit_update, fit_roll)
    return int(max(0, best)) if math.isfinite(best) else None


def _kernel_name(eside: P.EngineSide) -> str:
    kernel = eside.lowered.kernel
    return kernel.name if kernel is not None else "dense"


def _decode_roofline(mc: ModelConfig, ecfg: EngineConfig, topo: Topology, eng_b: int, kv_b: int,
                     kernel: str = "xla") -> dict[str, float]:
    """Bytes one decode step reads per chip (engine weights + the KV the rows hold) and the
    HBM-roofline tokens/s of the engine, at full rows and at a quarter full; for a paged engine,
    also the ragged batches of :func:`paged_decode_bytes` and the slots the pool holds."""
    bw = topo.chip.hbm_bw
    chips = topo.chips_per_host
    full = eng_b + kv_b
    quarter = eng_b + kv_b / 4
    out = {"bytes_full": full, "bytes_quarter": quarter,
           "tok_s_full": ecfg.slots * bw / full, "tok_s_quarter": ecfg.slots * bw / quarter,
           "chips": float(chips)}
    if ecfg.paged:
        out.update(paged_decode_bytes(mc, ecfg, eng_b * chips, kernel))
    return out


MEAN_TRANSCRIPT_TOKENS = 6244
"""The mean transcript a slot is sized for: the median full-tool-view gold transcript measured in
shared/reference/trainer_budget.md (6,244 tokens; a 3k-token BPE, so more tokens than Qwen's
tokenizer gives the same text: the slot count is an under-estimate)."""


def mean_transcript(ecfg: EngineConfig) -> int:
    """:data:`MEAN_TRANSCRIPT_TOKENS`, or the engine's ``max_len`` when that is shorter."""
    assert ecfg.max_len is not None
    return min(MEAN_TRANSCRIPT_TOKENS, ecfg.max_len)


def paged_decode_bytes(mc: ModelConfig, ecfg: EngineConfig, weights: float, kernel: str,
                       fills: tuple[float, ...] = (0.25, 0.5, 1.0)) -> dict[str, float]:
    """What one decode step reads, counted from the page tables and block sizes, against the ideal
    (weights + the live KV), for ragged batches of ``slots`` rows: one row at the cap
    (``max_len``), the others equal, the mean fill ``q`` of the cap.

    How it is counted (``cost_analysis`` cannot say it: it charges a Pallas call for its whole
    operands, the entire pool whatever ``kv_lens`` holds): a row of ``L`` tokens holds
    ``ceil(L / page)`` pages; the TPU kernel fetches them ``num_kv_pages_per_block`` at a time
    (``kernels._block_sizes``), the XLA path in units of ``pages_per_block``, so a row reads its
    pages rounded up to whole blocks; plus the weights (engine weights, all chips).  The dense
    cache read every row up to the fullest row's blocks (``KVCache.kv_block`` = 512 slots):
    ``slots x`` the cap.  Totals over the engine's chips (the rows and heads are split over them,
    so per chip both sides divide by the same count)."""
    import jax.numpy as jnp

    from prove_jax.models.kernels import _block_sizes

    page = ecfg.page_len
    itemsize = jnp.dtype(mc.dtype).itemsize
    kv_tok = 2 * mc.num_layers * mc.num_kv_heads * mc.head_dim * itemsize
    max_pages = ecfg.max_pages
    blk = _block_sizes(page, max_pages, ecfg.slots)[0] if kernel == "tpu" else ecfg.pages_per_block
    n, cap = ecfg.slots, ecfg.max_len
    assert cap is not None
    out: dict[str, float] = {"kv_bytes_per_token": float(kv_tok), "block_pages": float(blk)}
    for q in fills:
        others = max(0.0, (q * n * cap - cap) / max(1, n - 1)) if n > 1 else 0.0
        lens = [cap] + [min(cap, round(others))] * (n - 1)
        live = sum(lens)
        read = sum(math.ceil(math.ceil(length / page) / blk) * blk * page for length in lens)
        dense = n * (-(-cap // 512) * 512)
        tag = f"q{int(q * 100)}"
        out[f"paged_over_ideal_{tag}"] = (weights + read * kv_tok) / (weights + live * kv_tok)
        out[f"dense_over_ideal_{tag}"] = (weights + dense * kv_tok) / (weights + live * kv_tok)
    mean = mean_transcript(ecfg)
    out["pool_tokens"] = float(ecfg.pool_pages * page)
    out["slots_fit"] = float(ecfg.pool_pages * page // (mean + page))  # a row wastes at most a partial page
    out["mean_transcript_tokens"] = float(mean)
    return out


def _transfer_figures(n_params: int, dtype: str, topo: Topology, xfer: P.Compiled | None) -> dict[str, float]:
    import jax.numpy as jnp

    total = n_params * jnp.dtype(dtype).itemsize
    per_chip = total / max(1, topo.chips_per_host)
    out = {"bytes_total": float(total), "bytes_per_chip": per_chip, "seconds_est": per_chip / topo.chip.link_bw}
    if xfer is not None:
        out["program_live_bytes"] = float(xfer.live)
    return out


def _analytic(cfg: LaunchConfig, topo: Topology, mc: ModelConfig, rows: int, length: int, max_tokens: int,
              headroom: float, hbm: int, with_ref: bool, edt: str, ecfg: EngineConfig) -> PlanReport:
    """GPU targets: the same accounting from shapes alone (no compiler to ask)."""
    import jax.numpy as jnp

    from prove_jax.models.sharding import parse_mesh_spec

    sizes = parse_mesh_spec(cfg.model.mesh or None)
    known = math.prod(v for v in sizes.values() if v > 0)
    for k, v in sizes.items():
        if v == -1:
            sizes[k] = topo.chips // known
    shards = max(1, sizes["fsdp"] * sizes["tensor"] * sizes["data"])
    n = param_count(mc)
    pdt, edt_b = jnp.dtype(mc.param_dtype).itemsize, jnp.dtype(edt).itemsize
    params_b, opt_b = n * pdt // shards, 2 * n * 4 // shards
    ref_b = (n * jnp.dtype(getattr(cfg.grpo, "reference_dtype", None) or mc.dtype).itemsize // shards) if with_ref else 0
    eng_b = n * edt_b // topo.chips_per_host
    kv_slot = 2 * mc.num_layers * ecfg.capacity * mc.num_kv_heads * mc.head_dim * jnp.dtype(mc.dtype).itemsize
    notes: list[str] = []
    if cfg.engine.slots == 0:  # as many as the rollout phase's budget holds (a multiple of the chips)
        room = hbm * (1 - headroom) - params_b - opt_b - ref_b - eng_b
        per_slot = kv_slot / topo.chips_per_host + 2 * mc.vocab_size * 4
        fit = max(topo.chips_per_host, int(room // per_slot) // topo.chips_per_host * topo.chips_per_host)
        episodes = cfg.grpo.prompts_per_step * cfg.grpo.group_size // topo.hosts
        ecfg = dataclasses.replace(ecfg, slots=min(fit, -(-episodes // topo.chips_per_host) * topo.chips_per_host))
        notes.append(f"engine.slots=0: {ecfg.slots} slots sized from the budget (room for {fit})")
    kv_b = ecfg.slots * kv_slot // topo.chips_per_host
    rows_dev = max(1, rows // max(1, sizes["data"] * sizes["fsdp"]))
    act = jnp.dtype(mc.dtype).itemsize
    saved = mc.num_layers * rows_dev * length * mc.hidden_size * act  # remat=full: layer inputs
    layer = rows_dev * length * (4 * mc.hidden_size + 3 * mc.intermediate_size // max(1, sizes["tensor"])) * act * 2
    head = rows_dev * min(length, 4096) * mc.vocab_size * 4 * 2 // max(1, sizes["tensor"])
    acc_live = params_b + ref_b + n * 4 // shards + saved + layer + head + rows_dev * length * 16
    dec_live = eng_b + kv_b + ecfg.slots * mc.vocab_size * 4
    acc = P.Compiled(f"accumulate[{length}]", 0, acc_live, 0, 0, 0.0, 0.0, "analytic")
    dec = P.Compiled("decode", 0, dec_live, 0, 0, 0.0, 0.0, "analytic")
    upd = P.Compiled("update", 0, params_b + opt_b + n * 4 // shards + n * 4 // shards, 0, 0, 0.0, 0.0, "analytic")
    xfer = P.Compiled("weight_transfer", 0, params_b + eng_b, 0, 0, 0.0, 0.0, "analytic")
    resident = {"params": params_b, "adam": opt_b, "reference": ref_b, "engine_params": eng_b}
    phases = [Phase("rollout", "decode", params_b + opt_b + ref_b, dec.live),
              Phase("update", acc.name, opt_b + eng_b, acc.live),
              Phase("apply", "update", ref_b + eng_b, upd.live),
              Phase("transfer", "weight_transfer", opt_b + ref_b, xfer.live)]
    steps_rows = cfg.grpo.prompts_per_step * cfg.grpo.group_size
    flops = model_flops(mc, steps_rows, max_tokens, with_ref)
    per_token = (saved + layer) / max(1, length)
    budget = hbm * (1 - headroom)
    fit = int((budget - (phases[1].peak - per_token * length)) / per_token) if per_token else None
    return PlanReport(
        run=cfg.name, topology=topo, method="analytic", model={"family": mc.family, "params": n,
        "layers": mc.num_layers, "mesh": ",".join(f"{k}={v}" for k, v in sizes.items()),
        "rows_per_micro_global": rows}, programs=[acc, upd, dec, xfer], phases=phases, hbm=hbm, headroom=headroom,
        resident=resident, max_tokens=max_tokens, longest_fit=fit, flops_per_step=flops,
        step_s_at_40=flops / (0.4 * topo.chip.peak_flops * topo.chips),
        decode=_decode_roofline(mc, ecfg, topo, eng_b, kv_b), transfer=_transfer_figures(n, edt, topo, None),
        notes=["analytic: no deviceless GPU compiler is reachable from this jax; figures are estimates from "
               "shapes (remat=full activations, one layer's working set, a fused attention kernel)", *notes],
        engine_slots=ecfg.slots)
