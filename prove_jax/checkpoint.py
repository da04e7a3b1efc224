"""Orbax checkpoints of a training stage: train state + everything needed to continue exactly.

A checkpoint at step ``k`` holds two items:

* ``state`` — the :class:`~prove_jax.rl.step.TrainState` (params, optimizer state, step and
  skipped counters) as a flat ``{dotted.path: array}`` PyTree, saved by every process for its
  shards (Orbax/tensorstore) and restored straight into the target shardings (params alone can
  be restored: the next stage's start, or an export);
* ``meta`` — JSON: the Grain iterator state, the run's seeds, the stage's host counters, the
  config that produced it and the metrics rows written so far (resume rewrites the metrics file
  from them, so a resumed run's log equals an uninterrupted one's).

Saves are asynchronous (training continues while tensorstore writes), every ``every`` steps, on
request (``force``: SIGTERM, end of stage), keeping the last ``keep``; Orbax writes into a
temporary directory and renames it when complete, so a trainer killed mid-save leaves the
previous checkpoint as the latest. The flat-path layout makes a checkpoint independent of how
NNX/optax pytree nodes nest, and lets ``python -m prove_jax.export`` read params alone.

Beside the step directories the checkpoint directory holds ``model.json`` and ``tokenizer/``
(:mod:`prove_jax.model_record`, written by :meth:`Checkpointer.describe` when a stage starts), so
the directory alone says what model its params belong to. :func:`load_model` is the one loader of
a model directory — an HF directory, or a run / stage / ``checkpoints/`` directory — used by the
export, the server, the benchmarks and the launcher's later stages: no launch config, and not
the HF directory training started from. Checkpoints written before ``model.json`` existed load
through the launch config in their metadata (:class:`~prove_jax.model_record.ModelSpec`), which
still needs that run's tokenizer (and ``model.hf_dir``) where the run had them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import jax
import orbax.checkpoint as ocp
from flax import nnx
from jax.sharding import Mesh
from jax.tree_util import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

from prove_jax.chat import ChatTokenizer, detect_family, get_template
from prove_jax.model_record import (
    ModelRecord,
    ModelSpec,
    describe,
    open_tokenizer,
    read_record,
    write_record,
)
from prove_jax.models import Model, ModelConfig, abstract_model, load_hf, make_mesh, save_hf, state_shardings

BASE_SUBDIR = "base"
"""Where a LoRA checkpoint directory keeps its frozen base (an HF directory with its model.json)."""
STAGES_NEWEST_FIRST = ("grpo", "sft")
"""When a run directory is given, the stage whose checkpoint is loaded (the last one trained)."""


def _key_name(k: Any) -> str:
    if isinstance(k, DictKey):
        return str(k.key)
    if isinstance(k, SequenceKey | FlattenedIndexKey):
        return str(k.idx)
    if isinstance(k, GetAttrKey):
        return k.name
    return str(k)


def flatten(tree: Any) -> tuple[dict[str, Any], Any]:
    """``{dotted.path: leaf}`` and the treedef to rebuild ``tree`` from it."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
    flat: dict[str, Any] = {}
    for path, leaf in leaves:
        name = ".".join(_key_name(k) for k in path) or "_"
        if name in flat:
            raise ValueError(f"two leaves flatten to the same checkpoint key {name!r}")
        flat[name] = leaf
    return flat, treedef


def unflatten(flat: dict[str, Any], like: Any) -> Any:
    """Rebuild a pytree shaped like ``like`` from :func:`flatten`'s mapping."""
    names, treedef = flatten(like)
    missing = [n for n in names if n not in flat]
    if missing:
        raise KeyError(f"checkpoint lacks {missing[:5]}{'...' if len(missing) > 5 else ''}")
    return jax.tree_util.tree_unflatten(treedef, [flat[n] for n in names])


