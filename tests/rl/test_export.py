"""``python -m prove_jax.export``: a real SFT checkpoint -> an HF directory that transformers loads
with our logits; the launcher's export stage writes the same weights; clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import transformers
from flax import nnx
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from prove_jax.checkpoint import Checkpointer, restore_model
from prove_jax.config import LaunchConfig
from prove_jax.export import export_checkpoint, main, resolve_checkpoint_dir
from prove_jax.models import Model
from prove_jax.models.safetensors_io import INDEX_FILE
from prove_jax.pipeline.context import Run
from prove_jax.yamlconf import build
from tests.rl.conftest import base_overrides

TOL = 1e-4  # tests/models/test_parity.py: our f32 forward vs transformers' f32 eager forward
SEQ = 64


@nnx.jit
def _logits(model: Model, tokens: jax.Array) -> jax.Array:
    positions = jnp.broadcast_to(jnp.arange(tokens.shape[1], dtype=jnp.int32), tokens.shape)
    return model(tokens, positions)[0]


def _run(run_dir: Path) -> Run:
    """The Run of the launch config stored in the SFT checkpoint (what export reads)."""
    ck = Checkpointer(run_dir / "sft" / "checkpoints")
    try:
        return Run(build(LaunchConfig, ck.read_meta()["config"]))
    finally:
        ck.close()


def _trained(run_dir: Path, run: Run) -> Model:
    """The SFT checkpoint's params in the model the launch config describes (independent of
    the checkpoint's own model.json, which export reads)."""
    ck = Checkpointer(run_dir / "sft" / "checkpoints")
    try:
        return restore_model(run.model_config(), ck, ck.latest_step(), run.mesh)
    finally:
        ck.close()


def _tensors(out: Path) -> dict[str, np.ndarray]:
    files = sorted(set(json.loads((out / INDEX_FILE).read_text())["weight_map"].values()))
    return {k: v for f in files for k, v in load_file(out / f).items()}


def test_export_loads_in_transformers_with_our_logits(sft_run: Path, tmp_path: Path) -> None:
    out = main(["--checkpoint", str(sft_run), "--out", str(tmp_path / "hf")])  # a run dir: its SFT stage
    assert out == tmp_path / "hf"
    run = _run(sft_run)
    tokens = np.random.default_rng(0).integers(0, len(run.tokenizer), (2, SEQ)).astype(np.int32)
    trained = np.asarray(_logits(_trained(sft_run, run), jnp.asarray(tokens)))

    hf = transformers.AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32).eval()
    hf.config._attn_implementation = "eager"
    assert type(hf) is transformers.Qwen3ForCausalLM
    with torch.no_grad():
        ref = hf(input_ids=torch.tensor(tokens.astype(np.int64)),
                 position_ids=torch.arange(SEQ).expand(2, SEQ)).logits.numpy()
    assert ref.shape == trained.shape and np.isfinite(trained).all()
    assert np.abs(ref).std() > 100 * TOL  # the comparison is not vacuous
    assert float(np.abs(trained - ref).max()) <= TOL

    # The exported weights are the checkpoint's, not the initial model's: SFT moved the logits far.
    initial = np.asarray(_logits(run.initial_model(), jnp.asarray(tokens)))
    assert float(np.abs(initial - ref).max()) > 100 * TOL

    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "qwen3" and config["torch_dtype"] == "float32"
    assert config["vocab_size"] == run.model_config().vocab_size >= len(run.tokenizer)
    # The run's tokenizer files travel with the weights; the tiny BPE loads with `tokenizers`
    # alone (no transformers.AutoTokenizer) and encodes as the run's tokenizer does.
    assert (out / "tokenizer.json").read_bytes() == (run.tokenizer_dir / "tokenizer.json").read_bytes()
    text = '<tool_call>\n{"name": "banking_get_balance", "arguments": {"account": "chk-1"}}\n</tool_call>'
    assert Tokenizer.from_file(str(out / "tokenizer.json")).encode(text, add_special_tokens=False).ids \
        == run.tokenizer.encode(text)


def test_stage_dir_step_and_dtype_and_the_launch_stage_write_the_same_weights(
        sft_run: Path, run_copy: Path, tmp_path: Path) -> None:
    from prove_jax.launch import main as launch

    ck_dir = sft_run / "sft" / "checkpoints"
    ck = Checkpointer(ck_dir)
    step = ck.latest_step()
    ck.close()
    assert step is not None
    f32 = _tensors(export_checkpoint(sft_run / "sft", tmp_path / "f32", step=step))
    bf16_dir = main(["--checkpoint", str(ck_dir), "--out", str(tmp_path / "bf16"), "--step", str(step),
                     "--dtype", "bfloat16", "--mesh", "fsdp=4,tensor=2"])
    assert json.loads((bf16_dir / "config.json").read_text())["torch_dtype"] == "bfloat16"
    bf16 = _tensors(bf16_dir)
    assert f32.keys() == bf16.keys() and len(f32) > 10
    for k, v in f32.items():
        assert v.dtype == np.float32 and bf16[k].dtype == jnp.bfloat16, k
        np.testing.assert_array_equal(bf16[k], v.astype(jnp.bfloat16), err_msg=k)

    # The launcher's export stage (on a copy of the run: it writes its marker there) goes through
    # export_checkpoint too and writes the same tensors.
    summary = launch([*base_overrides(run_copy), "stages=[export]"])
    assert summary["stages"]["export"] == {"dir": str(run_copy / "hf"), "source": "sft"}
    staged = _tensors(run_copy / "hf")
    assert staged.keys() == f32.keys()
    for k, v in f32.items():
        np.testing.assert_array_equal(staged[k], v, err_msg=k)
    assert (run_copy / "hf" / "tokenizer.json").is_file()


def test_run_dir_prefers_grpo_checkpoints_over_sft(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "sft" / "checkpoints" / "24").mkdir(parents=True)
    (run / "grpo" / "checkpoints").mkdir(parents=True)  # a GRPO stage that never saved
    assert resolve_checkpoint_dir(run) == run / "sft" / "checkpoints"
    (run / "grpo" / "checkpoints" / "3.orbax-checkpoint-tmp-1").mkdir()  # an interrupted save
    assert resolve_checkpoint_dir(run) == run / "sft" / "checkpoints"
    (run / "grpo" / "checkpoints" / "2").mkdir()
    assert resolve_checkpoint_dir(run) == run / "grpo" / "checkpoints"
    assert resolve_checkpoint_dir(run / "sft") == run / "sft" / "checkpoints"


def test_clear_errors_without_a_checkpoint_or_its_config(tmp_path: Path) -> None:
    empty = tmp_path / "run"
    (empty / "sft").mkdir(parents=True)
    with pytest.raises(SystemExit, match="no checkpoint found under"):
        main(["--checkpoint", str(empty), "--out", str(tmp_path / "hf")])

    ck = Checkpointer(tmp_path / "bare" / "checkpoints")
    ck.save(1, {"params": {"w": jnp.zeros((2,))}}, {"stage": "sft"}, force=True)
    ck.close()
    with pytest.raises(SystemExit, match="no launch config"):
        export_checkpoint(tmp_path / "bare", tmp_path / "hf")
    with pytest.raises(SystemExit, match="has no step 7"):
        export_checkpoint(tmp_path / "bare", tmp_path / "hf", step=7)
    assert not (tmp_path / "hf").exists()
