"""GGUF -> HF conversion on tiny files written here (tests/convert/gguf_testlib.py), no network.

Each tiny transformers model is written as llama.cpp would write it (q/k rows permuted for
``llama``, F32 or Q8_0), converted back with ``prove_jax.convert``, and loaded with transformers:
the tensors must be the originals (exactly for F32; for Q8_0 exactly what ``gguf`` round-trips
and within one quantisation step of the original), the logits must be the original model's (for
Q8_0: the model holding the round-tripped weights), and the tokenizer must give the same ids as
the tokenizer it was written from and as transformers' own GGUF tokenizer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
import transformers
from safetensors.numpy import load_file
from tokenizers import Tokenizer

import prove_jax.convert.arch as conv_arch
from prove_jax.convert import ARCHITECTURES, PRE_TOKENIZERS, convert_gguf
from prove_jax.convert.__main__ import main
from tests.convert.gguf_testlib import (
    ARCHS,
    LLAMA3_ROPE,
    PRE,
    TinyCase,
    logits,
    tiny_model,
    write_gguf,
)

CASES = [(a, q) for a in ARCHS for q in ("F32", "Q8_0")]
STRINGS = [
    "Hello world",
    "  leading spaces and  double  spaces ",
    "digits 1234567890 and 3.14159",
    "unicode: café, naïve, 日本語, emoji 🎉",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>',
    "def g():\n\n    return 1  \n\n\n  # x",
    "tabs\tand\nnewlines\r\n",
    "don't you'll I'M",
    "",
]


def _load(path: Path) -> torch.nn.Module:
    return transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32,
                                                             attn_implementation="eager").eval()


def _expected(case: TinyCase) -> dict[str, np.ndarray]:
    """The weights the file holds, in HF order: the originals, Q8_0-round-tripped for 2-D ones."""
    out = {}
    for name, t in case.model.state_dict().items():
        arr = t.numpy()
        if case.quant == "Q8_0" and arr.ndim == 2:
            q8 = gguf.GGMLQuantizationType.Q8_0
            arr = gguf.quants.dequantize(gguf.quants.quantize(arr, q8), q8)
        out[name] = arr
    return out


def _ids(rows: int = 2, seq: int = 12, vocab: int = 400) -> np.ndarray:
    return np.random.default_rng(0).integers(0, vocab, (rows, seq))


@pytest.mark.parametrize("arch,quant", CASES)
def test_tensors_are_the_originals(arch: str, quant: str, tiny_cases: dict, converted: dict) -> None:
    case, out = tiny_cases[arch, quant], converted[arch, quant]
    ours = load_file(str(out / "model.safetensors"))
    expected = _expected(case)
    if case.model.config.tie_word_embeddings:
        expected.pop("lm_head.weight")  # tied: the HF checkpoint stores the embedding once
    assert set(ours) == set(expected)
    for name, want in expected.items():
        assert ours[name].dtype == np.float32, name
        np.testing.assert_array_equal(ours[name], want, err_msg=name)
        orig = case.model.state_dict()[name].numpy()
        step = np.abs(orig).max() / 127  # Q8_0: one step of the largest block scale bounds the error
        np.testing.assert_allclose(ours[name], orig, rtol=0, atol=step if quant == "Q8_0" else 0, err_msg=name)


@pytest.mark.parametrize("arch,quant", CASES)
def test_transformers_loads_it_and_gives_the_original_logits(arch: str, quant: str, tiny_cases: dict,
                                                             converted: dict) -> None:
    case = tiny_cases[arch, quant]
    model = _load(converted[arch, quant])
    assert type(model).__name__ == ARCHITECTURES[arch].architecture
    ref = case.model
    if quant == "Q8_0":  # the original architecture holding exactly the weights the file holds
        ref = tiny_model(arch, case.model.config.vocab_size)
        ref.load_state_dict({k: torch.from_numpy(v) for k, v in _expected(case).items()})
    ids = _ids()
    np.testing.assert_allclose(logits(model, ids), logits(ref, ids), rtol=0, atol=1e-5)
    if quant == "Q8_0":  # and still close to the unquantised model
        np.testing.assert_allclose(logits(model, ids), logits(case.model, ids), rtol=0, atol=0.25)


def test_llama_qk_rows_are_unpermuted_and_the_check_bites(tiny_cases: dict, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the un-permutation the q/k weights and the logits are wrong: the tests above would fail."""
    case = tiny_cases["llama", "F32"]
    monkeypatch.setattr(conv_arch, "unpermute_rows", lambda w, n_head: w)
    out = convert_gguf(case.gguf, tmp_path / "no-unpermute", progress=False)
    ours = load_file(str(out / "model.safetensors"))
    q = "model.layers.0.self_attn.q_proj.weight"
    assert not np.array_equal(ours[q], case.model.state_dict()[q].numpy())
    assert not np.array_equal(ours[q.replace("weight", "bias")], case.model.state_dict()[q.replace("weight", "bias")].numpy())
    ids = _ids()
    assert np.abs(logits(_load(out), ids) - logits(case.model, ids)).max() > 0.1