def abstract(tree: Any) -> Any:
    """ShapeDtypeStructs (with shardings) of a live pytree: the restore target."""
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding), tree)


@dataclasses.dataclass(frozen=True)
class CheckpointConfig:
    """When to save and how many to keep."""

    every: int = 50  # optimizer steps between saves (also saved at the end and on SIGTERM)
    keep: int = 2
    async_save: bool = True

    def __post_init__(self) -> None:
        if self.every < 1 or self.keep < 1:
            raise ValueError(f"every and keep must be >= 1, got every={self.every}, keep={self.keep}")


class Checkpointer:
    """One stage's checkpoint directory (``<run>/<stage>/checkpoints``)."""

    def __init__(self, directory: str | Path, config: CheckpointConfig | None = None) -> None:
        self.config = config or CheckpointConfig()
        self.directory = Path(directory).resolve()
        options = ocp.CheckpointManagerOptions(
            max_to_keep=self.config.keep,
            enable_async_checkpointing=self.config.async_save,
            create=True,
        )
        self.manager = ocp.CheckpointManager(self.directory, options=options)

    def latest_step(self) -> int | None:
        return self.manager.latest_step()

    def due(self, step: int) -> bool:
        return step % self.config.every == 0

    def save(self, step: int, state: Any, meta: dict[str, Any], *, force: bool = False) -> bool:
        """Save (asynchronously) if ``step`` is due or ``force``; returns whether it saved."""
        if not (force or self.due(step)) or step in self.manager.all_steps():
            return False
        flat, _ = flatten(state)
        return bool(self.manager.save(step, args=ocp.args.Composite(
            state=ocp.args.PyTreeSave(flat), meta=ocp.args.JsonSave(meta)), force=True))

    def _restore_flat(self, target: dict[str, Any], step: int, *, partial: bool, meta: bool) -> dict[str, Any]:
        items: dict[str, Any] = {"state": ocp.args.PyTreeRestore(
            target, restore_args=ocp.checkpoint_utils.construct_restore_args(target), partial_restore=partial)}
        if meta:
            items["meta"] = ocp.args.JsonRestore()
        return dict(self.manager.restore(step, args=ocp.args.Composite(**items)))

    def _step(self, step: int | None) -> int:
        step = self.latest_step() if step is None else step
        if step is None:
            raise FileNotFoundError(f"no checkpoint in {self.directory}")
        return step

    def restore(self, like: Any, step: int | None = None) -> tuple[Any, dict[str, Any], int]:
        """Restore the whole state into the structure and shardings of ``like`` (live or abstract)."""
        step = self._step(step)
        target, _ = flatten(abstract(like) if not _is_abstract(like) else like)
        out = self._restore_flat(target, step, partial=False, meta=True)
        return unflatten(dict(out["state"]), like), dict(out["meta"]), step

    def restore_params(self, like: Any, step: int | None = None, prefix: str = "params") -> Any:
        """Only the params (``prefix.*`` entries) of a train-state checkpoint, into ``like``'s
        structure and shardings: the next stage's starting point, or an export."""
        step = self._step(step)
        names, _ = flatten(abstract(like) if not _is_abstract(like) else like)
        target = {f"{prefix}.{k}": v for k, v in names.items()}
        out = self._restore_flat(target, step, partial=True, meta=False)
        flat = {k[len(prefix) + 1:]: v for k, v in dict(out["state"]).items()}
        return unflatten(flat, like)

    def read_meta(self, step: int | None = None) -> dict[str, Any]:
        """The ``meta`` item of checkpoint ``step`` (default: the newest), without the state."""
        step = self._step(step)
        out = self.manager.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))
        return dict(out["meta"])

    def describe(self, record: ModelRecord, tokenizer_dir: str | Path, *, base: Model | None = None) -> ModelRecord:
        """Write ``model.json`` and a copy of ``tokenizer_dir``'s files beside the steps, so the
        directory loads (:func:`load_model`) without the launch config or the original HF dir.

        LoRA (``record.lora``): the steps hold only the adapters, so the frozen ``base`` (a plain
        model: before any QLoRA quantisation) is written once, as an HF directory ``base/`` beside
        them (kept when a resumed stage finds it complete); ``model.json`` names it."""
        if record.lora is not None:
            if base is None:
                raise ValueError("a LoRA checkpoint needs its frozen base (describe(..., base=model))")
            target = self.directory / BASE_SUBDIR
            if read_record(target) is None:  # model.json is written last: its presence means complete
                save_hf(base, target, source_dir=tokenizer_dir)
                write_record(target, dataclasses.replace(record, lora=None, base_dir=""))
            record = dataclasses.replace(record, base_dir=BASE_SUBDIR)
        return write_record(self.directory, record, copy_tokenizer_from=tokenizer_dir)

    def wait(self) -> None:
        self.manager.wait_until_finished()

    def close(self) -> None:
        self.manager.wait_until_finished()
        self.manager.close()


