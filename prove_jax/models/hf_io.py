"""Load HF checkpoints straight into sharded NNX models, and export back to HF directories.

Loading never materialises the model on one device: the model is built abstractly
(``nnx.eval_shape``), each parameter's target sharding comes from its logical axes and the rules
table, and ``jax.make_array_from_callback`` asks for exactly the slice each device holds; the
callback reads that slice from the mmapped safetensors file (``get_slice``).  Host memory stays
near one copy of the weights (plus one parameter in flight).

Export gathers one tensor at a time (per layer for scanned models) and streams it into sharded
safetensors files that ``transformers.AutoModelForCausalLM.from_pretrained`` loads with the same
logits, alongside a config.json carrying both legacy and 5.x RoPE keys, and the tokenizer /
generation files copied from the source directory.
"""

from __future__ import annotations

import json
import shutil
import weakref
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh

from prove_jax.models.config import ModelConfig
from prove_jax.models.decoder import Model, abstract_model
from prove_jax.models.families import (
    IGNORED_HF_SUFFIXES,
    TensorRule,
    hf_read_plan,
    hf_shape,
    jax_to_hf,
    rules_for,
)
from prove_jax.models.safetensors_io import INDEX_FILE, CheckpointReader, TensorSpec, write_sharded
from prove_jax.models.sharding import Rules, param_sharding

_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".msgpack", ".h5", ".ckpt", ".gguf")
_TIED_CHECK_ROWS = 8192

# Where each loaded model came from (for save_hf's tokenizer/config copy).  Kept outside the module:
# a static attribute would enter the NNX graphdef and force a recompile per checkpoint path.
_SOURCES: weakref.WeakKeyDictionary[Model, str] = weakref.WeakKeyDictionary()


class CheckpointMismatchError(ValueError):
    """The checkpoint's tensors do not match the config (missing, unexpected or misshapen)."""


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def _assignments(cfg: ModelConfig) -> list[tuple[str, TensorRule, int | None]]:
    """(jax path, rule, layer) for every parameter; layer=None for globals and stacked params."""
    out: list[tuple[str, TensorRule, int | None]] = []
    for rule in rules_for(cfg):
        if not rule.per_layer:
            out.append((rule.jax, rule, None))
        elif cfg.scan_layers:
            out.append((rule.jax_path(None), rule, None))
        else:
            out.extend((rule.jax_path(i), rule, i) for i in range(cfg.num_layers))
    return out


def _hf_keys(cfg: ModelConfig, rule: TensorRule, layer: int | None) -> list[str]:
    if not rule.per_layer:
        return [rule.hf_key()]
    if layer is None:
        return [rule.hf_key(i) for i in range(cfg.num_layers)]
    return [rule.hf_key(layer)]


def _check_tied_head(reader: CheckpointReader, cfg: ModelConfig) -> set[str]:
    """Tied config + ``lm_head.weight`` on disk (Granite-4.1-8B ships one): must equal the embedding.

    transformers 5.x silently *unties* on a differing head; refusing is safer than guessing.
    """
    if not cfg.tie_word_embeddings or "lm_head.weight" not in reader.file_of:
        return set()
    emb, head = "model.embed_tokens.weight", "lm_head.weight"
    if reader.shape[head] != reader.shape[emb]:
        raise CheckpointMismatchError(
            f"tied lm_head.weight shape {reader.shape[head]} != {reader.shape[emb]}"
        )
    rows = reader.shape[emb][0]
    for lo in range(0, rows, _TIED_CHECK_ROWS):
        sl = (slice(lo, min(rows, lo + _TIED_CHECK_ROWS)), slice(None))
        if not np.array_equal(reader.read(emb, sl), reader.read(head, sl)):
            raise CheckpointMismatchError(
                "tie_word_embeddings=true but lm_head.weight differs from model.embed_tokens.weight "
                "(transformers would untie them); fix the config (tie_word_embeddings=false) or the weights"
            )
    return {head}


