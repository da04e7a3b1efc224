"""A tiny HF policy directory and a real uvicorn server over it, shared by tests/serve and tests/eval.

The directory is what a user would point ``--model`` at: a byte-level BPE with the Qwen3 chat
tokens (trained here on chat renders, tool calls and BFCL-like text) and a ~100k-parameter
random Qwen3 saved by ``save_hf``. The server is the production app on 127.0.0.1 in a thread.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from prove_jax.chat import get_template, train_tiny_tokenizer
from prove_jax.engine import EngineConfig
from prove_jax.models import Qwen3Config, init_model, save_hf

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city.",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "cd", "description": "Change directory.",
                                      "parameters": {"type": "object", "properties": {"folder": {"type": "string"}},
                                                     "required": ["folder"]}}},
]
ENGINE = EngineConfig(slots=8, max_len=1024, min_chunk=32, max_chunk=256, prefill_rows=2, decode_block=4)


def _corpus() -> list[str]:
    tpl = get_template("qwen3", enable_thinking=False)
    texts = [tpl.render([{"role": "system", "content": "You are a helpful assistant."},
                         {"role": "user", "content": "What is the weather in Paris today? Move the file."}], TOOLS)]
    texts += [tpl.format_tool_call("cd", {"folder": f"document{i}"}) for i in range(20)]
    texts += [json.dumps({"result": f"'report_{i}.pdf' moved to 'temp/report_{i}.pdf'"}) for i in range(20)]
    texts += ["I have updated some more functions you can choose from. What about now?"] * 4
    return texts * 3


def build_policy_dir(root: Path) -> Path:
    """Tokenizer + tiny Qwen3 taught :data:`TAUGHT`, as an HF directory (``config.json``,
    safetensors, tokenizer files)."""
    tok_dir = train_tiny_tokenizer("qwen3", _corpus(), 640, out_dir=root / "tok")
    from prove_jax.chat import ChatTokenizer

    n = len(ChatTokenizer.from_dir(tok_dir))
    cfg = Qwen3Config(vocab_size=n + 64, hidden_size=64, intermediate_size=128, num_layers=2, num_heads=4,
                      num_kv_heads=2, head_dim=16, rope_theta=1e6, dtype="float32", param_dtype="float32",
                      initializer_range=0.05, tie_word_embeddings=False, max_position_embeddings=4096)
    out = root / "tiny-policy"
    save_hf(teach(init_model(cfg, seed=0), ChatTokenizer.from_dir(tok_dir)), out, source_dir=tok_dir)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serving(app: Any) -> Any:
    """The production app on 127.0.0.1 in a thread (``serve_in_thread``); yields the ``/v1`` URL."""
    from prove_jax.serve.app import serve_in_thread

    return serve_in_thread(app)


#: What the tiny policy is taught (a few hundred Adam steps on these two replies): a weather
#: question gets a call, a greeting gets text, so served replies are predictable under greedy.
TAUGHT: list[tuple[list[dict[str, Any]], dict[str, Any]]] = [
    ([{"role": "user", "content": "What is the weather in Paris?"}],
     {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
         "name": "get_weather", "arguments": {"city": "Paris"}}}]}),
    ([{"role": "user", "content": "Say hello."}], {"role": "assistant", "content": "Hello there, how can I help?"}),
]


def teach(model: Any, tokenizer: Any, steps: int = 300) -> Any:
    """Overfit ``model`` on :data:`TAUGHT` (loss on the reply tokens only)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from flax import nnx

    from prove_jax.chat import Transcript

    tpl = get_template("qwen3", enable_thinking=False)
    rows = []
    for msgs, reply in TAUGHT:
        tr = Transcript.start(tpl, tokenizer, msgs, TOOLS)
        tr.append_assistant(reply)
        rows.append((tr.tokens, tr.loss_mask))
    length = max(len(t) for t, _ in rows) + 1
    tokens = np.zeros((len(rows), length), np.int32)
    mask = np.zeros((len(rows), length), bool)
    target = np.zeros((len(rows), length), np.float32)
    for i, (t, m) in enumerate(rows):
        tokens[i, : len(t)] = t
        mask[i, : len(t)] = True
        target[i, : len(t) - 1] = np.asarray(m[1:], np.float32)  # position p predicts token p+1
    opt = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    positions = jnp.broadcast_to(jnp.arange(length, dtype=jnp.int32), tokens.shape)

    def loss_fn(m: Any) -> jax.Array:
        logits, _ = m(jnp.asarray(tokens), positions, attention_mask=jnp.asarray(mask))
        logp = jax.nn.log_softmax(logits[:, :-1].astype(jnp.float32), -1)
        nll = -jnp.take_along_axis(logp, jnp.asarray(tokens)[:, 1:, None], -1)[..., 0]
        w = jnp.asarray(target)[:, :-1]
        return (nll * w).sum() / w.sum()

    @nnx.jit
    def step(m: Any, o: Any) -> jax.Array:
        loss, grads = nnx.value_and_grad(loss_fn)(m)
        o.update(m, grads)
        return loss

    for _ in range(steps):
        loss = step(model, opt)
    assert float(loss) < 0.05, f"the tiny policy did not learn its replies (loss {float(loss):.3f})"
    return model
