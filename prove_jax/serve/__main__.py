"""``python -m prove_jax.serve --model DIR [--port 8000] [--slots 16] [--max-len 8192]``.

Serves ``DIR`` (an HF directory, or a training run / stage / checkpoints directory) over the
OpenAI API on 127.0.0.1 (``--host 0.0.0.0`` to expose it). Concurrent requests share the engine's
``--slots`` rows; ``--max-len`` bounds prompt + completion of one request.
"""

from __future__ import annotations

import argparse

from prove_jax.cli import add_engine_args, engine_from_args
from prove_jax.engine.config import EngineConfig
from prove_jax.host_memory import configure_host_allocator

SERVE_ENGINE = EngineConfig(slots=16, max_len=8192, max_chunk=512, prefill_rows=4)
"""The served engine's shape: the engine's defaults but for these (each flag overrides one)."""


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m prove_jax.serve", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="HF directory or training run/stage/checkpoints directory")
    p.add_argument("--step", type=int, default=None, help="checkpoint step (default: the newest)")
    p.add_argument("--served-model-name", default=None, help="model id clients send (default: the directory name)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    add_engine_args(p, SERVE_ENGINE)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--mesh", default=None, help="mesh spec, e.g. 'tensor=2' (default: one device)")
    p.add_argument("--enable-thinking", action="store_true", help="Qwen3: leave thinking on (training had it off)")
    p.add_argument("--log-level", default="warning")
    p.add_argument("--access-log", action="store_true", help="log every request (off: it costs per request)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    from prove_jax.serve.app import build_app
    from prove_jax.serve.chat import EngineChat
    from prove_jax.serve.load import load_policy

    args = parse(argv)
    configure_host_allocator()
    policy = load_policy(args.model, step=args.step, dtype=args.dtype, mesh=args.mesh,
                         name=args.served_model_name, enable_thinking=args.enable_thinking)
    engine = policy.engine(engine_from_args(args, SERVE_ENGINE))
    app = build_app(engine, EngineChat(engine, policy.template, policy.tokenizer), policy.name)
    print(f"serving {policy.source} as {policy.name!r} on http://{args.host}:{args.port}/v1", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=args.access_log)


if __name__ == "__main__":
    main()
