"""MaxText itself as the reference for tests/models/test_maxtext_io.py.

From the ``maxtext`` wheel of the test install (``--no-deps``: the modules used need only
numpy/jax): ``checkpoint_conversion/utils/param_mapping.py``'s tables and hooks (``QWEN_`` for
Qwen2.5/Qwen3, ``LLAMA31_`` for Llama) write a checkpoint from HF weights as ``to_maxtext.py``
does (hooks per layer, scanned layers stacked at ``param_scan_axis``, a table entry the MaxText
model lacks skipped), saved as MaxText saves (Orbax v1 training Checkpointer, item ``items``,
ocdbt + zarr3); our exports are read back the way MaxText's ``load_params_from_path`` reads and
turned into HF tensors by the same hooks run backwards (``to_huggingface.py``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest
import torch
import transformers
from models_testlib import COMMON, LLAMA3_ROPE, HFCase, batch, build_case, forward, j
from orbax.checkpoint import v1 as ocp1

from prove_jax.models import ModelConfig
from prove_jax.models import maxtext_io as mio

try:
    from maxtext.checkpoint_conversion.utils import param_mapping as pm
    from maxtext.checkpoint_conversion.utils.tensor_handling import apply_hook_fns
except ImportError:  # pragma: no cover - the test install has it
    pytest.fail("MaxText's param_mapping missing: pip install --no-deps maxtext==0.2.5", pytrace=False)

TOL = 1e-4  # as tests/models/test_parity.py
SCAN_AXIS = 1  # MaxText's default param_scan_axis

# MaxText's per-layer shapes by key suffix, in the axis letters of our tensor tables: DenseGeneral
# kernels are in_features + out_features with heads kept split (maxtext/layers/linears.py,
# attentions.py), norms are [features], the embedding [vocab, emb]. The hooks' fixed transpose
# (``input.T.reshape(target_shape)``) pins which of these orders can give the right logits.
MT_DIMS = {
    "token_embedder-embedding": "v e", "decoder_norm-scale": "e", "logits_dense-kernel": "e v",
    "pre_self_attention_layer_norm-scale": "e", "post_self_attention_layer_norm-scale": "e",
    "self_attention-query-kernel": "e h d", "self_attention-key-kernel": "e k d",
    "self_attention-value-kernel": "e k d", "self_attention-out-kernel": "h d e",
    "self_attention-query-bias": "h d", "self_attention-key-bias": "k d", "self_attention-value-bias": "k d",
    "self_attention-query_norm-scale": "d", "self_attention-key_norm-scale": "d",
    "mlp-wi_0-kernel": "e m", "mlp-wi_1-kernel": "e m", "mlp-wo-kernel": "m e",
}
TABLES = {"qwen2": "QWEN", "qwen3": "QWEN", "llama": "LLAMA31"}
"""Our family -> the prefix of MaxText's ``*_MAXTEXT_TO_HF_PARAM_MAPPING`` / ``_HOOK_FN`` for it."""


