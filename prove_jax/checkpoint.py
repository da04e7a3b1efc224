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
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import jax
import orbax.checkpoint as ocp
from jax.tree_util import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey


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
        step = self._step(step)
        out = self.manager.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))
        return dict(out["meta"])

    def wait(self) -> None:
        self.manager.wait_until_finished()

    def close(self) -> None:
        self.manager.wait_until_finished()
        self.manager.close()


def _is_abstract(tree: Any) -> bool:
    leaves = jax.tree.leaves(tree)
    return bool(leaves) and all(isinstance(x, jax.ShapeDtypeStruct) for x in leaves)
