"""Serving overhead of ``prove_jax.serve`` and the BFCL harness's own cost.

    python benchmarks/bench_serve.py                       # tiny random Qwen3 on CPU (a proxy)
    python benchmarks/bench_serve.py --model DIR --dtype bfloat16 --max-tokens 256   # a real checkpoint

Figures (``RESULT <name> <value> <unit> goal=<goal>``):

* ``serve_overhead_c{1,16,64}``: 1 - (tokens/s through HTTP) / (tokens/s of the engine driven
  directly), at 1, 16 and 64 concurrent clients. Both sides run the same workload: ``--requests``
  chat requests with two tools (a ~250-token prompt), ``--max-tokens`` new tokens each, sampled
  at temperature 1 with seed = request index, so both generate the same tokens. Directly means
  :class:`EngineChat` in this process (render, engine, parse: everything but HTTP); served means
  ``python -m prove_jax.serve`` in a subprocess with the same engine shape, driven by keep-alive
  HTTP/1.1 clients on raw asyncio streams (``/v1/chat/completions``; a load generator like
  ``wrk``, so the shared 2 CPU cores go to the server, not to a client library). Each side is
  warmed up, then ``--rounds`` alternating timed runs, best of each. Requests/s and tokens/s of
  both, the added milliseconds per request, the client's own CPU per request and the same run
  through ``httpx.AsyncClient`` are printed as INFO lines. Goal <= 0.15.
* ``bfcl_oracle_wall_s``: wall time of ``prove_jax.eval.bfcl.evaluate`` over all 800 multi-turn
  entries with the oracle policy (ground truth replayed): the harness's own cost (executor
  workers, checker, files) with a policy that costs nothing. Needs bfcl-eval.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from prove_jax.engine.config import EngineConfig  # noqa: E402

BENCH_ENGINE = EngineConfig(slots=64, max_len=1024, max_chunk=512, prefill_rows=4)
"""The served engine's shape here (the serve process gets the same flags)."""

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city.",
                                      "parameters": {"type": "object", "properties": {
                                          "city": {"type": "string", "description": "City name"},
                                          "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "transfer_funds", "description": "Move money between accounts.",
                                      "parameters": {"type": "object", "properties": {
                                          "from_account": {"type": "string"}, "to_account": {"type": "string"},
                                          "amount": {"type": "number"}}, "required": ["from_account", "to_account",
                                                                                       "amount"]}}},
]


def result(name: str, value: float, unit: str, goal: str) -> None:
    print(f"RESULT {name} {value:.3f} {unit} goal={goal}", flush=True)


def info(msg: str) -> None:
    print(f"INFO {msg}", flush=True)


def build_tiny(root: Path) -> Path:
    """A tiny random Qwen3 HF directory with a BPE trained on chat renders (CPU proxy model)."""
    from prove_jax.chat import ChatTokenizer, get_template, train_tiny_tokenizer
    from prove_jax.models import Qwen3Config, init_model, save_hf

    tpl = get_template("qwen3", enable_thinking=False)
    corpus = [tpl.render([{"role": "user", "content": f"Move ${i}0 from checking to savings, then the weather "
                                                      f"in city {i}."}], TOOLS) for i in range(30)]
    tok_dir = train_tiny_tokenizer("qwen3", corpus * 2, 1024, out_dir=root / "tok")
    n = len(ChatTokenizer.from_dir(tok_dir))
    cfg = Qwen3Config(vocab_size=n + 64, hidden_size=64, intermediate_size=128, num_layers=2, num_heads=4,
                      num_kv_heads=2, head_dim=16, rope_theta=1e6, dtype="float32", param_dtype="float32",
                      initializer_range=0.35, tie_word_embeddings=False, max_position_embeddings=4096)
    return save_hf(init_model(cfg, seed=0), root / "tiny-serve", source_dir=tok_dir)


def messages(i: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You are a banking assistant."},
            {"role": "user", "content": f"Move ${i % 97}0 from checking to savings, then tell me the weather in "
                                        f"city {i}."}]


async def run_direct(chat: Any, n: int, conc: int, max_tokens: int) -> tuple[float, int]:
    queue = list(range(n))
    tokens = 0

    async def client() -> None:
        nonlocal tokens
        while queue:
            i = queue.pop()
            r = await chat.chat(messages(i), TOOLS, max_tokens=max_tokens, temperature=1.0, seed=i)
            tokens += r.completion_tokens

    t = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(conc)))
    return time.perf_counter() - t, tokens


class RawClient:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams — a load generator in the spirit of
    ``wrk``: it costs the shared CPU far less than a full client library, so the figure measures
    the server, not the client (httpx is measured too, as an INFO line)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:"))
        return status, await self.reader.readexactly(length)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()