def _is_abstract(tree: Any) -> bool:
    leaves = jax.tree.leaves(tree)
    return bool(leaves) and all(isinstance(x, jax.ShapeDtypeStruct) for x in leaves)


# ---- loading a model directory ------------------------------------------------------------------
def restore_model(config: ModelConfig, ckpt: Checkpointer, step: int, mesh: Mesh | None) -> Model:
    """A model of ``config`` with the params of checkpoint ``step``, each restored directly into
    its sharding on ``mesh``: no initial weights are loaded and nothing passes through one device."""
    graphdef, abstract_state = nnx.split(abstract_model(config, mesh))
    shardings = state_shardings(abstract_state, mesh, config.sharding_rules)
    like = jax.tree.map(lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abstract_state, shardings)
    return nnx.merge(graphdef, ckpt.restore_params(like, step))


def restore_adapted(config: ModelConfig, record: ModelRecord, ckpt: Checkpointer, step: int,
                    mesh: Mesh | None) -> Model:
    """A LoRA checkpoint's model: its frozen base (``record.base_dir``, loaded into ``config``'s
    runtime options and sharded on ``mesh``), the record's adapters applied (and QLoRA's
    quantisation redone: deterministic, so the base is the one training saw), then the
    checkpoint's adapter params restored into their shardings."""
    from prove_jax.models.lora import apply_lora

    assert record.lora is not None
    base_dir = ckpt.directory / record.base_dir
    if read_record(base_dir) is None:
        raise SystemExit(f"{ckpt.directory}: LoRA checkpoint without its base at {base_dir}")
    base = load_hf(base_dir, mesh, dtype=config.dtype, param_dtype=config.param_dtype, remat=config.remat,
                   scan_layers=config.scan_layers, attention_impl=config.attention_impl)
    _check_shapes(config, base.config, base_dir)
    graphdef, adapters, frozen = nnx.split(apply_lora(base, record.lora), nnx.LoRAParam, ...)
    return nnx.merge(graphdef, ckpt.restore_params(adapters, step), frozen)


def _has_checkpoint(directory: Path) -> bool:
    """A committed Orbax step directory (an integer name; Orbax's temporary ones are not)."""
    return directory.is_dir() and any(p.is_dir() and p.name.isdigit() for p in directory.iterdir())


def resolve_checkpoint_dir(path: str | Path) -> Path:
    """The ``checkpoints/`` directory that ``path`` (checkpoints, stage or run dir) designates.

    Raises SystemExit naming what was looked at, so a wrong path fails before JAX starts work.
    """
    p = Path(path).resolve()
    candidates = [p, p / "checkpoints", *(p / s / "checkpoints" for s in STAGES_NEWEST_FIRST)]
    for c in candidates:
        if _has_checkpoint(c):
            return c
    looked = ", ".join(str(c) for c in candidates)
    raise SystemExit(f"no checkpoint found under {p} (looked in {looked})")


