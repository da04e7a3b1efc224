"""A model family is one registration: a made-up family, registered here and nowhere else, goes
through everything a built-in one does.

``toyllm`` has its own config class and flag defaults, its own HF names (GPT-2 style ``[in, out]``
projections, so loading and export transpose), its own ``config.json`` key, and a chat format of its
own (``toychat``: ChatML with another default system prompt and a tiny tokenizer without Qwen's
think tags). Registered as one :class:`~prove_jax.family.Family`, it initialises from a launch
config's ``model`` section, exports to an HF directory and loads back with identical params and
logits, gets its chat template and a tiny tokenizer, and its ``model.json`` writes, reads and loads
through ``checkpoint.load_model``. Unregistered, every one of those lookups fails.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from safetensors import safe_open

from prove_jax.chat import ChatTokenizer, Qwen25Template, detect_family, family_tokens, get_template
from prove_jax.chat.families import ChatFamily
from prove_jax.chat.jinja import chatml_jinja
from prove_jax.chat.tiny_tokenizer import train_tiny_tokenizer
from prove_jax.checkpoint import load_model
from prove_jax.family import Family, get_family, register_family, registered
from prove_jax.model_record import (
    ModelSpec,
    default_chat_family,
    describe,
    open_tokenizer,
    read_record,
    write_record,
)
from prove_jax.models import (
    FamilyConfig,
    Model,
    ModelConfig,
    ModelFamily,
    TensorRule,
    UnsupportedConfigError,
    init_model,
    load_hf,
    model_family,
    save_hf,
)
from prove_jax.models.config import FAMILY_CLASSES
from prove_jax.models.families import rules_for


class ToyConfig(FamilyConfig):
    """qk-norm and an o_proj bias on by default; logits divided by ``logit_scale``."""

    FAMILY = "toyllm"
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"qk_norm": True, "o_bias": True}


_B = "toy.blocks.{i}"
TOY_TENSORS: tuple[TensorRule, ...] = (
    TensorRule("embed_tokens", "toy.wte", "v e", "v e"),
    TensorRule("layers.{i}.input_norm.weight", f"{_B}.ln1.g", "e", "e"),
    TensorRule("layers.{i}.attn.q_proj", f"{_B}.attn.wq", "h d e", "e (h d)"),  # [in, out]: transposed
    TensorRule("layers.{i}.attn.k_proj", f"{_B}.attn.wk", "k d e", "e (k d)"),
    TensorRule("layers.{i}.attn.v_proj", f"{_B}.attn.wv", "k d e", "e (k d)"),
    TensorRule("layers.{i}.attn.o_proj", f"{_B}.attn.wo", "e h d", "(h d) e"),
    TensorRule("layers.{i}.attn.o_bias", f"{_B}.attn.bo", "e", "e", when="o_bias"),
    TensorRule("layers.{i}.attn.q_norm.weight", f"{_B}.attn.qn", "d", "d", when="qk_norm"),
    TensorRule("layers.{i}.attn.k_norm.weight", f"{_B}.attn.kn", "d", "d", when="qk_norm"),
    TensorRule("layers.{i}.post_norm.weight", f"{_B}.ln2.g", "e", "e"),
    TensorRule("layers.{i}.mlp.gate_proj", f"{_B}.mlp.w1", "m e", "e m"),
    TensorRule("layers.{i}.mlp.up_proj", f"{_B}.mlp.w3", "m e", "e m"),
    TensorRule("layers.{i}.mlp.down_proj", f"{_B}.mlp.w2", "e m", "m e"),
    TensorRule("final_norm.weight", "toy.ln_f.g", "e", "e"),
    TensorRule("lm_head", "toy.head", "v e", "e v", when="untied"),
)


@dataclasses.dataclass(frozen=True)
class ToyTemplate(Qwen25Template):
    """ChatML with the toy's own default system prompt."""

    family: str = "toychat"
    default_system: str = "You are ToyLLM, a made-up model."


TOY_TOKENS = (("<|toy_pad|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<tool_call>", False),
              ("</tool_call>", False), ("<tool_response>", False), ("</tool_response>", False))

