"""The sharded train step: gradient accumulation over bucketed micro-batches, AdamW, NaN guard.

One optimizer step is two jitted programs:

* ``accumulate(params, ref_params, acc, micro_batch, den)`` — loss and gradients of one
  micro-batch added into the donated f32 accumulator (one compilation per micro-batch shape:
  micro-batches are padded to length buckets, see :mod:`prove_jax.rl.batch`, so a run compiles
  at most one per bucket);
* ``apply(state, acc)`` — global-norm clipping + AdamW (warmup + cosine) on the donated state,
  unless the accumulated loss or any gradient is NaN/inf: then params and optimizer state are
  returned unchanged and ``skipped`` is incremented (the bad step is logged, never applied).

Splitting accumulation from the update (instead of one ``lax.scan`` over equal micro-batches)
lets each micro-batch be padded to its own bucket: rows are sorted by length, so a step of
mostly short transcripts with a few long ones pays for the long ones only once.

Params and optimizer state live where the model's logical-axis rules put them on the mesh
(``fsdp``/``tensor``), micro-batch rows are sharded over ``data x fsdp``; on a mesh the
programs are SPMD over it, on several hosts every process calls them with its local rows
(``jax.make_array_from_process_local_data``). bf16 compute with f32 master weights is a model
config (``dtype=bfloat16, param_dtype=float32``): weights are cast at use, gradients and the
optimizer state stay f32.

A model carrying LoRA adapters (:func:`prove_jax.models.lora.apply_lora`) trains only those: the
train state's params are the adapters (``nnx.LoRAParam``), so gradients, the accumulator and
AdamW's moments exist for adapter-shaped leaves only, and the frozen base travels in the programs'
``ref_params`` slot. GRPO's KL reference is then that frozen base run without the adapters (the
base graph over the very same arrays): no second copy of the weights.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from prove_jax.models import Model
from prove_jax.models.lora import has_adapters, merge_lora, without_adapters
from prove_jax.models.sharding import logical_to_spec, param_sharding
from prove_jax.rl.losses import Denominators

Batch = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class OptimConfig:
    """AdamW with linear warmup and cosine decay to ``lr * end_lr_ratio``, global-norm clipping."""

    lr: float = 1e-6
    warmup_steps: int = 0
    decay_steps: int = 350  # cosine length in optimizer steps (the paper's 350 GRPO steps)
    end_lr_ratio: float = 0.1
    schedule: str = "cosine"  # cosine | constant
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.01
    clip_norm: float = 1.0

    def __post_init__(self) -> None:
        if self.lr <= 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if self.schedule not in ("cosine", "constant"):
            raise ValueError(f"schedule must be cosine or constant, got {self.schedule!r}")
        if self.warmup_steps < 0 or self.decay_steps < 1:
            raise ValueError("warmup_steps must be >= 0 and decay_steps >= 1")
        if self.clip_norm <= 0:
            raise ValueError(f"clip_norm must be > 0, got {self.clip_norm}")


def learning_rate(cfg: OptimConfig) -> optax.Schedule:
    if cfg.schedule == "constant":
        return optax.join_schedules(
            [optax.linear_schedule(0.0, cfg.lr, max(cfg.warmup_steps, 1)), optax.constant_schedule(cfg.lr)],
            [max(cfg.warmup_steps, 1)],
        ) if cfg.warmup_steps else optax.constant_schedule(cfg.lr)
    return optax.warmup_cosine_decay_schedule(
        0.0 if cfg.warmup_steps else cfg.lr, cfg.lr, cfg.warmup_steps,
        max(cfg.decay_steps, cfg.warmup_steps + 1), cfg.lr * cfg.end_lr_ratio,
    )


def make_optimizer(cfg: OptimConfig) -> optax.GradientTransformation:
    """Clip by global norm, then AdamW; weight decay only on matrices (not norms or biases)."""
    decay_mask = lambda params: jax.tree.map(lambda x: x.ndim >= 2, params)  # noqa: E731
    return optax.chain(
        optax.clip_by_global_norm(cfg.clip_norm),
        optax.adamw(learning_rate(cfg), b1=cfg.b1, b2=cfg.b2, eps=cfg.eps, weight_decay=cfg.weight_decay,
                    mask=decay_mask),
    )


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class TrainState:
    """Everything an optimizer step changes (and a checkpoint must hold)."""

    params: Any  # nnx.State of the model's Params
    opt_state: Any
    step: Any  # int32 array: optimizer updates applied (a Sharding in the shardings tree)
    skipped: Any  # int32 array: updates refused because the loss or a gradient was not finite


class Objective(Protocol):
    """A loss over one micro-batch: ``(model, ref_model | None, batch, den) -> (loss, metrics)``.
    Must be hashable (a frozen dataclass): it is a static argument of the jitted programs."""

    def __call__(self, model: Model, ref: Model | None, batch: Batch, den: Denominators
                 ) -> tuple[jax.Array, dict[str, jax.Array]]: ...


class StepStatic:
    """Graph definition + objective as one jit static argument, hashed once (as the engine's
    ``_GraphKey``: hashing an NNX graphdef on every dispatch is slow). With LoRA, ``base`` is the
    graph of the model without its adapters and ``reference`` whether the objective gets it."""

    __slots__ = ("_hash", "base", "graphdef", "objective", "reference")

    def __init__(self, graphdef: nnx.GraphDef, objective: Objective, base: nnx.GraphDef | None = None,
                 reference: bool = False) -> None:
        self.graphdef, self.objective, self.base, self.reference = graphdef, objective, base, reference
        self._hash = hash((graphdef, objective, base, reference))

    def _key(self) -> tuple[Any, ...]:
        return self.graphdef, self.objective, self.base, self.reference

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, StepStatic) and self._hash == other._hash
                                 and self._key() == other._key())


def bind(static: StepStatic, params: Any, ref_params: Any) -> tuple[Model, Model | None]:
    """The models the objective sees. Full fine-tuning: ``params``, and ``ref_params`` (the frozen
    copy, or None) as the reference. LoRA (``static.base`` set): ``params`` are the adapters and
    ``ref_params`` the frozen base under them; the reference, when asked for, is the base graph
    over those same arrays (adapters absent)."""
    if static.base is None:
        return nnx.merge(static.graphdef, params), None if ref_params is None else nnx.merge(static.graphdef, ref_params)
    ref = nnx.merge(static.base, ref_params) if static.reference else None
    return nnx.merge(static.graphdef, params, ref_params), ref


def merged_params(static: StepStatic, source: tuple[Any, Any]) -> Any:
    """The plain model's params from LoRA's (adapters, frozen base): what the engine decodes."""
    return nnx.split(merge_lora(bind(static, *source)[0]))[1]


def _accumulate(static: StepStatic, params: Any, ref_params: Any, acc: Any, batch: Batch, den: Denominators) -> Any:
    def loss_fn(p: Any) -> tuple[jax.Array, dict[str, jax.Array]]:
        model, ref = bind(static, p, ref_params)
        return static.objective(model, ref, batch, den)

    (_, metrics), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    add = lambda a, g: a + g.astype(a.dtype)  # noqa: E731
    return {"grads": jax.tree.map(add, acc["grads"], grads),
            "metrics": {k: acc["metrics"][k] + v.astype(jnp.float32) for k, v in metrics.items()}}


def _zero_acc(params: Any, names: tuple[str, ...]) -> Any:
    grads = jax.tree.map(lambda p: jnp.zeros(p.shape, jnp.float32), params)
    return {"grads": grads, "metrics": {k: jnp.float32(0) for k in names}}


def _all_finite(tree: Any) -> jax.Array:
    leaves = [jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tree)]
    return jnp.all(jnp.stack(leaves)) if leaves else jnp.bool_(True)


def _apply(tx: optax.GradientTransformation, schedule: optax.Schedule, state: TrainState, acc: Any
           ) -> tuple[TrainState, dict[str, jax.Array]]:
    grads, metrics = acc["grads"], acc["metrics"]
    finite = _all_finite(grads) & _all_finite(metrics)
    # Zeros instead of NaNs into the optimizer keep its arithmetic clean; its result is discarded.
    safe = jax.tree.map(lambda g: jnp.where(finite, g, 0.0), grads)
    params32 = state.params
    updates, opt_state = tx.update(safe, state.opt_state, params32)
    params = optax.apply_updates(params32, updates)
    keep = lambda new, old: jnp.where(finite, new, old)  # noqa: E731
    new = TrainState(
        params=jax.tree.map(keep, params, state.params),
        opt_state=jax.tree.map(keep, opt_state, state.opt_state),
        step=state.step + finite.astype(jnp.int32),
        skipped=state.skipped + (~finite).astype(jnp.int32),
    )
    out = dict(metrics)
    out.update(grad_norm=optax.tree.norm(safe), lr=jnp.asarray(schedule(state.step), jnp.float32),
               skipped=(~finite).astype(jnp.float32))
    return new, out


def _variable_sharding(mesh: Mesh | None, rules: Any) -> Callable[[Any], Any]:
    def one(x: Any) -> Any:
        if isinstance(x, nnx.Variable):
            return x.replace(param_sharding(x, mesh, rules))
        if mesh is None:
            return jax.sharding.SingleDeviceSharding(jax.devices()[0])
        return NamedSharding(mesh, PartitionSpec())

    return one


def tree_shardings(tree: Any, mesh: Mesh | None, rules: Any) -> Any:
    """Target shardings of a pytree whose array leaves sit in NNX Variables (params, Adam moments)
    by their logical axes; other leaves (step counters) are replicated."""
    return jax.tree.map(_variable_sharding(mesh, rules), tree, is_leaf=lambda x: isinstance(x, nnx.Variable))


@dataclasses.dataclass(frozen=True)
class TrainPrograms:
    """The jitted programs of one optimizer step, built from shardings alone (no arrays), so the
    trainer runs them and the planner (:mod:`prove_jax.plan`) lowers and compiles the very same
    programs against abstract inputs for a topology it does not have."""

    accumulate: Any  # (static, params, ref_params, acc, micro_batch, den) -> acc
    apply: Any  # (state, acc) -> (state, metrics)
    zeros: Any  # (params, metric_names) -> acc


def train_programs(tx: optax.GradientTransformation, schedule: optax.Schedule, param_shardings: Any,
                   state_shardings: TrainState, replicated: jax.sharding.Sharding, *, donate: bool = True
                   ) -> TrainPrograms:
    acc_shardings = {"grads": param_shardings, "metrics": replicated}
    return TrainPrograms(
        accumulate=jax.jit(_accumulate, static_argnums=(0,), donate_argnums=(3,) if donate else (),
                           out_shardings=acc_shardings),
        apply=jax.jit(partial(_apply, tx, schedule), donate_argnums=(0,) if donate else (),
                      out_shardings=(state_shardings, replicated)),
        zeros=jax.jit(_zero_acc, static_argnums=(1,), out_shardings=acc_shardings),
    )


def ref_storage_dtype(model_dtype: str, requested: str | None) -> jnp.dtype:
    """Storage dtype of the frozen KL reference. Default: the compute dtype. Weights are cast to
    the compute dtype at use (``layers.dense``, norms, embedding), so a bf16-stored reference of
    a bf16-compute model gives bit-identical log-probs at half the bytes of an f32 copy."""
    return jnp.dtype(requested or model_dtype)


class Trainer:
    """Owns the train state of one model and runs optimizer steps over lists of micro-batches.

    ``Trainer(model, OptimConfig(...), objective, reference=True)``: ``reference`` keeps a frozen
    copy of the initial params for the KL term (only created when asked for: the reference model
    exists only when beta > 0), stored in ``reference_dtype`` (default: the model's compute
    dtype, see :func:`ref_storage_dtype`). ``trainer.step(micro_batches, den)`` returns the step's
    metrics (host floats); ``trainer.params`` are the current params (a fresh buffer after every
    step: the previous ones were donated). For a model with LoRA adapters ``trainer.params`` are
    the adapters, ``ref_params`` the frozen base, ``trainer.model()`` the adapted model, and the
    reference (``reference=True``) is the base itself (``reference_dtype`` does not apply).
    """

    def __init__(self, model: Model, optim: OptimConfig, objective: Objective, *, reference: bool = False,
                 donate: bool = True, reference_dtype: str | None = None) -> None:
        self.model_config = model.config
        self.mesh: Mesh | None = model.mesh
        self.rules = model.config.sharding_rules
        self.lora = has_adapters(model)
        if self.lora:  # train the adapters; the rest (maybe QLoRA codes) is frozen
            graphdef, params, frozen = nnx.split(model, nnx.LoRAParam, ...)
            base = nnx.graphdef(without_adapters(model))
        else:
            graphdef, params = nnx.split(model)
            non_params = [p for p, v in nnx.to_flat_state(params) if not isinstance(v, nnx.Param)]
            if non_params:
                raise ValueError(f"the trainer expects a model of Params only, found {non_params[:4]}")
            base = None
        self.graphdef = graphdef
        self.static = StepStatic(graphdef, objective, base, reference and base is not None)
        self.optim = optim
        self.tx = make_optimizer(optim)
        self.schedule = learning_rate(optim)
        self.param_shardings = tree_shardings(params, self.mesh, self.rules)
        opt_shape = jax.eval_shape(self.tx.init, params)
        self.opt_shardings = tree_shardings(opt_shape, self.mesh, self.rules)
        replicated = self._replicated()
        self.state_shardings = TrainState(self.param_shardings, self.opt_shardings, replicated, replicated)
        opt_state = jax.jit(self.tx.init, out_shardings=self.opt_shardings)(params)
        zero = jax.device_put(jnp.int32(0), replicated)
        self.state = TrainState(params, opt_state, zero, jax.device_put(jnp.int32(0), replicated))
        self.ref_params = None
        if self.lora:
            self.ref_params = frozen
        elif reference:
            ref_dt = ref_storage_dtype(model.config.dtype, reference_dtype)
            self.ref_params = jax.tree.map(lambda x: jnp.copy(x).astype(ref_dt), params)
        programs = train_programs(self.tx, self.schedule, self.param_shardings, self.state_shardings, replicated,
                                  donate=donate)
        self._accumulate, self._apply, self._zeros = programs.accumulate, programs.apply, programs.zeros
        self.metric_names: tuple[str, ...] | None = None
        self._signatures: set[tuple[Any, ...]] = set()

    # ---- placement ----------------------------------------------------------------------------
    def _replicated(self) -> jax.sharding.Sharding:
        if self.mesh is None:
            return jax.sharding.SingleDeviceSharding(jax.devices()[0])
        return NamedSharding(self.mesh, PartitionSpec())

    def batch_sharding(self, ndim: int) -> jax.sharding.Sharding:
        """Rows over ``data x fsdp`` (the ``batch`` logical axis), everything else replicated."""
        if self.mesh is None:
            return self._replicated()
        spec = logical_to_spec(("batch",) + (None,) * (ndim - 1), self.rules)
        return NamedSharding(self.mesh, spec)

    def place(self, micro: Mapping[str, np.ndarray]) -> dict[str, jax.Array]:
        """Host arrays (this process's rows) -> global device arrays sharded over the batch axes."""
        out = {}
        for k, v in micro.items():
            v = np.asarray(v)
            sharding = self.batch_sharding(v.ndim)
            out[k] = jax.make_array_from_process_local_data(sharding, v) if self.mesh is not None \
                else jax.device_put(v, sharding)
        return out

    def denominators(self, tokens: float, seqs: float) -> Denominators:
        r = self._replicated()
        return Denominators(jax.device_put(np.float32(tokens), r), jax.device_put(np.float32(seqs), r))

    # ---- the step -----------------------------------------------------------------------------
    def _metric_names(self, first: dict[str, jax.Array], den: Denominators) -> tuple[str, ...]:
        if self.metric_names is None:
            shapes = jax.eval_shape(lambda p, r, b, d: self.static.objective(*bind(self.static, p, r), b, d)[1],
                                    self.state.params, self.ref_params, first, den)
            self.metric_names = tuple(sorted(shapes))
        return self.metric_names

    def gradients(self, micro_batches: Sequence[Mapping[str, np.ndarray]], den: Denominators) -> Any:
        """The step's accumulated f32 gradients and metric sums, without updating anything."""
        if not micro_batches:
            raise ValueError("a step needs at least one micro-batch")
        placed = [self.place(mb) for mb in micro_batches]
        names = self._metric_names(placed[0], den)
        acc = self._zeros(self.state.params, names)
        for mb in placed:
            self._signatures.add(tuple(sorted((k, v.shape, str(v.dtype)) for k, v in mb.items())))
            acc = self._accumulate(self.static, self.state.params, self.ref_params, acc, mb, den)
        return acc

    def step(self, micro_batches: Sequence[Mapping[str, np.ndarray]], den: Denominators) -> dict[str, float]:
        """One optimizer step over ``micro_batches`` (host arrays, this process's rows)."""
        self.state, metrics = self._apply(self.state, self.gradients(micro_batches, den))
        return {k: float(v) for k, v in jax.device_get(metrics).items()}

    @property
    def params(self) -> Any:
        return self.state.params

    def model(self) -> Model:
        """A model view over the current params (no copy); with LoRA, the adapted model."""
        return bind(self.static, self.state.params, self.ref_params)[0]

    @property
    def sync_source(self) -> Any:
        """What the engine's weights are made from: the params, or with LoRA (adapters, frozen
        base), which :meth:`merge_fn` turns into the plain model's params."""
        return (self.state.params, self.ref_params) if self.lora else self.state.params

    def merge_fn(self) -> Callable[[Any], Any] | None:
        """With LoRA: ``(adapters, base) -> plain params`` (``W + (alpha/r) B A``, a QLoRA base
        dequantised), traceable into the weight sync's program; None without adapters."""
        if not self.lora:
            return None
        return partial(merged_params, self.static)

    def compiled_programs(self) -> int:
        """Programs this trainer has needed so far: one accumulate program per distinct
        micro-batch shape (bounded by the bucket count) plus the update."""
        return len(self._signatures) + (1 if self._signatures else 0)