def test_qwen_weights_are_not_unpermuted(tiny_cases: dict) -> None:
    """llama.cpp stores Qwen2/Qwen3 q/k unpermuted (NeoX RoPE): only llama is marked permuted."""
    assert {a for a, s in ARCHITECTURES.items() if s.qk_permuted} == {"llama"}


@pytest.mark.parametrize("arch", ARCHS)
def test_config(arch: str, tiny_cases: dict, converted: dict) -> None:
    want = tiny_cases[arch, "F32"].model.config
    cfg = json.loads((converted[arch, "F32"] / "config.json").read_text())
    for key in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "num_key_value_heads", "rms_norm_eps", "max_position_embeddings", "tie_word_embeddings"):
        assert cfg[key] == getattr(want, key), key
    assert cfg["head_dim"] == getattr(want, "head_dim", want.hidden_size // want.num_attention_heads)
    assert cfg["rope_theta"] == want.rope_parameters["rope_theta"]
    assert cfg["model_type"] == want.model_type
    if arch == "llama":
        assert cfg["attention_bias"] is True and cfg["bos_token_id"] is not None
    gen = json.loads((converted[arch, "F32"] / "generation_config.json").read_text())
    tok_cfg = json.loads((converted[arch, "F32"] / "tokenizer_config.json").read_text())
    assert Tokenizer.from_file(str(converted[arch, "F32"] / "tokenizer.json")).token_to_id(tok_cfg["eos_token"]) \
        == gen["eos_token_id"] == cfg["eos_token_id"]


@pytest.mark.parametrize("arch", ARCHS)
def test_tokenizer_matches_transformers_gguf_tokenizer(arch: str, tiny_cases: dict, converted: dict) -> None:
    """Same ids, text and special tokens as transformers' tokenizer built from the same GGUF."""
    case, out = tiny_cases[arch, "F32"], converted[arch, "F32"]
    ours = transformers.AutoTokenizer.from_pretrained(out)
    ref = transformers.AutoTokenizer.from_pretrained(case.gguf.parent, gguf_file=case.gguf.name)
    assert len(ours) == len(ref) == case.model.config.vocab_size
    for s in STRINGS:
        ids = ours(s).input_ids
        assert ids == ref(s).input_ids, s
        assert ours.decode(ids) == ref.decode(ids), s
        assert ours.decode(ids, skip_special_tokens=True) == ref.decode(ids, skip_special_tokens=True), s
    assert {i: (t.content, t.special) for i, t in ours.added_tokens_decoder.items()} \
        == {i: (t.content, t.special) for i, t in ref.added_tokens_decoder.items()}
    assert (ours.bos_token, ours.eos_token, ours.pad_token) == (ref.bos_token, ref.eos_token, ref.pad_token)
    msgs = [{"role": "user", "content": "What is the capital of France?"}]
    assert ours.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False) \
        == ref.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)


