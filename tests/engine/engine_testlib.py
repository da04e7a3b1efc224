"""Shared builders for tests/engine (and benchmarks/bench_engine.py).

* a tiny tokenizer of the Qwen3 family, trained on text the episodes will contain (live tool
  schemas of the six domains, rendered tool calls, discovery results), so prompts are short;
* a tiny random Qwen3 model in f32 whose embedding table is *padded* past the tokenizer (as
  real checkpoints are), with a large init scale so greedy decisions have clear margins and
  cached/uncached numerics cannot flip an argmax;
* Example records (DESIGN Contract 2) written by hand from live discovery data: the synthesis
  pipeline is built concurrently, and these cover sequential, parallel and multi-turn gold.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from prove_jax.chat import ChatTokenizer, get_template, train_tiny_tokenizer
from prove_jax.env import MCPPool
from prove_jax.models import Model, Qwen3Config, init_model
from prove_jax.records import Example

FAMILY = "qwen3"
VOCAB = 1024
VOCAB_PAD = 64  # embedding rows beyond the tokenizer: must never be sampled


def template() -> Any:
    return get_template(FAMILY, enable_thinking=False)


DOMAINS: tuple[str, ...] = ("banking", "calendar", "email", "filesystem", "shopping", "vehicle")
"""The domains the engine and trainer tests drive. Their tiny shapes (a 1,536-token KV cache, a
2k-token transcript cap, a 1M-parameter model) were sized on these six tool lists and results; all
twenty domains are covered by tests/servers, tests/data and the integration test."""


async def live_data(domains: tuple[str, ...]) -> dict[str, Any]:
    """Visible tools per domain and discovery results (seed 0) from in-process servers."""
    async with MCPPool.from_spec(domains, "inprocess") as pool:
        tools = {d: pool.tools([d]) for d in domains}
        async with pool.episode(["banking", "vehicle"], seed=0) as ep:
            accounts = json.loads((await ep.call("banking_list_all_accounts", {}, allow_hidden=True)).text)
            fleet = json.loads((await ep.call("vehicle_list_fleet", {}, allow_hidden=True)).text)
    return {"tools": tools, "accounts": accounts, "fleet": fleet}


def corpus(live: Mapping[str, Any]) -> list[str]:
    """Training text for the tiny tokenizer: what prompts, calls and results look like."""
    tpl = template()
    texts: list[str] = []
    for tools in live["tools"].values():
        texts.append(tpl.render([{"role": "user", "content": "Please help me with my request."}], tools))
        for t in tools:
            fn = t["function"]
            args = {k: "VEH-0001" for k in fn["parameters"].get("properties", {})}
            texts.append(tpl.format_tool_call(fn["name"], args))
    texts += [json.dumps(a) for a in live["accounts"][:40]] + [json.dumps(v) for v in live["fleet"][:20]]
    return texts * 2


def build_tokenizer(live: Mapping[str, Any], out_dir: Path) -> ChatTokenizer:
    return ChatTokenizer.from_dir(train_tiny_tokenizer(FAMILY, corpus(live), VOCAB, out_dir=out_dir))


def tiny_config(vocab_size: int, **kw: Any) -> Qwen3Config:
    base: dict[str, Any] = dict(
        vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_layers=2, num_heads=4,
        num_kv_heads=2, head_dim=16, rope_theta=1e6, dtype="float32", param_dtype="float32",
        initializer_range=0.35, tie_word_embeddings=False, max_position_embeddings=4096,
    )
    base.update(kw)
    return Qwen3Config(**base)


def tiny_model(tokenizer_len: int, seed: int = 0) -> Model:
    return init_model(tiny_config(tokenizer_len + VOCAB_PAD), seed=seed)


@nnx.jit
def _forward(model: Model, tokens: jax.Array, mask: jax.Array) -> jax.Array:
    positions = jnp.arange(tokens.shape[1], dtype=jnp.int32)[None, :]
    logits, _ = model(tokens, positions, attention_mask=mask)
    return jax.nn.log_softmax(logits[0].astype(jnp.float32), axis=-1)


def full_logprobs(model: Model, ids: list[int] | np.ndarray, length: int) -> np.ndarray:
    """Uncached full-forward log-softmax ``[len(ids), V]`` (row t predicts token t+1).

    Right-padded to a fixed ``length`` so every call reuses one compiled program; causal
    attention makes the padding invisible to the real positions.
    """
    ids = np.asarray(ids, np.int32)
    n = len(ids)
    assert n <= length, (n, length)
    tokens = np.zeros((1, length), np.int32)
    tokens[0, :n] = ids
    mask = np.zeros((1, length), bool)
    mask[0, :n] = True
    return np.asarray(_forward(model, jnp.asarray(tokens), jnp.asarray(mask)))[:n]


# ---- Example records ------------------------------------------------------------------------
def _pick(tools: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    by = {t["function"]["name"]: t for t in tools}
    return [by[n] for n in names]


def _ex(ex_id: str, servers: list[str], tools: list[dict[str, Any]], turns: list[dict[str, Any]]) -> Example:
    """The typed record of a hand-written example (built as the JSON object ``data/`` writes)."""
    gold = [c for t in turns for s in t["gold"] for c in s["calls"]]
    return Example.from_dict({
        "id": ex_id, "kind": "conversation", "servers": servers, "seed": 0, "tools": tools,
        "system": "You are a helpful assistant. Today is 2026-04-20.", "turns": turns,
        "complexity": {"n_calls": len(gold), "n_steps": sum(len(t["gold"]) for t in turns),
                       "n_turns": len(turns), "n_servers": len(servers)},
    })


def gold_examples(live: Mapping[str, Any]) -> list[Example]:
    """Three hand-written examples grounded in the seed-0 worlds.

    * banking: list a customer's accounts, then (next user turn) transfer between two of them;
    * vehicle: start the engine, then release the parking brake and shift into drive (a chain:
      the server refuses ``drive`` while the brake is engaged);
    * banking, parallel: two balance look-ups in one step (one assistant turn, two calls).
    """
    owners: dict[str, list[dict[str, Any]]] = {}
    for acc in live["accounts"]:
        if acc["status"] == "active" and acc["balance"] >= 200:
            owners.setdefault(acc["customer_id"], []).append(acc)
    cid, (src, dst) = next((c, a[:2]) for c, a in owners.items() if len(a) >= 2)
    bank = live["tools"]["banking"]
    banking = _ex("bank-transfer", ["banking"], _pick(bank, ["list_accounts", "transfer_funds", "get_account_balance"]), [
        {"user": f"I am customer {cid}. Which accounts do I have?",
         "gold": [{"step": 1, "calls": [{"name": "list_accounts", "arguments": {"customer_id": cid}}],
                   "depends_on": []}],
         "reply": "You have these accounts."},
        {"user": f"Move 25 dollars from {src['account_id']} to {dst['account_id']}; my PIN is {src['pin']}.",
         "gold": [{"step": 2, "calls": [{"name": "transfer_funds", "arguments": {
             "from_account_id": src["account_id"], "to_account_id": dst["account_id"], "amount": 25,
             "pin": src["pin"]}}], "depends_on": [1]}],
         "reply": "Done, the money is moved."},
    ])
    car = next(v for v in live["fleet"] if v["powertrain"] != "electric" and v["ignition"] == "off"
               and v["gear"] == "park" and v["parking_brake_engaged"])
    vid = car["vehicle_id"]
    veh = live["tools"]["vehicle"]
    vehicle = _ex("vehicle-drive", ["vehicle"], _pick(veh, ["start_engine", "set_parking_brake", "shift_gear",
                                                            "stop_engine"]), [
        {"user": f"Start the engine of {vid}.",
         "gold": [{"step": 1, "calls": [{"name": "start_engine", "arguments": {"vehicle_id": vid}}],
                   "depends_on": []}],
         "reply": "The engine is running."},
        {"user": "Release the parking brake and put it in drive.",
         "gold": [{"step": 2, "calls": [{"name": "set_parking_brake",
                                         "arguments": {"vehicle_id": vid, "engaged": False}}], "depends_on": [1]},
                  {"step": 3, "calls": [{"name": "shift_gear", "arguments": {"vehicle_id": vid, "gear": "drive"}}],
                   "depends_on": [2]}],
         "reply": "You are in drive."},
    ])
    parallel = _ex("bank-balances", ["banking"], _pick(bank, ["get_account_balance", "list_accounts"]), [
        {"user": f"What are the balances of {src['account_id']} and {dst['account_id']}?",
         "gold": [{"step": 1, "calls": [
             {"name": "get_account_balance", "arguments": {"account_id": src["account_id"]}},
             {"name": "get_account_balance", "arguments": {"account_id": dst["account_id"]}}], "depends_on": []}],
         "reply": "Here are both balances."},
    ])
    return [banking, vehicle, parallel]


def domain_examples(live: Mapping[str, Any]) -> list[Example]:
    """One two-turn example per domain (three visible tools each) for policy-agnostic runs."""
    out = []
    for domain, tools in live["tools"].items():
        vis = tools[:3]
        first = vis[0]["function"]["name"]
        out.append(_ex(f"{domain}-smoke", [domain], vis, [
            {"user": f"Help me with {domain}.", "gold": [{"step": 1, "calls": [{"name": first, "arguments": {}}],
                                                          "depends_on": []}], "reply": "ok"},
            {"user": "Anything else?", "gold": [], "reply": "no"},
        ]))
    return out