def _load_param(
    reader: CheckpointReader,
    rule: TensorRule,
    layer: int | None,
    var: nnx.Variable,
    sharding: Any,
    cfg: ModelConfig,
) -> jax.Array:
    """One parameter, built shard by shard from HF slices directly in ``sharding``."""
    stacked = rule.per_layer and layer is None
    layer_shape = tuple(var.shape[1:]) if stacked else tuple(var.shape)
    want = hf_shape(rule, layer_shape)
    for key in _hf_keys(cfg, rule, layer):
        if reader.shape[key] != want:
            raise CheckpointMismatchError(
                f"{key}: checkpoint shape {reader.shape[key]}, config expects {want}"
            )
    dtype = np.dtype(var.dtype)

    def read_layer(i: int | None, index: tuple[slice, ...]) -> np.ndarray:
        hf_slices, finish = hf_read_plan(rule, layer_shape, index)
        block = reader.read(rule.hf_key(i), hf_slices)
        return np.ascontiguousarray(finish(block)).astype(dtype, copy=False)

    memo: dict[Any, np.ndarray] = {}

    def callback(index: tuple[slice, ...]) -> np.ndarray:
        index = tuple(index) + (slice(None),) * (len(var.shape) - len(index))
        key = tuple(s.indices(n) for s, n in zip(index, var.shape, strict=True))
        if key not in memo:  # replicated shards ask for the same block: read it once
            if stacked:
                lo, hi, _ = key[0]
                memo[key] = np.stack([read_layer(i, index[1:]) for i in range(lo, hi)])
            else:
                memo[key] = read_layer(layer, index)
        return memo[key]

    return jax.make_array_from_callback(tuple(var.shape), sharding, callback)


def load_hf(
    path: str | Path,
    mesh: Mesh | None = None,
    dtype: Any = jnp.bfloat16,
    *,
    param_dtype: Any = None,
    scan_layers: bool = False,
    remat: str = "none",
    attention_impl: str | None = None,
    rules: Rules | None = None,
) -> Model:
    """Load a local HF directory (single or sharded safetensors) into a Model.

    ``dtype`` is the activation dtype and, unless ``param_dtype`` is given, the weight dtype.
    With a ``mesh`` every parameter lands directly in the sharding the rules table gives it.
    Raises :class:`UnsupportedConfigError` for configs the decoder cannot run faithfully and
    :class:`CheckpointMismatchError` for missing/unexpected/misshapen tensors.
    """
    path = Path(path)
    runtime: dict[str, Any] = {
        "dtype": jnp.dtype(dtype).name,
        "param_dtype": jnp.dtype(param_dtype if param_dtype is not None else dtype).name,
        "scan_layers": scan_layers,
        "remat": remat,
        "attention_impl": attention_impl,
    }
    if rules is not None:
        runtime["sharding_rules"] = tuple(rules)
    cfg = ModelConfig.from_hf_dir(path, **runtime)
    graphdef, abstract_state = nnx.split(abstract_model(cfg, mesh))
    flat = list(nnx.to_flat_state(abstract_state))
    by_path = {_dotted(p): v for p, v in flat}

    with CheckpointReader(path) as reader:
        consumed = _check_tied_head(reader, cfg)
        plan = _assignments(cfg)
        planned_paths = {p for p, _, _ in plan}
        if planned_paths != set(by_path):
            raise RuntimeError(
                f"mapping table out of sync with the model: unmapped {sorted(set(by_path) - planned_paths)}, "
                f"unknown {sorted(planned_paths - set(by_path))}"
            )
        needed = {k for _, rule, layer in plan for k in _hf_keys(cfg, rule, layer)}
        missing = needed - set(reader.file_of)
        unexpected = {
            k for k in set(reader.file_of) - needed - consumed if not k.endswith(IGNORED_HF_SUFFIXES)
        }
        if missing or unexpected:
            raise CheckpointMismatchError(
                f"checkpoint {path} does not match its config: missing {sorted(missing)[:8]}"
                f"{'...' if len(missing) > 8 else ''}, unexpected {sorted(unexpected)[:8]}"
                f"{'...' if len(unexpected) > 8 else ''}"
            )
        # Read file by file so the reader's mmap stays on one shard at a time.
        plan.sort(key=lambda item: reader.file_of[_hf_keys(cfg, item[1], item[2])[0]])
        loaded: dict[str, jax.Array] = {}
        for jax_path, rule, layer in plan:
            var = by_path[jax_path]
            sharding = param_sharding(var, mesh, cfg.sharding_rules)
            loaded[jax_path] = _load_param(reader, rule, layer, var, sharding, cfg)

    new_flat = [(p, v.replace(loaded[_dotted(p)])) for p, v in flat]
    model = nnx.merge(graphdef, nnx.from_flat_state(new_flat))
    _SOURCES[model] = str(path)
    return model


def source_dir_of(model: Model) -> str | None:
    """The HF directory ``model`` was loaded from (None for split/merged copies or fresh inits)."""
    return _SOURCES.get(model)


def inherit_source(model: Model, like: Model) -> None:
    """``model`` (a transformed copy of ``like``, e.g. with LoRA) exports with ``like``'s side files."""
    if (source := _SOURCES.get(like)) is not None:
        _SOURCES[model] = source