async def run_served(url: str, name: str, n: int, conc: int, max_tokens: int, client: str = "raw"
                     ) -> tuple[float, int]:
    import httpx

    queue = list(range(n))
    tokens = 0

    def body(i: int) -> dict[str, Any]:
        return {"model": name, "messages": messages(i), "tools": TOOLS, "max_tokens": max_tokens,
                "temperature": 1.0, "seed": i}

    if client == "raw":
        host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
        path = "/" + url.split("//", 1)[1].split("/", 1)[1] + "/chat/completions"

        async def raw_client() -> None:
            nonlocal tokens
            c = RawClient(host, int(port))
            try:
                while queue:
                    i = queue.pop()
                    status, data = await c.post(path, json.dumps(body(i)).encode())
                    if status != 200:
                        raise RuntimeError(f"HTTP {status}: {data[:200]!r}")
                    tokens += json.loads(data)["usage"]["completion_tokens"]
            finally:
                await c.close()

        t = time.perf_counter()
        await asyncio.gather(*(raw_client() for _ in range(conc)))
        return time.perf_counter() - t, tokens

    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as http:
        async def client_task() -> None:
            nonlocal tokens
            while queue:
                i = queue.pop()
                r = await http.post("/chat/completions", json=body(i))
                r.raise_for_status()
                tokens += r.json()["usage"]["completion_tokens"]

        t = time.perf_counter()
        await asyncio.gather(*(client_task() for _ in range(conc)))
        return time.perf_counter() - t, tokens


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(model: Path, args: argparse.Namespace) -> Any:
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "prove_jax.serve", "--model", str(model), "--port", str(port), "--served-model-name",
           "bench", "--slots", str(args.slots), "--max-len", str(args.max_len), "--max-chunk", str(args.max_chunk),
           "--prefill-rows", str(args.prefill_rows), "--decode-block", str(args.decode_block), "--dtype", args.dtype]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(1200):
            if proc.poll() is not None:
                raise SystemExit(f"serve exited: {proc.stderr.read() if proc.stderr else ''}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def bench_serve(model: Path, args: argparse.Namespace) -> None:
    import jax.numpy as jnp  # noqa: F401  (JAX initialised before timing)

    from prove_jax.cli import engine_from_args
    from prove_jax.serve import EngineChat, load_policy

    policy = load_policy(model, dtype=args.dtype)
    ecfg = engine_from_args(args, BENCH_ENGINE)  # the same shape as the served process
    engine = policy.engine(ecfg)
    chat = EngineChat(engine, policy.template, policy.tokenizer)
    info(f"prompt tokens per request: {len(chat.render(messages(0), TOOLS).ids)}; slots {args.slots}")

    with server(model, args) as url:
        async def go() -> None:
            async with engine:
                for conc in args.concurrency:
                    n = max(conc * 2, min(args.requests, 16 * conc))
                    await run_direct(chat, min(n, conc * 2), conc, args.max_tokens)  # warm-up
                    await run_served(url, "bench", min(n, conc * 2), conc, args.max_tokens)
                    await run_served(url, "bench", min(n, conc * 2), conc, args.max_tokens, client="httpx")
                    best_d = best_s = 0.0
                    rps_d = rps_s = client_ms = 0.0
                    for _ in range(args.rounds):
                        dt, tok = await run_direct(chat, n, conc, args.max_tokens)
                        if tok / dt > best_d:
                            best_d, rps_d = tok / dt, n / dt
                        cpu = time.process_time()
                        st, stok = await run_served(url, "bench", n, conc, args.max_tokens)
                        if stok / st > best_s:
                            best_s, rps_s = stok / st, n / st
                            client_ms = 1e3 * (time.process_time() - cpu) / n
                    ht, htok = await run_served(url, "bench", n, conc, args.max_tokens, client="httpx")
                    info(f"c={conc}: through httpx.AsyncClient instead: {n / ht:.2f} req/s {htok / ht:.1f} tok/s "
                         f"(overhead {1 - (htok / ht) / best_d:.3f}; the client library's own CPU competes "
                         "for the same cores)")
                    info(f"c={conc}: direct {rps_d:.2f} req/s {best_d:.1f} tok/s; served {rps_s:.2f} req/s "
                         f"{best_s:.1f} tok/s ({n} requests); HTTP adds {1e3 * (1 / rps_s - 1 / rps_d):.2f} ms "
                         f"per request, of which the HTTP client's own CPU time is {client_ms:.2f} ms (client and "
                         "server share this machine's cores)")
                    result(f"serve_overhead_c{conc}", 1.0 - best_s / best_d, "fraction", "<=0.15")

        asyncio.run(go())


def bench_bfcl(workdir: Path) -> None:
    from prove_jax.eval import bfcl

    bfcl.bfcl_root(workdir)
    truths: dict[str, Any] = {}
    for c in bfcl.CATEGORIES:
        truths.update(bfcl.load_category(c, None)[1])
    t = time.perf_counter()
    summary = asyncio.run(bfcl.evaluate(lambda e: bfcl.OracleChat(truths[e["id"]]), workdir / "oracle", "oracle",
                                        bfcl.BfclConfig(workers=os.cpu_count() or 2), progress=False))
    wall = time.perf_counter() - t
    info("oracle accuracy per category: " + json.dumps({c: v["accuracy"] for c, v in summary["categories"].items()}))
    result("bfcl_oracle_wall_s", wall, "s (800 entries)", "harness overhead")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="HF dir (default: a tiny random Qwen3 built here)")
    ap.add_argument("--dtype", default="float32")
    from prove_jax.cli import add_engine_args

    add_engine_args(ap, BENCH_ENGINE)
    ap.add_argument("--max-tokens", type=int, default=64, help="new tokens per request")
    ap.add_argument("--requests", type=int, default=128, help="requests per timed run (at least 2 x clients)")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--skip-serve", action="store_true")
    ap.add_argument("--skip-bfcl", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if not args.skip_serve:
            bench_serve(Path(args.model) if args.model else build_tiny(work), args)
        if not args.skip_bfcl:
            bench_bfcl(work / "bfcl")


if __name__ == "__main__":
    main()
