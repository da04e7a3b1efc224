"""The OpenAI-compatible HTTP layer: JSON in, :class:`EngineChat` call, JSON (or SSE) out.

Routes: ``GET /v1/models``, ``POST /v1/chat/completions`` (``tools``, ``tool_choice``,
``stream``), ``POST /v1/completions`` (``prompt`` as text, ids or a list of texts; ``stream``), ``GET
/health``. Every request is validated before it reaches the engine; a bad one gets an
OpenAI-style error body (``{"error": {"message", "type", "param", "code"}}``) with 400 (malformed,
context too long) or 404 (unknown model), and an unexpected failure inside one request is a 500
for that request only — the engine and the other requests carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from prove_jax.engine import Engine
from prove_jax.serve.chat import EngineChat
from prove_jax.serve.messages import RequestError
from prove_jax.serve.protocol import ChatReply


def _error(exc: RequestError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)


def _number(body: Mapping[str, Any], key: str, default: float, lo: float, hi: float) -> float:
    v = body.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
        raise RequestError(f"{key} must be a number in [{lo}, {hi}], got {v!r}", param=key)
    return float(v)


def _int(body: Mapping[str, Any], key: str, default: int | None, lo: int = 1) -> int | None:
    v = body.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise RequestError(f"{key} must be an integer >= {lo}, got {v!r}", param=key)
    return v


def _stop(body: Mapping[str, Any]) -> list[str]:
    v = body.get("stop")
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and all(isinstance(s, str) for s in v) and len(v) <= 4:
        return list(v)
    raise RequestError("stop must be a string or an array of at most 4 strings", param="stop")


def _sse(obj: Any) -> bytes:
    return f"data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()


class Server:
    """The app's state: one engine, one served model name, request counters."""

    def __init__(self, engine: Engine, chat: EngineChat, model_name: str) -> None:
        self.engine, self.chat, self.model_name = engine, chat, model_name
        self.created = int(time.time())
        self.requests = 0
        self.errors = 0

    # ---- common request handling --------------------------------------------------------------
    async def _body(self, request: Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise RequestError("the request body is not valid JSON") from None
        if not isinstance(body, dict):
            raise RequestError("the request body must be a JSON object")
        model = body.get("model")
        if model != self.model_name:
            raise RequestError(f"The model {model!r} does not exist; this server serves {self.model_name!r}",
                               param="model", code="model_not_found", status=404)
        if _int(body, "n", 1) != 1:
            raise RequestError("only n=1 is supported", param="n")
        return body

    async def handle(self, request: Request, fn: Callable[[dict[str, Any]], Any]) -> Response:
        self.requests += 1
        try:
            return await fn(await self._body(request))
        except RequestError as exc:
            self.errors += 1
            return _error(exc)
        except Exception as exc:  # one request's failure is that request's 500, never the server's
            self.errors += 1
            return JSONResponse({"error": {"message": f"internal error: {exc!r}", "type": "server_error",
                                           "param": None, "code": None}}, status_code=500)

    # ---- /v1/chat/completions -----------------------------------------------------------------
    def _chat_args(self, body: dict[str, Any]) -> dict[str, Any]:
        max_tokens = _int(body, "max_completion_tokens", None)
        max_tokens = _int(body, "max_tokens", max_tokens)
        seed = _int(body, "seed", None, lo=0)
        return {"tool_choice": body.get("tool_choice") or "auto", "max_tokens": max_tokens,
                "temperature": _number(body, "temperature", 1.0, 0.0, 2.0),
                "top_p": _number(body, "top_p", 1.0, 1e-9, 1.0), "seed": seed, "stop": _stop(body)}

    def _message(self, reply: ChatReply) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": reply.content or (None if reply.tool_calls else "")}
        if reply.tool_calls:
            msg["tool_calls"] = reply.tool_calls
        if reply.reasoning:
            msg["reasoning_content"] = reply.reasoning
        return msg

    def _usage(self, reply: ChatReply) -> dict[str, int]:
        return {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens}

    async def chat_completions(self, body: dict[str, Any]) -> Response:
        args = self._chat_args(body)
        messages, tools = body.get("messages"), body.get("tools")
        cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if body.get("stream"):
            stream = self.chat.chat_stream(messages, tools, **args)
            first = await anext(stream)  # validation errors surface here, before any 200 is sent
            return StreamingResponse(self._chat_events(cid, created, first, stream, body),
                                     media_type="text/event-stream")
        reply = await self.chat.chat(messages, tools, **args)
        return JSONResponse({"id": cid, "object": "chat.completion", "created": created, "model": self.model_name,
                             "choices": [{"index": 0, "message": self._message(reply), "logprobs": None,
                                          "finish_reason": reply.finish_reason}],
                             "usage": self._usage(reply)})

    async def _chat_events(self, cid: str, created: int, first: str | ChatReply,
                           rest: AsyncIterator[str | ChatReply], body: dict[str, Any]) -> AsyncIterator[bytes]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": self.model_name,
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        yield _sse(chunk({"role": "assistant", "content": ""}))
        item: str | ChatReply | None = first
        try:
            while item is not None:
                if isinstance(item, ChatReply):
                    for i, call in enumerate(item.tool_calls):
                        yield _sse(chunk({"tool_calls": [{"index": i, **call}]}))
                    yield _sse(chunk({}, item.finish_reason))
                    if (body.get("stream_options") or {}).get("include_usage"):
                        yield _sse({"id": cid, "object": "chat.completion.chunk", "created": created,
                                    "model": self.model_name, "choices": [], "usage": self._usage(item)})
                    break
                yield _sse(chunk({"content": item}))
                item = await anext(rest, None)
        except RequestError as exc:
            yield _sse(exc.body())
        except Exception as exc:
            yield _sse({"error": {"message": f"internal error: {exc!r}", "type": "server_error"}})
        finally:
            with contextlib.suppress(Exception):
                await rest.aclose()  # type: ignore[attr-defined]
        yield b"data: [DONE]\n\n"

    # ---- /v1/completions ------------------------------------------------------------------------
    async def completions(self, body: dict[str, Any]) -> Response:
        prompt = body.get("prompt")
        if isinstance(prompt, str) or (isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt)):
            prompts: list[Any] = [prompt]
        elif isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
            prompts = list(prompt)
        else:
            raise RequestError("prompt must be a string, an array of strings or an array of token ids",
                               param="prompt")
        if body.get("echo") or body.get("logprobs") or body.get("suffix"):
            raise RequestError("echo, logprobs and suffix are not supported", param="echo")
        args = {"max_tokens": _int(body, "max_tokens", 16), "temperature": _number(body, "temperature", 1.0, 0.0, 2.0),
                "top_p": _number(body, "top_p", 1.0, 1e-9, 1.0), "seed": _int(body, "seed", None, lo=0),
                "stop": _stop(body)}
        cid, created = f"cmpl-{uuid.uuid4().hex}", int(time.time())
        if body.get("stream"):
            streams = [self.chat.complete_stream(p, **args) for p in prompts]
            firsts = list(await asyncio.gather(*(anext(st) for st in streams)))  # errors before the 200
            return StreamingResponse(self._completion_events(cid, created, streams, firsts),
                                     media_type="text/event-stream")
        outs = await asyncio.gather(*(self.chat.complete(p, **args) for p in prompts))
        n_prompt, n_out = sum(o[2] for o in outs), sum(o[3] for o in outs)
        return JSONResponse({"id": cid, "object": "text_completion", "created": created, "model": self.model_name,
                             "choices": [{"index": i, "text": t, "logprobs": None, "finish_reason": f}
                                         for i, (t, f, _, _) in enumerate(outs)],
                             "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_out,
                                       "total_tokens": n_prompt + n_out}})

    async def _completion_events(self, cid: str, created: int, streams: list[Any], firsts: list[Any]
                                 ) -> AsyncIterator[bytes]:
        """Chunks of every prompt's completion as they arrive, tagged by ``index`` (merged)."""
        queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()

        async def pump(i: int) -> None:
            item = firsts[i]
            try:
                while True:
                    await queue.put((i, item))
                    if isinstance(item, tuple):
                        return
                    item = await anext(streams[i])
            except Exception as exc:
                await queue.put((i, exc))

        def chunk(i: int, text: str, finish: str | None) -> bytes:
            return _sse({"id": cid, "object": "text_completion", "created": created, "model": self.model_name,
                         "choices": [{"index": i, "text": text, "logprobs": None, "finish_reason": finish}]})

        tasks = [asyncio.ensure_future(pump(i)) for i in range(len(streams))]
        try:
            left = len(streams)
            while left:
                i, item = await queue.get()
                if isinstance(item, Exception):
                    left -= 1
                    yield _sse({"error": {"message": f"internal error: {item!r}", "type": "server_error"}})
                elif isinstance(item, tuple):
                    left -= 1
                    yield chunk(i, "", item[1])
                else:
                    yield chunk(i, item, None)
        finally:
            for t in tasks:
                t.cancel()
        yield b"data: [DONE]\n\n"

    # ---- the rest -----------------------------------------------------------------------------
    async def models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{
            "id": self.model_name, "object": "model", "created": self.created, "owned_by": "prove_jax",
            "max_model_len": self.engine.config.max_len}]})

    async def health(self, request: Request) -> Response:
        s = self.engine.stats
        return JSONResponse({"status": "ok", "requests": self.requests, "errors": self.errors,
                             "decode_steps": s.decode_steps, "generated_tokens": s.generated_tokens,
                             "peak_decode_rows": s.peak_decode_rows, "slots": self.engine.config.slots})