def _to_host(x: jax.Array) -> np.ndarray:
    """Gather one (possibly sharded, possibly multi-host) array to host memory."""
    if x.is_fully_addressable:
        return np.asarray(jax.device_get(x))
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def _tensor_specs(model: Model, out_dtype: np.dtype | None) -> list[TensorSpec]:
    cfg = model.config
    extra = list(nnx.to_flat_state(nnx.state(model, nnx.Not(nnx.All(nnx.Param, nnx.Not(nnx.LoRAParam))))))
    if extra:  # adapters or QLoRA codes would be dropped silently: export lora.merge_lora(model)
        raise ValueError(f"save_hf: the model holds LoRA adapters or quantised weights ({_dotted(extra[0][0])}); "
                         "export prove_jax.models.lora.merge_lora(model) (or save_peft for the adapters)")
    by_path = {_dotted(p): v for p, v in nnx.to_flat_state(nnx.state(model, nnx.Param))}
    rules = rules_for(cfg)
    head = [r for r in rules if not r.per_layer and r.jax == "embed_tokens"]
    tail = [r for r in rules if not r.per_layer and r.jax != "embed_tokens"]
    per_layer = [r for r in rules if r.per_layer]
    order: list[tuple[TensorRule, int | None]] = [(r, None) for r in head]
    order += [(r, i) for i in range(cfg.num_layers) for r in per_layer]
    order += [(r, None) for r in tail]

    specs: list[TensorSpec] = []
    for rule, layer in order:
        stacked = rule.per_layer and cfg.scan_layers
        var = by_path[rule.jax_path(None if stacked else layer)]
        layer_shape = tuple(var.shape[1:]) if stacked else tuple(var.shape)
        dtype = np.dtype(out_dtype or var.dtype)

        def produce(
            var: nnx.Variable = var,
            rule: TensorRule = rule,
            layer: int | None = layer,
            stacked: bool = stacked,
            dtype: np.dtype = dtype,
        ) -> np.ndarray:
            x = var[...]
            host = _to_host(x[layer] if stacked else x)  # gather one layer's tensor, not the stack
            return jax_to_hf(rule, host).astype(dtype, copy=False)

        specs.append((rule.hf_key(layer), hf_shape(rule, layer_shape), dtype, produce))
    return specs


def _is_aux_file(p: Path) -> bool:
    """Tokenizer, chat template, generation config...: everything but weights and config."""
    return (
        p.is_file()
        and p.suffix not in _WEIGHT_SUFFIXES
        and not p.name.endswith(".index.json")
        and p.name != "config.json"
    )


def save_hf(
    model: Model,
    path: str | Path,
    *,
    source_dir: str | Path | None = None,
    max_shard_bytes: int = 2 * 1024**3,
    dtype: Any = None,
) -> Path:
    """Write a transformers-loadable directory: sharded safetensors + index, config.json, aux files.

    ``source_dir`` (default: the directory ``load_hf`` read this model object from) provides the
    tokenizer files / chat template / generation_config.json, copied unchanged, and the base
    config.json whose extra keys are kept.  ``dtype`` overrides the stored weight dtype.
    Works for sharded and multi-host models (one tensor gathered at a time; process 0 writes).
    """
    path = Path(path)
    writer = jax.process_index() == 0
    if writer:
        path.mkdir(parents=True, exist_ok=True)
    cfg = model.config
    out_dtype = np.dtype(jnp.dtype(dtype)) if dtype is not None else None
    specs = _tensor_specs(model, out_dtype)
    write_sharded(path, specs, max_shard_bytes, write=writer)
    if not writer:
        return path

    source = source_dir if source_dir is not None else source_dir_of(model)
    source = Path(source) if source is not None else None
    base: dict[str, Any] = {}
    if source is not None and (source / "config.json").exists():
        with open(source / "config.json") as f:
            base = json.load(f)
        for stale in ("rope_scaling", "rope_parameters", "layer_types", "quantization_config"):
            base.pop(stale, None)
    torch_dtype = (out_dtype or np.dtype(cfg.weight_dtype)).name
    hf_config = {**base, **cfg.to_hf_dict(torch_dtype=torch_dtype), "dtype": torch_dtype}
    with open(path / "config.json", "w") as f:
        json.dump(hf_config, f, indent=2)
    if source is not None and source.resolve() != path.resolve():
        for p in sorted(source.iterdir()):
            if _is_aux_file(p):
                shutil.copy2(p, path / p.name)
    for old in path.glob("model*.safetensors"):
        if old.name not in _written_files(path):
            old.unlink()
    return path


def _written_files(path: Path) -> set[str]:
    with open(path / INDEX_FILE) as f:
        return set(json.load(f)["weight_map"].values())
