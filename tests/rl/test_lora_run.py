"""A LoRA run through the launcher's stages: SFT and GRPO train adapters only, checkpoints hold the
adapters beside a frozen ``base/`` that ``model.json`` names, GRPO's engine decodes merged weights,
a GRPO stage after a LoRA SFT starts from (and is referenced to) the merged SFT policy, and the
export writes a merged HF directory plus a PEFT adapter that ``peft`` loads with our logits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np

from prove_jax.checkpoint import BASE_SUBDIR, Checkpointer, load_model
from prove_jax.model_record import read_record
from prove_jax.models.lora import LoraConfig, has_adapters, merge_lora
from tests.engine import engine_testlib as lib
from tests.rl.conftest import base_overrides, write_dataset
from tests.rl.rl_testlib import full_logits, param_arrays

LORA = ["lora.rank=4", "lora.alpha=8", "lora.targets=all_linear"]
SFT = ["sft.epochs=100", "sft.max_steps=4", "sft.rows_per_step=9", "sft.rows_per_micro=9", "sft.optim.lr=0.01",
       "sft.optim.decay_steps=100", "checkpoint.every=100"]
GRPO = ["grpo.prompts_per_step=2", "grpo.group_size=4", "grpo.rows_per_micro=4", "grpo.sampling.max_new_tokens=64",
        "grpo.optim.lr=0.002", "grpo.loss.kl_coef=0.01", "grpo.dynamic_sampling=false"]


def test_a_lora_run_trains_checkpoints_exports_and_resumes_adapters(live: dict[str, Any], tmp_path: Path) -> None:
    from prove_jax.launch import main

    run = tmp_path / "run"
    lib.build_tokenizer(live, run / "tokenizer")
    examples = lib.gold_examples(live) + lib.domain_examples(live)
    write_dataset(run / "data", {"train": examples, "test": examples[:2]})
    common = [*base_overrides(run), *LORA, *SFT, *GRPO, "eval.limit=2"]
    main([*common, "stages=[sft,grpo]", "grpo.steps=1"])

    # SFT: model.json names the adapters and the base; the steps hold adapters + their moments only
    sft_ck = run / "sft" / "checkpoints"
    record = read_record(sft_ck)
    assert record is not None and record.lora == LoraConfig(rank=4, alpha=8.0) and record.base_dir == BASE_SUBDIR
    base_record = read_record(sft_ck / BASE_SUBDIR)
    assert base_record is not None and base_record.lora is None
    ck = Checkpointer(sft_ck)
    try:
        step = ck.latest_step()
        keys = set(json.loads((sft_ck / str(step) / "state" / "_METADATA").read_text())["tree_metadata"])
    finally:
        ck.close()
    param_keys = [k for k in keys if k.startswith("('params.")]
    assert len(param_keys) == 2 * 7 * 2 and all("_lora_a" in k or "_lora_b" in k for k in param_keys)
    assert all("_lora_" in k for k in keys if ".mu." in k)  # AdamW moments for the adapters only

    sft = load_model(run / "sft")
    assert has_adapters(sft.model) and sft.step == step
    init = load_model(sft_ck / BASE_SUBDIR, dtype="float32").model
    tokens = jnp.asarray(np.random.default_rng(0).integers(0, len(sft.tokenizer), (2, 40)), jnp.int32)
    sft_logits = np.asarray(full_logits(sft.model, tokens))
    assert np.abs(sft_logits - np.asarray(full_logits(init, tokens))).max() > 1e-3  # the adapters trained

    # GRPO's base is the merged SFT policy (so its KL reference is the SFT policy), its engine merged
    grpo_base = load_model(run / "grpo" / "checkpoints" / BASE_SUBDIR, dtype="float32").model
    for a, b in zip(param_arrays(grpo_base), param_arrays(merge_lora(sft.model)), strict=True):
        np.testing.assert_array_equal(a, b)
    summary = json.loads((run / "grpo" / "summary.json").read_text())
    assert summary["steps"] == 1 and summary["weight_sync"]["mode"].startswith("LoRA merge")

    # Resume: asking for more steps continues the adapters from the checkpoint
    main([*common, "stages=[grpo]", "grpo.steps=2"])
    assert json.loads((run / "grpo" / "summary.json").read_text())["steps"] == 2

    # Eval and export: merged HF dir equal to the adapted model, and a PEFT dir over grpo's base
    main([*common, "stages=[eval,export]"])
    assert set(json.loads((run / "eval" / "summary.json").read_text())) == {"initial", "sft", "grpo"}
    grpo = load_model(run / "grpo")
    assert has_adapters(grpo.model) and grpo.step == 2
    hf = load_model(run / "hf", dtype="float32")
    assert not has_adapters(hf.model) and read_record(run / "hf").lora is None
    want = np.asarray(full_logits(grpo.model, tokens))
    np.testing.assert_allclose(np.asarray(full_logits(hf.model, tokens)), want, atol=2e-5, rtol=0)
    peft_cfg = json.loads((run / "hf_peft" / "adapter_config.json").read_text())
    assert peft_cfg["r"] == 4 and peft_cfg["base_model_name_or_path"].endswith("grpo/checkpoints/base")
    assert json.loads((run / "export.json").read_text())["peft_dir"] == str(run / "hf_peft")

    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base_hf = AutoModelForCausalLM.from_pretrained(peft_cfg["base_model_name_or_path"], torch_dtype=torch.float32)
    with torch.no_grad():
        got = PeftModel.from_pretrained(base_hf, run / "hf_peft")(torch.tensor(np.asarray(tokens))).logits.numpy()
    np.testing.assert_allclose(got, want, atol=2e-4, rtol=0)