TOY = Family(
    model=ModelFamily(
        ToyConfig, tensors=TOY_TENSORS, architectures=("ToyLLMForCausalLM",), chat_family="toychat",
        from_hf=lambda hf: {"qk_norm": True, "o_bias": bool(hf.get("o_bias", True)),
                            "logits_scaling": float(hf.get("logit_scale", 1.0))},
        to_hf=lambda cfg: {"o_bias": cfg.o_bias, "logit_scale": cfg.logits_scaling},
    ),
    chat=ChatFamily(
        "toychat", ToyTemplate, markers=("<|im_start|>", "You are ToyLLM"), tiny_tokens=TOY_TOKENS,
        eos="<|im_end|>", pad="<|toy_pad|>",
        jinja=lambda: chatml_jinja(thinking=False, default_system=ToyTemplate.default_system),
    ),
)

TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Find a thing.",
                                           "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]


def _conversations() -> list[list[dict[str, Any]]]:
    return [[{"role": "user", "content": f"Where is item {i}? It was near the {w} shelf."},
             {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup", "arguments": {"q": f"{w} {i}"}}]},
             {"role": "tool", "content": f'{{"shelf": "{w}", "row": {i}}}'},
             {"role": "assistant", "content": f"Item {i} is on the {w} shelf, row {i}."}]
            for i in range(40) for w in ("red", "blue", "green")]


@pytest.fixture
def toy() -> Iterator[Family]:
    with registered(TOY) as family:
        yield family


@nnx.jit
def _logits(model: Model, tokens: jax.Array) -> jax.Array:
    positions = jnp.broadcast_to(jnp.arange(tokens.shape[1], dtype=jnp.int32), tokens.shape)
    return model(tokens, positions)[0]


def _randomise(model: Model, seed: int) -> None:
    """Every param random (norms start at 1 and biases at 0, which would hide a wrong mapping)."""
    state = nnx.state(model, nnx.Param)
    leaves, treedef = jax.tree.flatten(state)
    keys = jax.random.split(jax.random.key(seed), len(leaves))
    nnx.update(model, jax.tree.unflatten(treedef, [0.1 * jax.random.normal(k, x.shape, x.dtype)
                                                  for k, x in zip(keys, leaves, strict=True)]))


def _params(model: Model) -> dict[str, np.ndarray]:
    return {".".join(map(str, p)): np.asarray(v[...]) for p, v in nnx.to_flat_state(nnx.state(model, nnx.Param))}


def test_a_family_registered_in_one_place_goes_everywhere(toy: Family, tmp_path: Path) -> None:
    # the registry answers for it: config class, chat format, template, tiny tokenizer layout
    assert FAMILY_CLASSES["toyllm"] is ToyConfig and get_family("toyllm") == toy
    template = get_template("toychat")
    assert isinstance(template, ToyTemplate)
    assert template.render([{"role": "user", "content": "hi"}]).startswith(
        "<|im_start|>system\nYou are ToyLLM, a made-up model.<|im_end|>\n")
    corpus = [template.render(c, TOOLS) for c in _conversations()]
    tok_dir = train_tiny_tokenizer("toychat", corpus, 320, out_dir=tmp_path / "tok")
    tokenizer = ChatTokenizer.from_dir(tok_dir)
    assert [tokenizer.token_id(t) for t in family_tokens("toychat")] == list(range(len(tokenizer) - 7, len(tokenizer)))
    assert tokenizer.eos_id == tokenizer.token_id("<|im_end|>") and tokenizer.pad_id == tokenizer.token_id("<|toy_pad|>")
    assert detect_family(tokenizer.chat_template, tokenizer.added_tokens) == "toychat"
    assert tokenizer.decode(tokenizer.encode(corpus[0])) == corpus[0]

    # a launch config's model section: ModelSpec gives the family's config class and chat format
    spec = ModelSpec(family="toyllm", init={"hidden_size": 32, "intermediate_size": 64, "num_layers": 2,
                                            "num_heads": 4, "num_kv_heads": 2, "head_dim": 8, "logits_scaling": 2.0})
    config = spec.model_config(lambda: tokenizer)
    assert type(config) is ToyConfig and (config.qk_norm, config.o_bias, config.qkv_bias) == (True, True, False)
    assert spec.chat_family(lambda: tokenizer) == "toychat"
    assert len(rules_for(config)) == 15

    # initialise, export in the family's own HF layout, load back: identical params and logits
    model = init_model(config, seed=1)
    _randomise(model, seed=2)
    export = save_hf(model, tmp_path / "hf", source_dir=tok_dir)
    hf_config = json.loads((export / "config.json").read_text())
    assert (hf_config["model_type"], hf_config["architectures"], hf_config["logit_scale"]) == (
        "toyllm", ["ToyLLMForCausalLM"], 2.0)
    with safe_open(next(export.glob("*.safetensors")), "np") as f:
        assert f.get_slice("toy.blocks.1.attn.wq").get_shape() == [32, 32]  # [hidden, heads * head_dim]
        assert f.get_slice("toy.head").get_shape() == [32, config.vocab_size]
        np.testing.assert_array_equal(f.get_tensor("toy.blocks.0.mlp.w2"),
                                      np.asarray(model.layers[0].mlp.down_proj[...]).T)
    again = load_hf(export, dtype=jnp.float32)
    assert again.config == config
    before, after = _params(model), _params(again)
    assert before.keys() == after.keys() and len(before) == 2 * 12 + 3
    for name in before:
        np.testing.assert_array_equal(before[name], after[name], err_msg=name)
    tokens = jnp.asarray([tokenizer.encode(corpus[5])[:24]], jnp.int32)
    np.testing.assert_array_equal(np.asarray(_logits(model, tokens)), np.asarray(_logits(again, tokens)))

    # model.json: written beside the export, read back equal, loads through the one loader
    record = write_record(export, describe(config, get_template(spec.chat_family(lambda: tokenizer)), tokenizer,
                                           origin=spec.origin))
    assert read_record(export) == record and record.chat_family == "toychat"
    assert isinstance(record.template(), ToyTemplate) and type(record.config) is ToyConfig
    assert open_tokenizer(export, record)[0].token_id("<|toy_pad|>") == tokenizer.pad_id
    loaded = load_model(export)
    assert loaded.record == record and loaded.model.config == config
    np.testing.assert_array_equal(np.asarray(_logits(loaded.model, tokens)), np.asarray(_logits(model, tokens)))


def test_without_the_registration_nothing_knows_it(tmp_path: Path) -> None:
    """The registration is the only place: unregistered, each consumer refuses the family."""
    with registered(TOY):
        config = ToyConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_layers=1, num_heads=2,
                           num_kv_heads=1, head_dim=8)
        hf = config.to_hf_dict()
    assert "toyllm" not in FAMILY_CLASSES
    with pytest.raises(UnsupportedConfigError, match="toyllm"):
        ModelConfig.from_hf_dict(hf)
    with pytest.raises(UnsupportedConfigError, match="toyllm"):
        ToyConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_layers=1, num_heads=2, num_kv_heads=1,
                  head_dim=8)
    with pytest.raises(ValueError, match="toychat"):
        get_template("toychat")
    with pytest.raises(ValueError, match="toychat"):
        family_tokens("toychat")
    with pytest.raises(UnsupportedConfigError, match="toyllm"):
        default_chat_family("toyllm")


def test_registration_is_all_or_nothing() -> None:
    """Names are taken once, and a family that cannot register leaves nothing behind."""
    with registered(TOY), pytest.raises(ValueError, match="already registered"):
        register_family(TOY)
    with pytest.raises(ValueError, match="nochat"):  # its chat format does not exist
        register_family(Family(model=dataclasses.replace(TOY.model, chat_family="nochat")))
    taken = Family(model=dataclasses.replace(model_family("qwen3"), chat_family="toychat"), chat=TOY.chat)
    with pytest.raises(ValueError, match="twice"):  # the model name is taken: toychat is rolled back
        register_family(taken)
    assert "toyllm" not in FAMILY_CLASSES and FAMILY_CLASSES["qwen3"] is model_family("qwen3").config_cls
    with pytest.raises(ValueError, match="toychat"):
        get_template("toychat")
    with pytest.raises(ValueError, match="brings"):
        Family(model=dataclasses.replace(TOY.model, chat_family="qwen2.5"), chat=TOY.chat)