def test_tokenizer_matches_the_tokenizer_it_was_written_from(tiny_cases: dict, converted: dict,
                                                             tiny_tok_dir: Path) -> None:
    """qwen3's tiny file names the GPT-2 split the tiny tokenizer was trained with: same ids."""
    orig = Tokenizer.from_file(str(tiny_tok_dir / "tokenizer.json"))
    ours = Tokenizer.from_file(str(converted["qwen3", "F32"] / "tokenizer.json"))
    for s in STRINGS:
        assert ours.encode(s).ids == orig.encode(s).ids, s
        assert ours.decode(ours.encode(s).ids, skip_special_tokens=False) == s
    assert ours.token_to_id("<tool_call>") == orig.token_to_id("<tool_call>")


def test_the_strings_tell_the_split_rules_apart(converted: dict) -> None:
    """The equality checks above mean something: each pre-tokenizer in the tiny files gives other
    ids than every other rule we map, on these strings and this vocabulary."""
    rules = {name: rule for name, rule in PRE_TOKENIZERS.items() if name in ("gpt-2", "smollm", "llama-bpe", "qwen2")}
    for arch in ARCHS:
        tok = Tokenizer.from_file(str(converted[arch, "F32"] / "tokenizer.json"))
        base = [tok.encode(s).ids for s in STRINGS]
        for name, rule in rules.items():
            if rule == PRE_TOKENIZERS[PRE[arch]]:
                continue
            tok.pre_tokenizer = rule.build()
            assert any(tok.encode(s).ids != ids for s, ids in zip(STRINGS, base, strict=True)), (arch, name)


def test_qwen2_normalises_to_nfc(converted: dict) -> None:
    """Qwen2's original tokenizer NFC-normalises: decomposed "é" encodes like the composed one."""
    tok = Tokenizer.from_file(str(converted["qwen2", "F32"] / "tokenizer.json"))
    assert tok.encode("cafe\u0301").ids == tok.encode("café").ids


def test_cli_bfloat16_and_shards(tiny_cases: dict, tmp_path: Path) -> None:
    case = tiny_cases["qwen3", "F32"]
    out = tmp_path / "bf16"
    assert main(["--gguf", str(case.gguf), "--out", str(out), "--dtype", "bfloat16", "--max-shard-gb", "0.00005",
                 "--no-progress"]) == 0
    index = json.loads((out / "model.safetensors.index.json").read_text())
    shards = sorted(set(index["weight_map"].values()))
    assert len(shards) > 1 and not (out / "model.safetensors").exists()
    assert json.loads((out / "config.json").read_text())["torch_dtype"] == "bfloat16"
    model = transformers.AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    for name, t in case.model.state_dict().items():
        assert torch.equal(model.state_dict()[name], t.to(torch.bfloat16).float()), name


def _write_bad(tmp_path: Path, tok_dir: Path, **kwargs: object) -> Path:
    model = tiny_model("llama", Tokenizer.from_file(str(tok_dir / "tokenizer.json")).get_vocab_size() + 5)
    return write_gguf(model, "llama", tok_dir, tmp_path / "bad.gguf", **kwargs)  # type: ignore[arg-type]