def build_app(engine: Engine, chat: EngineChat, model_name: str) -> Starlette:
    """The Starlette app; its lifespan runs the engine (``async with engine``)."""
    server = Server(engine, chat, model_name)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with engine:
            yield

    async def not_found(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": {"message": f"no route {request.method} {request.url.path}",
                                       "type": "invalid_request_error", "param": None, "code": "not_found"}},
                            status_code=404)

    async def bad_method(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": {"message": f"method {request.method} not allowed on {request.url.path}",
                                       "type": "invalid_request_error", "param": None, "code": None}},
                            status_code=405)

    async def chat_completions(request: Request) -> Response:
        return await server.handle(request, server.chat_completions)

    async def completions(request: Request) -> Response:
        return await server.handle(request, server.completions)

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/completions", completions, methods=["POST"]),
        Route("/v1/models", server.models, methods=["GET"]),
        Route("/health", server.health, methods=["GET"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: not_found, 405: bad_method})
    app.state.server = server
    return app


@contextlib.contextmanager
def serve_in_thread(app: Starlette, host: str = "127.0.0.1", port: int = 0,
                    timeout_s: float = 120.0) -> Iterator[str]:
    """Run ``app`` under uvicorn in a daemon thread (its own event loop) and yield its ``/v1`` URL
    once ``/v1/models`` answers; stops the server on exit. ``port=0`` picks a free port.

    For callers that need the policy behind HTTP inside one process (τ² from ``eval all``, tests).
    The app's lifespan owns its engine, so the engine must not be entered elsewhere meanwhile."""
    import socket
    import threading

    import httpx
    import uvicorn

    if port == 0:
        with socket.socket() as s:
            s.bind((host, 0))
            port = int(s.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True, name="serve")
    thread.start()
    url = f"http://{host}:{port}/v1"
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"the server on {url} did not come up")
            time.sleep(0.05)
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=60)