def is_hf_dir(path: Path) -> bool:
    """``config.json`` beside safetensors weights: a transformers-style model directory."""
    return (path / "config.json").exists() and any(path.glob("*.safetensors"))


@dataclasses.dataclass
class LoadedModel:
    """A model with the record and tokenizer of the directory it was loaded from."""

    model: Model
    record: ModelRecord
    tokenizer: ChatTokenizer
    tokenizer_dir: Path
    """The folder holding the tokenizer and HF side files (an export copies them)."""
    directory: Path
    """The HF directory, or the ``checkpoints/`` directory the params came from."""
    step: int | None = None
    """The checkpoint step; None for an HF directory."""
    legacy: bool = False
    """Described by the launch config in the checkpoint's metadata (written before model.json)."""

    @property
    def source(self) -> str:
        return str(self.directory) if self.step is None else f"{self.directory}@{self.step}"

    @property
    def name(self) -> str:
        """``<dir>`` for an HF directory, ``<run>-<stage>-<step>`` for a checkpoint."""
        if self.step is None:
            return self.directory.name
        return f"{self.directory.parent.parent.name}-{self.directory.parent.name}-{self.step}"


def _mesh(spec: str) -> Mesh | None:
    if not spec:
        return None
    try:
        return make_mesh(spec)
    except ValueError as exc:
        raise SystemExit(f"cannot build the mesh {spec!r} on this machine ({exc}); pass --mesh "
                         "(e.g. --mesh '' for one device)") from None


_SHAPE_FIELDS = ("family", "vocab_size", "hidden_size", "intermediate_size", "num_layers", "num_heads",
                 "num_kv_heads", "head_dim", "tie_word_embeddings", "qkv_bias", "o_bias", "mlp_bias", "qk_norm")


def _check_shapes(config: ModelConfig, recorded: ModelConfig, where: Path) -> None:
    """A caller's config (the launcher's, with its runtime options) must have the checkpoint's
    parameter shapes; say which field differs rather than fail inside the Orbax restore."""
    diff = {f: (getattr(config, f), getattr(recorded, f)) for f in _SHAPE_FIELDS
            if getattr(config, f) != getattr(recorded, f)}
    if diff:
        raise ValueError(f"{where}: the model config differs from the checkpoint's in {diff} (given, recorded)")


def _legacy_record(meta: dict[str, Any], ckpt_dir: Path, step: int) -> tuple[ModelRecord, ChatTokenizer, Path]:
    """What a checkpoint without ``model.json`` is, from the launch config in its metadata."""
    stored = meta.get("config")
    if not stored:
        raise SystemExit(f"checkpoint {ckpt_dir} step {step} has no model.json and no launch config in its "
                         "metadata (meta['config']); it was not written by a training stage and cannot be loaded")
    try:
        spec, tok_dir = ModelSpec.from_stored(stored)
    except (KeyError, TypeError, ValueError) as exc:
        raise SystemExit(f"checkpoint {ckpt_dir} step {step}: its stored config does not parse: {exc!r}") from None
    tokenizer_dir = spec.tokenizer_path(ckpt_dir.parent.parent, tok_dir)  # <run>/<stage>/checkpoints
    if not (tokenizer_dir / "tokenizer.json").is_file() or (spec.hf_dir and not Path(spec.hf_dir).is_dir()):
        raise SystemExit(f"checkpoint {ckpt_dir} was written before model.json existed: it needs the run's "
                         f"tokenizer at {tokenizer_dir}" + (f" and model.hf_dir {spec.hf_dir}" if spec.hf_dir else "")
                         + ", which are not there")
    tokenizer = ChatTokenizer.from_dir(tokenizer_dir)
    template = get_template(spec.chat_family(lambda: tokenizer, tok_dir), enable_thinking=False)
    record = describe(spec.model_config(lambda: tokenizer), template, tokenizer, train_mesh=spec.mesh,
                      origin=spec.origin)
    return record, tokenizer, tokenizer_dir