def test_cli_rejects_unsupported_architecture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "phi.gguf"
    w = gguf.GGUFWriter(str(path), "phi3")
    w.add_tensor("token_embd.weight", np.zeros((8, 32), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert main(["--gguf", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "'phi3'" in err and str(sorted(ARCHITECTURES)) in err
    assert not (tmp_path / "out").exists()


def test_cli_rejects_a_type_gguf_cannot_dequantise(tmp_path: Path, tiny_tok_dir: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = _write_bad(tmp_path, tiny_tok_dir, tensor_types={"blk.1.ffn_up.weight": "F64"})
    assert main(["--gguf", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "F64" in err and "blk.1.ffn_up.weight" in err
    assert not (tmp_path / "out").exists()


def test_rejects_unknown_pre_tokenizer(tmp_path: Path, tiny_tok_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.convert.gguf_testlib as lib

    monkeypatch.setitem(lib.PRE, "llama", "mystery-bpe")
    path = _write_bad(tmp_path, tiny_tok_dir)
    with pytest.raises(ValueError, match=r"'mystery-bpe'.*supported: \[.*'qwen2'"):
        convert_gguf(path, tmp_path / "out", progress=False)


def test_reconversion_replaces_old_shards(tiny_cases: dict, tmp_path: Path) -> None:
    """A sharded output followed by a single-file one leaves no stale shard for loaders to pick up."""
    case = tiny_cases["qwen2", "F32"]
    convert_gguf(case.gguf, tmp_path, max_shard_bytes=10_000, progress=False)
    convert_gguf(case.gguf, tmp_path, progress=False)
    assert sorted(p.name for p in tmp_path.glob("model*")) == ["model.safetensors"]



def _llama3rope(tmp_path: Path, tok_dir: Path, **kwargs: object) -> tuple[torch.nn.Module, Path]:
    model = tiny_model("llama3rope", Tokenizer.from_file(str(tok_dir / "tokenizer.json")).get_vocab_size() + 5)
    return model, write_gguf(model, "llama3rope", tok_dir, tmp_path / "l3.gguf", **kwargs)  # type: ignore[arg-type]


def test_llama3_rope_scaling_is_recovered_from_rope_freqs(tmp_path: Path, tiny_tok_dir: Path) -> None:
    """llama.cpp keeps Llama 3.1+ RoPE scaling only as per-frequency divisors (rope_freqs.weight):
    the converter states the HF rope parameters again, and the logits over long positions agree."""
    model, path = _llama3rope(tmp_path, tiny_tok_dir)
    out = convert_gguf(path, tmp_path / "hf", progress=False)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["rope_scaling"] == LLAMA3_ROPE
    assert cfg["rope_parameters"] == {"rope_theta": 50000.0, **LLAMA3_ROPE}
    assert not any("rope" in k for k in load_file(str(out / "model.safetensors")))
    ids = _ids(rows=1, seq=200)
    ours = _load(out)
    np.testing.assert_allclose(logits(ours, ids), logits(model, ids), rtol=0, atol=1e-5)
    default_rope = {"rope_theta": 50000.0, "rope_type": "default"}  # the scaling matters at these positions
    plain = transformers.LlamaForCausalLM(transformers.LlamaConfig(**{**model.config.to_dict(),
                                                                       "rope_parameters": default_rope}))
    plain.load_state_dict(model.state_dict())
    assert np.abs(logits(plain.eval(), ids) - logits(model, ids)).max() > 1e-3


def test_rope_freqs_not_following_llama3_are_refused(tmp_path: Path, tiny_tok_dir: Path) -> None:
    odd = np.linspace(1, 3, 16, dtype=np.float32)
    _, path = _llama3rope(tmp_path, tiny_tok_dir, rope_freqs=odd)
    with pytest.raises(ValueError, match=r"rope_freqs\.weight is not llama3-style"):
        convert_gguf(path, tmp_path / "hf", progress=False)


def test_the_converter_runs_without_torch_or_transformers(tiny_cases: dict, tmp_path: Path) -> None:
    """They are test-only references: a conversion in a fresh process must not import them."""
    code = ("import sys\nfrom prove_jax.convert.__main__ import main\n"
            f"rc = main(['--gguf', {str(tiny_cases['llama', 'Q8_0'].gguf)!r}, '--out', {str(tmp_path)!r}, '--no-progress'])\n"
            "print(rc, sorted(m for m in ('torch', 'transformers', 'jax') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout + done.stderr
    assert (tmp_path / "model.safetensors").is_file() and (tmp_path / "tokenizer.json").is_file()