@dataclasses.dataclass
class Case:
    hf: HFCase
    config: dict[str, Any]  # HF config.json as a dict (what MaxText's tables take)
    state: dict[str, np.ndarray]  # HF tensors (a tied head left out, as save_pretrained does)
    vocab: int  # MaxText's vocab (>= HF's: MaxText pads the embedding)
    table: str  # "QWEN" or "LLAMA31"

    def sizes(self) -> dict[str, int]:
        c = self.config
        return {"v": self.vocab, "e": c["hidden_size"], "h": c["num_attention_heads"], "k": c["num_key_value_heads"],
                "d": c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"], "m": c["intermediate_size"]}

    def model_config(self, **runtime: Any) -> ModelConfig:
        return ModelConfig.from_hf_dir(self.hf.path, dtype="float32", param_dtype="float32", **runtime)

    def mapping(self, scanned: bool) -> dict[str, Any]:
        """MaxText's table: ``params-...`` key -> HF key (unscanned) or per-layer keys (scanned)."""
        return getattr(pm, f"{self.table}_MAXTEXT_TO_HF_PARAM_MAPPING")(self.config, None, scanned)

    def hooks(self, scanned: bool, saving_to_hf: bool) -> dict[str, Any]:
        return getattr(pm, f"{self.table}_MAXTEXT_TO_HF_PARAM_HOOK_FN")(self.config, None, scanned,
                                                                        saving_to_hf=saving_to_hf)


def _qwen3_square(root: Path) -> HFCase:
    """Untied Qwen3 whose MLP kernels are square (intermediate == hidden): only values, not shapes,
    tell a transposed MLP kernel from the right one."""
    torch.manual_seed(1)
    cfg = transformers.Qwen3Config(vocab_size=1000, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
                                   rope_theta=1e6, max_position_embeddings=256, tie_word_embeddings=False)
    model = transformers.Qwen3ForCausalLM(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
    model.config._attn_implementation = "eager"
    path = root / "qwen3_square"
    model.save_pretrained(path)
    return HFCase("qwen3_square", path, model)


def _llama_untied(root: Path) -> HFCase:
    """Untied Llama, llama3 RoPE as models_testlib's ``llama``, head_dim 64 (not hidden / heads;
    its square root, like the tied case's 4, is a power of two, so MaxText's f32 query scaling
    round-trips bit for bit)."""
    cfg = transformers.LlamaConfig(**COMMON, **LLAMA3_ROPE, head_dim=64, rms_norm_eps=1e-5,
                                   tie_word_embeddings=False, initializer_range=0.1)
    return build_case("llama_untied", root, seed=2, config=cfg)


def build_cases(root: Path) -> dict[str, Case]:
    """qwen3_square (untied), qwen3 (tied; MaxText vocab padded to 1024), qwen2 (untied, q/k/v bias),
    llama_untied, llama (tied, llama3 RoPE; MaxText vocab padded to 1024)."""
    out = {}
    for hf, vocab in ((_qwen3_square(root), 1000), (build_case("qwen3", root), 1024), (build_case("qwen2", root), 1000),
                      (_llama_untied(root), 1000), (build_case("llama", root), 1024)):
        config = hf.model.config.to_dict()
        state = {k: v.detach().numpy().copy() for k, v in hf.model.state_dict().items()}
        if config["tie_word_embeddings"]:
            state.pop("lm_head.weight")
        out[hf.name] = Case(hf, config, state, vocab, TABLES[config["model_type"]])
    return out


def _suffix(mt_key: str) -> str:
    parts = mt_key.split("-")
    return "-".join(parts[3:] if parts[2].startswith("layers") else parts[2:]) if parts[1] == "decoder" else "-".join(parts[1:])


def _shape(case: Case, mt_key: str) -> tuple[int, ...]:
    sizes = case.sizes()
    return tuple(sizes[a] for a in MT_DIMS[_suffix(mt_key)].split())


def maxtext_tree(case: Case, scanned: bool, drop: str | None = None) -> dict[str, Any]:
    """The ``params`` collection MaxText's converter builds from the HF tensors (numpy).

    A table entry whose HF tensor the model lacks is skipped, as ``to_maxtext.py`` skips one its
    MaxText model lacks: a tied head (``logits_via_embedding``: no ``logits_dense``) in both tables,
    and the Qwen table's biases / qk-norm for the Qwen that has none.
    """
    mapping = case.mapping(scanned)
    hooks = case.hooks(scanned, saving_to_hf=False)
    flat = {}
    for mt_key, hf_keys in mapping.items():
        names = [hf_keys] if isinstance(hf_keys, str) else hf_keys
        if mt_key == drop or any(n not in case.state for n in names):
            continue
        shape = _shape(case, mt_key)
        parts = [np.asarray(apply_hook_fns(case.state[n], shape, hooks.get(mt_key))) for n in names]
        # to_maxtext.py: stack at param_scan_axis when the stacked tensor has that axis, else at 0
        flat[mt_key] = parts[0] if isinstance(hf_keys, str) else np.stack(
            parts, axis=SCAN_AXIS if len(shape) + 1 > SCAN_AXIS else 0)
    return mio._nest({tuple(k.split("-")): v for k, v in flat.items()})


def write_like_maxtext(root: Path, params: dict[str, Any], scanned: bool) -> Path:
    """What maxtext's save_weights_to_checkpoint writes: a TrainState at step 0, item ``items``."""
    ctx = ocp1.Context()
    ctx.array.saving.use_ocdbt = True
    ctx.array.saving.use_zarr3 = True
    checkpointer = ocp1.training.Checkpointer(root, context=ctx)
    state = {"step": 0, "params": params, "opt_state": {}}
    checkpointer.save_checkpointables(0, {"items": state}, custom_metadata={"scan_layers": scanned})
    checkpointer.close()
    return root / "0" / "items"


def read_like_maxtext(items: Path, like: dict[str, Any]) -> dict[str, Any]:
    """maxtext's load_params_from_path: a partial v1 load of ``params`` from the step directory."""
    ctx = ocp1.Context()
    ctx.pytree.loading.partial_load = True
    device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=device), like)
    with ctx:
        restored = ocp1.load(items.parent, {"params": abstract}, checkpointable_name="items")
    return jax.tree.map(np.asarray, restored["params"])


def to_hf(case: Case, params: dict[str, Any], scanned: bool) -> dict[str, np.ndarray]:
    """MaxText's to_huggingface direction: its hooks with saving_to_hf=True, layers unstacked."""
    mapping = case.mapping(scanned)
    hooks = case.hooks(scanned, saving_to_hf=True)
    flat = {"-".join(k): v for k, v in mio._flatten(params).items()}
    out = {}
    for mt_key, value in flat.items():
        hf_keys = mapping[mt_key]
        names = [hf_keys] if isinstance(hf_keys, str) else hf_keys
        axis = SCAN_AXIS if value.ndim > SCAN_AXIS else 0
        slices = [value] if isinstance(hf_keys, str) else [np.take(value, i, axis=axis) for i in range(len(names))]
        for name, x in zip(names, slices, strict=True):
            out[name] = np.asarray(apply_hook_fns(x, case.state[name].shape, hooks.get(mt_key)))
    return out


def logits(model: Any) -> np.ndarray:
    tokens, mask, positions = batch()
    return np.asarray(forward(model, *j(tokens, positions, mask)))


def max_diff(ours: np.ndarray, ref: np.ndarray) -> float:
    _, mask, _ = batch()
    assert np.isfinite(ours).all()
    return float(np.abs(ours - ref)[mask].max())