def load_checkpoint(path: str | Path, *, step: int | None = None, mesh: str | None = None,
                    config: ModelConfig | None = None) -> LoadedModel:
    """Checkpoint ``step`` (default: the newest) of ``path`` (a run, stage or ``checkpoints/``
    directory), params restored straight into their shardings on ``mesh`` (a spec such as
    ``"fsdp=4"``; default: the training mesh, ``""``: one device). ``config`` restores into the
    caller's ModelConfig (same shapes, its own runtime options) instead of the recorded one.
    Errors that a user can fix (no checkpoint, no such step) raise SystemExit naming them."""
    ckpt_dir = resolve_checkpoint_dir(path)
    ckpt = Checkpointer(ckpt_dir)
    try:
        chosen = ckpt.latest_step() if step is None else step
        if chosen is None:
            raise SystemExit(f"no checkpoint found in {ckpt_dir}")
        if chosen not in ckpt.manager.all_steps():
            raise SystemExit(f"{ckpt_dir} has no step {chosen} (steps: {ckpt.manager.all_steps()})")
        record = read_record(ckpt_dir)
        legacy = record is None
        if record is None:
            record, tokenizer, tokenizer_dir = _legacy_record(ckpt.read_meta(chosen), ckpt_dir, chosen)
        else:
            tokenizer, tokenizer_dir = open_tokenizer(ckpt_dir, record)
        if config is not None:
            _check_shapes(config, record.config, ckpt_dir)
        target_mesh = _mesh(record.train_mesh if mesh is None else mesh)
        if record.lora is not None:
            model = restore_adapted(config or record.config, record, ckpt, chosen, target_mesh)
        else:
            model = restore_model(config or record.config, ckpt, chosen, target_mesh)
    finally:
        ckpt.close()
    return LoadedModel(model, record, tokenizer, tokenizer_dir, ckpt_dir, chosen, legacy)


def load_hf_dir(path: str | Path, *, mesh: str | None = None, dtype: str | None = None) -> LoadedModel:
    """An HF directory on one device (or ``mesh``). ``dtype`` sets activations and weights
    (default: the dtypes its ``model.json`` records, else bfloat16). Without a ``model.json`` (a
    model from elsewhere) the chat family is detected from the tokenizer (thinking off)."""
    p = Path(path).resolve()
    record = read_record(p)
    if record is not None:
        tokenizer, tokenizer_dir = open_tokenizer(p, record)
    else:
        tokenizer, tokenizer_dir = ChatTokenizer.from_dir(p), p
    if dtype is None and record is not None:
        model = load_hf(p, make_mesh(mesh) if mesh else None, dtype=record.config.dtype,
                        param_dtype=record.config.param_dtype)
    else:
        model = load_hf(p, make_mesh(mesh) if mesh else None, dtype=dtype or "bfloat16")
    if record is None:
        template = get_template(detect_family(tokenizer.chat_template, tokenizer.added_tokens), enable_thinking=False)
        record = describe(model.config, template, tokenizer, origin=f"hf:{p}")
    return LoadedModel(model, record, tokenizer, tokenizer_dir, p)


def load_model(path: str | Path, *, step: int | None = None, mesh: str | None = None, dtype: str | None = None,
               config: ModelConfig | None = None) -> LoadedModel:
    """The model of ``path``: an HF directory (:func:`load_hf_dir`; ``dtype`` applies), or a run,
    stage or ``checkpoints/`` directory (:func:`load_checkpoint`; ``step`` and ``config`` apply,
    the params keep the dtypes they trained in)."""
    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise SystemExit(f"{path}: no such directory")
    if is_hf_dir(p):
        return load_hf_dir(p, mesh=mesh, dtype=dtype)
    return load_checkpoint(p, step=step, mesh=mesh, config=config)
