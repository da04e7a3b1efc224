"""Self-describing model directories (``model.json`` + copied tokenizer files): a run started from
an HF directory still exports and serves after that directory is gone, with the same weights,
files and logits as before; a checkpoint written before ``model.json`` existed loads through the
launch config in its metadata; the record round-trips exactly and refuses a swapped tokenizer."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest

from prove_jax.chat import get_template, train_tiny_tokenizer
from prove_jax.checkpoint import Checkpointer, load_model, restore_model
from prove_jax.export import export_checkpoint
from prove_jax.model_record import (
    RECORD_FILE,
    TOKENIZER_SUBDIR,
    ModelRecord,
    ModelRecordError,
    config_from_json,
    config_to_json,
    describe,
    open_tokenizer,
    read_record,
    write_record,
)
from prove_jax.models import Model, Qwen3Config, init_model, save_hf
from prove_jax.serve import load_policy
from tests.engine import engine_testlib as lib
from tests.rl.conftest import write_dataset
from tests.rl.rl_testlib import full_logits, param_arrays

SEQ = 48


def _assert_same_params(a: Model, b: Model) -> None:
    pa, pb = param_arrays(a), param_arrays(b)
    assert len(pa) == len(pb) > 10
    for x, y in zip(pa, pb, strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


# ---- the record alone --------------------------------------------------------------------------------
def test_record_round_trips_exactly_and_refuses_a_swapped_tokenizer(live: dict[str, Any], tmp_path: Path) -> None:
    tok_dir = train_tiny_tokenizer("qwen3", lib.corpus(live), 400, out_dir=tmp_path / "tok")
    (tok_dir / "generation_config.json").write_text('{"do_sample": false}')
    config = Qwen3Config(vocab_size=448, hidden_size=32, intermediate_size=64, num_layers=2, num_heads=2,
                         num_kv_heads=1, head_dim=16, eos_token_id=(3, 5), dtype="bfloat16", param_dtype="float32",
                         scan_layers=True, remat="dots", attention_impl="xla", rope_theta=5e5)
    back = config_from_json(json.loads(json.dumps(config_to_json(config))))
    assert back == config and type(back) is Qwen3Config and back.eos_token_id == (3, 5)

    from prove_jax.chat import ChatTokenizer

    tokenizer = ChatTokenizer.from_dir(tok_dir)
    template = get_template("qwen3", enable_thinking=False)
    ckpt = tmp_path / "ck"
    written = write_record(ckpt, describe(config, template, tokenizer, train_mesh="fsdp=2", origin="hf:/gone"),
                           copy_tokenizer_from=tok_dir)
    assert written.tokenizer_dir == TOKENIZER_SUBDIR
    assert set(written.tokenizer_files) == {"tokenizer.json", "tokenizer_config.json", "generation_config.json"}
    for name in written.tokenizer_files:  # copies, not links: the source may vanish
        assert (ckpt / TOKENIZER_SUBDIR / name).read_bytes() == (tok_dir / name).read_bytes()
    assert read_record(ckpt) == written
    shutil.rmtree(tok_dir)
    got, folder = open_tokenizer(ckpt, written)
    assert folder == ckpt / TOKENIZER_SUBDIR and len(got) == len(tokenizer)

    # a tokenizer whose control ids moved would corrupt every turn: refused, naming the ids
    moved = dataclasses.replace(written.special, end_of_turn=written.special.end_of_turn + 1)
    with pytest.raises(ModelRecordError, match="gives special ids"):
        open_tokenizer(ckpt, dataclasses.replace(written, special=moved))
    (ckpt / TOKENIZER_SUBDIR / "generation_config.json").unlink()
    with pytest.raises(ModelRecordError, match="not there"):
        read_record(ckpt)
    with pytest.raises(ModelRecordError, match="format"):
        ModelRecord.from_json({**written.to_json(), "format": 99})
    assert read_record(tmp_path) is None  # no model.json: an HF dir from elsewhere, or an old checkpoint


# ---- a run started from an HF directory ---------------------------------------------------------------
def _hf_run_overrides(run: Path, hf: Path) -> list[str]:
    return [f"out_dir={run}", f"data.dir={run / 'data'}", f"model.hf_dir={hf}", "model.family=qwen3",
            "env.backend=inprocess", f"env.domains={json.dumps(list(lib.DOMAINS))}", "view.mode=full",
            "progress=false", "engine.slots=8", "engine.max_chunk=256", "episode.max_tokens=2048",
            "engine.max_len=2048", "stages=[sft]", "sft.max_steps=2", "sft.rows_per_step=4", "sft.rows_per_micro=4",
            "sft.optim.lr=0.01", "sft.optim.warmup_steps=1", "checkpoint.every=100"]


def _hf_dir(live: dict[str, Any], root: Path) -> Path:
    """A tiny random Qwen3 with the live-corpus tokenizer, as an HF directory (what a user would
    point ``model.hf_dir`` at)."""
    tok = lib.build_tokenizer(live, root / "tok")
    config = lib.tiny_config(-(-len(tok) // 64) * 64, initializer_range=0.1, eos_token_id=tok.eos_id,
                             pad_token_id=tok.pad_id)
    return save_hf(init_model(config, seed=0), root / "hf-start", source_dir=root / "tok")


def test_a_run_from_an_hf_dir_exports_and_serves_after_the_dir_is_gone(live: dict[str, Any], tmp_path: Path) -> None:
    from prove_jax.config import LaunchConfig, load
    from prove_jax.launch import main
    from prove_jax.pipeline.context import Run

    hf = _hf_dir(live, tmp_path)
    (hf / "generation_config.json").write_text('{"do_sample": false, "eos_token_id": 1}')
    base = json.loads((hf / "config.json").read_text())
    (hf / "config.json").write_text(json.dumps({**base, "custom_note": "kept by export"}))
    run = tmp_path / "run"
    examples = lib.gold_examples(live) + lib.domain_examples(live)
    write_dataset(run / "data", {"train": examples, "test": examples[:4]})
    overrides = _hf_run_overrides(run, hf)
    main(overrides)
    ck_dir = run / "sft" / "checkpoints"
    record = read_record(ck_dir)
    assert record is not None and record.origin == f"hf:{hf.resolve()}" and record.chat_family == "qwen3"
    assert {"tokenizer.json", "config.json", "generation_config.json"} <= set(record.tokenizer_files)

    # What the launch-config path gives while the HF dir is still there: the reference.
    launch = Run(load(LaunchConfig, None, overrides))
    ck = Checkpointer(ck_dir)
    try:
        reference = restore_model(launch.model_config(), ck, ck.latest_step(), None)
    finally:
        ck.close()
    assert not all(np.array_equal(a, b) for a, b in zip(param_arrays(reference), param_arrays(launch.initial_model()),
                                                        strict=True))  # SFT moved the weights
    old_export = save_hf(reference, tmp_path / "old-export", source_dir=hf)  # what export wrote before

    hf.rename(tmp_path / "moved-away")
    loaded = load_model(run)  # the run dir: its SFT checkpoints, described by model.json
    assert not loaded.legacy and loaded.step == 2 and loaded.tokenizer_dir == ck_dir / TOKENIZER_SUBDIR
    assert loaded.record.config == reference.config
    _assert_same_params(loaded.model, reference)

    out = export_checkpoint(run, tmp_path / "export")
    got, want = _files(out), _files(old_export)
    assert set(got) == set(want) | {RECORD_FILE}
    for name, data in want.items():  # weights, index, config.json (its extra key kept), tokenizer files
        assert got[name] == data, name
    assert json.loads(got["config.json"])["custom_note"] == "kept by export"
    exported = read_record(out)
    assert exported is not None and exported.tokenizer_dir == "." and exported.chat_family == "qwen3"
    assert exported.config == record.config and exported.special == record.special

    from_ckpt = load_policy(run, dtype="float32")
    from_export = load_policy(out, dtype="float32")
    assert from_ckpt.name == "run-sft-2" and from_ckpt.source == f"{ck_dir}@2"
    assert from_ckpt.template.family == from_export.template.family == "qwen3"
    assert len(from_ckpt.tokenizer) == len(from_export.tokenizer) == len(loaded.tokenizer)
    _assert_same_params(from_ckpt.model, from_export.model)
    tokens = jnp.asarray(np.random.default_rng(0).integers(0, len(loaded.tokenizer), (2, SEQ)), jnp.int32)
    a, b = np.asarray(full_logits(from_ckpt.model, tokens)), np.asarray(full_logits(from_export.model, tokens))
    assert np.abs(a).std() > 1e-3
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, np.asarray(full_logits(reference, tokens)))

    # Without model.json this checkpoint would need the HF dir it no longer has: said plainly.
    old_style = tmp_path / "old-style" / "sft" / "checkpoints"
    shutil.copytree(ck_dir, old_style)
    (old_style / RECORD_FILE).unlink()
    with pytest.raises(SystemExit, match=r"written before model\.json existed"):
        load_model(old_style)


# ---- checkpoints written before model.json ---------------------------------------------------------------
def test_a_checkpoint_without_model_json_loads_through_its_launch_config(
        sft_run: Path, run_copy: Path, tmp_path: Path) -> None:
    old = run_copy / "sft" / "checkpoints"
    steps = [p for p in old.iterdir() if p.name.isdigit()]
    assert steps and not any(p.name == RECORD_FILE for s in steps for p in s.rglob("*"))  # only Orbax's items
    (old / RECORD_FILE).unlink()
    shutil.rmtree(old / TOKENIZER_SUBDIR)  # now exactly what the trainers wrote before records existed

    new_style, old_style = load_model(sft_run / "sft"), load_model(run_copy / "sft")
    assert old_style.legacy and not new_style.legacy
    assert old_style.tokenizer_dir == sft_run / "tokenizer"  # the launch config's tokenizer.dir, as before
    assert old_style.record.config == new_style.record.config
    assert old_style.record.special == new_style.record.special and old_style.record.chat_family == "qwen3"
    assert old_style.record.origin == new_style.record.origin == "init:qwen3 seed=0"
    _assert_same_params(old_style.model, new_style.model)

    a, b = export_checkpoint(sft_run, tmp_path / "new"), export_checkpoint(run_copy, tmp_path / "old")
    assert _files(a) == _files(b)  # the same directory, model.json included

    policy = load_policy(run_copy, dtype="float32")
    assert policy.name == "run-sft-24" and policy.template.family == "qwen3"
    _assert_same_params(policy.model, new_style.model)
