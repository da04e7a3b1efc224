"""The host half of the engine: continuous batching over slots, driven from asyncio.

Callers (one per episode) hold a :class:`Session` — a slot whose KV-cache row persists across the
episode's turns — and ``await session.generate(context)`` for each assistant turn. ``context`` is
the whole token transcript so far; the session compares it with what its row already holds and
prefills only the new tail (the tool results or user turn just appended, plus the previous
turn's last sampled token, which decoding never fed back). The turn's ids come back with both
log-probs (see :mod:`prove_jax.engine.sampling`).

**Continuous batching.** One scheduler task loops: dispatch up to ``prefills_per_step`` prefill
calls for rows that have new tokens (grouped by chunk bucket), then one decode step over all
slots, then read back the *previous* iteration's results. A row whose turn ends simply goes idle
on the device (the stop logic runs there); its slot is refilled by the next prefill — the next
turn of the same episode, or a new episode — while the other rows keep decoding, with no
recompilation (fixed shapes) and no waiting for the slowest row.

**Host/device overlap.** JAX dispatch is asynchronous, so a dispatched step runs while the event
loop does host work: a single watcher thread blocks on each dispatched step's outputs in order
and hands the numpy results to the loop, and the loop awaits that hand-off, so tool calls,
parsing and tokenisation of the other episodes run while the device computes. Because the
scheduler reads results one step behind, the device always has the next step queued unless the
host falls behind. The watcher also times every program (dispatch -> ready) and so measures the
*device-wait* time: the gaps in which nothing was queued on the device.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from prove_jax.engine.config import EngineConfig, SamplingConfig
from prove_jax.engine.sampler import PrefillBatch, Sampler, StepOut
from prove_jax.engine.sampling import sampling_mode
from prove_jax.engine.watcher import Watcher


@dataclasses.dataclass
class Generation:
    """One assistant turn as sampled.

    ``logprobs`` are under the unmodified model, ``sample_logprobs`` under the distribution
    actually sampled from. ``finish`` is ``stop`` (a stop id, which is the last id), ``length``
    (the request's ``max_new_tokens``) or ``capacity`` (the row reached ``max_len``; ``ids`` may
    then be empty).
    """

    ids: list[int]
    logprobs: list[float]
    sample_logprobs: list[float]
    finish: str


@dataclasses.dataclass
class EngineStats:
    """Counters of one engine; ``device_wait_fraction`` = idle / (idle + busy) device time."""

    decode_steps: int = 0
    prefill_calls: int = 0
    prefill_tokens: int = 0
    prefill_padded_tokens: int = 0
    prefix_copies: int = 0
    prefix_tokens: int = 0  # prompt tokens copied from another row instead of prefilled
    generated_tokens: int = 0
    turns: int = 0
    peak_decode_rows: int = 0  # most rows that emitted a token in one decode step (batching seen)
    shared_pages: int = 0  # paged: pages a row referenced from another row instead of holding its own
    page_waits: int = 0  # paged: prefill chunks held back because the pool was short
    evictions: int = 0  # paged: idle rows whose cached pages were freed for a waiting turn
    preemptions: int = 0  # paged: episodes whose pages were freed (recomputed on their next turn)
    device_busy_s: float = 0.0
    device_idle_s: float = 0.0

    @property
    def device_wait_fraction(self) -> float:
        total = self.device_busy_s + self.device_idle_s
        return self.device_idle_s / total if total > 0 else 0.0


@dataclasses.dataclass
class _Request:
    sampling: SamplingConfig
    seed: int
    stream: int
    future: asyncio.Future[Generation]
    ids: list[int] = dataclasses.field(default_factory=list)
    logprobs: list[float] = dataclasses.field(default_factory=list)
    sample_logprobs: list[float] = dataclasses.field(default_factory=list)
    max_new: int = 1
    t_submit: float = 0.0
    on_token: Callable[[int], None] | None = None  # called on the event loop per sampled id (streaming)
    context: list[int] = dataclasses.field(default_factory=list)  # the turn's whole prompt (to recompute)


@dataclasses.dataclass
class _Slot:
    index: int
    fed: list[int] = dataclasses.field(default_factory=list)  # ids held in the KV-cache row
    pending: deque[list[int]] = dataclasses.field(default_factory=deque)  # chunks still to prefill
    reset: bool = True  # next prefill starts a fresh sequence
    request: _Request | None = None
    owned: bool = False
    # (leader slot, prefix tokens): start from a copy of the leader's row once it holds them
    copy_wait: tuple[int, list[int]] | None = None
    t_episode: float = 0.0  # when the current session took the slot (preemption: newest first)
    t_used: float = 0.0  # when the row last finished a turn (eviction of idle rows: oldest first)

    @property
    def decoding(self) -> bool:
        """Mid-turn with its prompt fully prefilled (so the device may be decoding it)."""
        return self.request is not None and not self.pending

    def planned(self) -> list[int]:
        """Tokens the row will hold once its dispatched and pending chunks have run."""
        if self.copy_wait is not None:
            return []
        return self.fed + [t for c in self.pending for t in c] if self.request is not None else self.fed


def _common_prefix(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    """Length of the common prefix of ``a`` and ``b``, at most ``limit``."""
    n = min(len(a), len(b), limit)
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class Session:
    """An episode's hold on one slot. Use through :meth:`Engine.session`."""

    def __init__(self, engine: Engine, slot: _Slot, seed: int) -> None:
        self.engine = engine
        self.slot = slot
        self.seed = seed
        self.turns = 0

    async def generate(
        self, context: Sequence[int], sampling: SamplingConfig | None = None, *, stream: int | None = None,
        on_token: Callable[[int], None] | None = None,
    ) -> Generation:
        """Sample one turn after ``context`` (the full transcript so far).

        ``stream`` selects the PRNG stream (default: this session's turn counter), so a turn's
        draws depend only on ``(seed, stream)`` and the context — not on the slot or the batch.
        ``on_token`` sees each id as it is read back from the device (a server's SSE stream).
        """
        stream = self.turns if stream is None else stream
        self.turns += 1
        return await self.engine._submit(self.slot, list(context), sampling or self.engine.sampling,
                                         self.seed, stream, on_token)


class Engine:
    """Continuous-batching rollout engine (see the module docstring).

    ``async with Engine(model, config, stop_ids=..., vocab_limit=...) as engine:`` starts the
    scheduler task and the watcher thread (``model`` may also be a prepared :class:`Sampler`,
    which keeps its compiled programs and cache across engine runs); ``engine.session(seed)`` hands out slots (waiting
    when all are taken); :meth:`generate` is a one-turn convenience for plain prompts.
    """

    def __init__(
        self,
        model: Any,
        config: EngineConfig,
        *,
        stop_ids: Sequence[int] | None = None,
        vocab_limit: int | None = None,
        sampling: SamplingConfig | None = None,
        cache_dtype: Any = None,
    ) -> None:
        self.config = config
        self.sampling = sampling or SamplingConfig()
        if isinstance(model, Sampler):
            if model.config != config:
                raise ValueError("the sampler was built for a different EngineConfig")
            self.sampler = model  # its stop ids / vocab limit are compiled in already
        else:
            if stop_ids is None:
                raise ValueError("stop_ids is required (e.g. special_ids(template, tokenizer).stop_ids; "
                                 "pass () to always run to max_new_tokens)")
            self.sampler = Sampler(model, config, stop_ids=stop_ids, vocab_limit=vocab_limit,
                                   cache_dtype=cache_dtype)
        self.stop_ids = frozenset(self.sampler.static.stop_ids)
        self.pages = self.sampler.pages  # the paged cache's host allocator (None: dense cache)
        self.stats = EngineStats()
        self.slots = [_Slot(i) for i in range(config.slots)]
        self._free: asyncio.Queue[int] | None = None
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._watcher: Watcher | None = None
        self._inflight: deque[tuple[asyncio.Future[Any], list[int] | None, int]] = deque()
        self._closing = False
        self._refused: set[int] = set()  # shards whose pages a prefill chunk was refused this iteration

    # ---- lifecycle --------------------------------------------------------------------------
    def forget_cached_rows(self) -> None:
        """Mark every idle row empty, so no new sequence starts from a copy of what it held (rows
        share cached prompt prefixes). Call it whenever the weights change or the cache was
        released: K/V computed by the previous policy must not seed the next one's episodes."""
        for slot in self.slots:
            if slot.request is None and not slot.owned:
                self._forget_row(slot)

    async def __aenter__(self) -> Engine:
        loop = asyncio.get_running_loop()
        self.sampler.state = self.sampler.init_state()  # rows left decoding by an earlier run stop
        self._free = asyncio.Queue()
        for s in self.slots:
            s.owned, s.request, s.reset = False, None, True
            s.pending.clear()
            self._forget_row(s)
            self._free.put_nowait(s.index)
        self._wake = asyncio.Event()
        self._closing = False
        self._watcher = Watcher(loop, self.stats)
        self._task = asyncio.create_task(self._loop(), name="engine-scheduler")
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing = True
        assert self._wake is not None and self._task is not None and self._watcher is not None
        self._wake.set()
        try:
            await self._task
        finally:
            await asyncio.to_thread(self._watcher.close)

    @contextlib.asynccontextmanager
    async def session(self, seed: int) -> AsyncIterator[Session]:
        """Hold a free slot for one episode (FIFO wait when all slots are taken)."""
        assert self._free is not None, "use the engine inside 'async with engine:'"
        index = await self._free.get()
        slot = self.slots[index]
        slot.owned, slot.reset = True, True
        slot.fed, slot.pending, slot.copy_wait = [], deque(), None
        slot.t_episode = time.perf_counter()
        try:
            yield Session(self, slot, seed)
        finally:
            slot.owned = False
            if slot.request is None:
                self._free.put_nowait(index)
            # else: the turn is still running on the device; the slot is freed when it ends

    async def generate(
        self,
        prompts: Sequence[Sequence[int]],
        sampling: SamplingConfig | None = None,
        seeds: Sequence[int] | None = None,
    ) -> list[Generation]:
        """One turn for each prompt (each in its own session), concurrently."""
        seeds = list(range(len(prompts))) if seeds is None else list(seeds)

        async def one(prompt: Sequence[int], seed: int) -> Generation:
            async with self.session(seed) as sess:
                return await sess.generate(prompt, sampling)

        return list(await asyncio.gather(*(one(p, s) for p, s in zip(prompts, seeds, strict=True))))

    # ---- requests ---------------------------------------------------------------------------
    async def _submit(
        self, slot: _Slot, context: list[int], sampling: SamplingConfig, seed: int, stream: int,
        on_token: Callable[[int], None] | None = None,
    ) -> Generation:
        if self._task is None or self._task.done():
            raise RuntimeError("engine is not running")
        if slot.request is not None:
            raise RuntimeError("this session already has a turn in flight")
        cfg = self.config
        if len(context) >= cfg.max_len:
            return Generation([], [], [], "capacity")
        if not context:
            raise ValueError("generate needs a non-empty context")
        n = len(slot.fed)
        if slot.reset or len(context) <= n or context[:n] != slot.fed:
            # new sequence, or the caller rewound/edited history: start the row over
            slot.reset, slot.fed, n = True, [], 0
            if cfg.share_prefixes:
                n = self._share_prefix(slot, context)
        slot.pending = deque(self._chunks(context[n:]))
        fut: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        slot.request = _Request(
            sampling=sampling, seed=int(seed) & 0xFFFFFFFF, stream=int(stream), future=fut,
            max_new=min(sampling.max_new_tokens, cfg.max_len - len(context)), t_submit=time.perf_counter(),
            on_token=on_token, context=context,
        )
        assert self._wake is not None
        self._wake.set()
        return await fut

    def _share_prefix(self, slot: _Slot, context: list[int]) -> int:
        """Plan to start a new sequence from the longest whole-chunk prefix of ``context`` that
        another row holds or is about to hold (its pending chunks count: a GRPO group's samples
        arrive together); returns the number of tokens covered (0: prefill from scratch).

        The row waits (``copy_wait``) until the leader's chunks covering the prefix have been
        dispatched, then ``_dispatch_copies`` copies the leader's row on device. Programs run
        in dispatch order and a row's ``fed`` is exactly what its cache holds, so the copy reads
        the prefix. The remaining chunks are the ones a prefill from scratch would run.
        """
        chunk = self.config.max_chunk
        limit = (len(context) - 1) // chunk * chunk  # keep >= 1 token to prefill (its logits)
        if limit < chunk:
            return 0
        best, best_len = None, 0
        for other in self.slots:
            if other is slot or (self.pages is not None and self.pages.shard(other.index) != self.pages.shard(slot.index)):
                continue  # (a pool split over data-parallel shards: pages are shared within one)
            planned = other.planned()
            if len(planned) < best_len + chunk:
                continue
            common = _common_prefix(planned, context, limit) // chunk * chunk
            if common > best_len:
                best, best_len = other, common
        if best is None:
            return 0
        slot.copy_wait = (best.index, list(context[:best_len]))
        return best_len

    def _chunks(self, tokens: list[int]) -> list[list[int]]:
        """``tokens`` cut into prefill chunks (``EngineConfig.split``)."""
        out, pos = [], 0
        for size in self.config.split(len(tokens)):
            out.append(tokens[pos : pos + size])
            pos += size
        return out

    def _dispatch_copies(self) -> None:
        """Copy rows for waiting sequences whose leader now holds their prefix; a sequence whose
        leader went elsewhere (reset, rewound) falls back to prefilling the prefix itself."""
        for slot in self.slots:
            if slot.copy_wait is None:
                continue
            leader_index, prefix = slot.copy_wait
            leader = self.slots[leader_index]
            n = len(prefix)
            if len(leader.fed) >= n and leader.fed[:n] == prefix:
                if self.pages is not None:  # reference the leader's pages: nothing moves on the device
                    self.pages.share(slot.index, leader.index, n)
                    self.stats.shared_pages += n // self.config.page_len
                else:
                    self.sampler.copy_prefix(slot.index, leader.index, n)
                slot.copy_wait, slot.reset, slot.fed = None, False, prefix
                self.stats.prefix_copies += 1
                self.stats.prefix_tokens += n
            elif leader.planned()[:n] != prefix:
                slot.copy_wait = None  # reset stays True: prefill from scratch
                slot.pending.extendleft(reversed(self._chunks(prefix)))

    # ---- scheduler --------------------------------------------------------------------------
    def _prefill_batch(self) -> tuple[PrefillBatch, list[int]] | None:
        """Rows to prefill next: the oldest waiting row and up to ``prefill_rows - 1`` others whose
        next chunk falls in the same bucket."""
        waiting = [s for s in self.slots if s.pending and s.request is not None and s.copy_wait is None]
        if not waiting:
            return None
        waiting.sort(key=lambda s: s.request.t_submit if s.request else 0.0)
        cfg = self.config
        chosen: list[_Slot] = []
        chunk = 0
        for s in waiting:  # oldest first; the first row that can run sets the chunk bucket
            if len(chosen) == cfg.prefill_rows:
                break
            if chosen and cfg.bucket(len(s.pending[0])) != chunk:
                continue
            if self.pages is not None and not self._pages_for_chunk(s):
                continue  # the pool is short: this turn waits (the newest ones wait longest)
            chosen.append(s)
            chunk = cfg.bucket(len(s.pending[0]))
        if not chosen:
            return None
        batch = self.sampler.empty_batch(chunk)
        for i, s in enumerate(chosen):
            req = s.request
            assert req is not None
            ids = s.pending.popleft()
            sp = req.sampling
            batch.rows[i] = s.index
            batch.tokens[i, : len(ids)] = ids
            batch.lens[i] = len(ids)
            batch.start[i] = 0 if s.reset else len(s.fed)
            batch.reset[i] = s.reset
            batch.final[i] = not s.pending
            batch.max_new[i] = req.max_new
            batch.seed[i] = req.seed
            batch.stream[i] = req.stream
            batch.temperature[i] = sp.temperature
            batch.top_k[i] = sp.top_k
            batch.top_p[i] = sp.top_p
            if s.reset:
                s.fed, s.reset = [], False
            s.fed.extend(ids)
            self.stats.prefill_tokens += len(ids)
        self.stats.prefill_padded_tokens += chunk * cfg.prefill_rows
        return batch, [s.index for s in chosen]

    # ---- pages (paged cache) ------------------------------------------------------------------
    def _chunk_need(self, s: _Slot) -> int:
        """Tokens row ``s`` must have pages for before its next chunk runs: what it holds plus the
        chunk, and with the turn's last chunk the whole turn it may then decode (``max_new - 1``
        more tokens: the first is sampled by the prefill), so a decoding row never needs a page."""
        req = s.request
        assert req is not None
        held = 0 if s.reset else len(s.fed)
        need = held + len(s.pending[0])
        if len(s.pending) == 1:
            need += req.max_new - 1
        return min(need, self.config.max_len)

    def _pages_for_chunk(self, s: _Slot) -> bool:
        """Give row ``s`` the pages its next chunk needs (a reset row first drops what it held);
        when the pool is short, free idle rows' cached pages, oldest first. False: it waits."""
        assert self.pages is not None
        if s.reset:
            self.pages.release(s.index)
        need = self._chunk_need(s)
        if self.pages.ensure(s.index, need):
            return True
        short = self.pages.shortfall(s.index, need) - self.pages.free_for(s.index)
        shard = self.pages.shard(s.index)  # only its own shard's pages can serve it
        for idle in sorted((o for o in self.slots if self._evictable(o) and self.pages.shard(o.index) == shard),
                           key=lambda o: o.t_used):
            if short <= 0:
                break
            freed = self.pages.held(idle.index) - self.pages.shared_pages(idle.index)
            self._forget_row(idle)
            self.stats.evictions += 1
            short -= freed
        if self.pages.ensure(s.index, need):
            return True
        self.stats.page_waits += 1
        self._refused.add(shard)
        return False

    def _evictable(self, s: _Slot) -> bool:
        """An idle row (no session, no turn) whose pages only serve as a prefix cache."""
        assert self.pages is not None
        return not s.owned and s.request is None and self.pages.held(s.index) > 0

    def _forget_row(self, s: _Slot) -> None:
        """Row ``s`` holds nothing any more (its pages, if paged, go back to the pool)."""
        if self.pages is not None:
            self.pages.release(s.index)
        s.fed, s.reset, s.copy_wait = [], True, None

    def _preempt(self) -> bool:
        """Nothing can run and a turn waits for pages: free the pages of the newest episode that
        holds any on a shard where a turn was refused (vLLM's rule: the newest waits). Its tokens are recomputed from its context when
        its turn next runs. Returns whether anything was freed."""
        assert self.pages is not None
        pages = self.pages
        holders = [s for s in self.slots if pages.held(s.index) > 0 and not s.decoding
                   and pages.shard(s.index) in self._refused]
        if not holders:
            return False
        victim = max(holders, key=lambda s: s.t_episode)
        self._forget_row(victim)
        req = victim.request
        if req is not None:  # a turn still waiting for its prompt: all of it is prefilled again
            victim.pending = deque(self._chunks(req.context))
        self.stats.preemptions += 1
        return True

    def _decoding(self) -> bool:
        """Whether any row may be decoding (its prompt is fully prefilled, turn not finished)."""
        return any(s.decoding for s in self.slots)

    async def _loop(self) -> None:
        assert self._wake is not None and self._watcher is not None
        try:
            while True:
                dispatched = 0
                self._refused = set()
                self._dispatch_copies()  # before any prefill of this iteration (see _share_prefix)
                for _ in range(self.config.prefills_per_step):
                    picked = self._prefill_batch()
                    if picked is None:
                        break
                    batch, rows = picked
                    t = time.perf_counter()
                    out = self.sampler.prefill(batch)
                    self._inflight.append((self._watcher.submit(out, t), rows, 1))
                    self.stats.prefill_calls += 1
                    dispatched += 1
                if self._decoding():
                    block = self.config.decode_block
                    t = time.perf_counter()
                    out = self.sampler.decode(block, self._decode_mode())
                    self._inflight.append((self._watcher.submit(out, t), None, block))
                    dispatched += 1
                # Read results one iteration behind: keep the just-dispatched work queued.
                while self._inflight and (len(self._inflight) > dispatched or not dispatched):
                    fut, rows, block = self._inflight.popleft()
                    self._consume(await fut, rows, block)
                if not dispatched and not self._inflight:
                    if self._closing and not any(s.request for s in self.slots):
                        return
                    if self.pages is not None and self._starved() and self._preempt():
                        continue
                    self._wake.clear()
                    if not self._work_ready():
                        await self._wake.wait()
                else:
                    await asyncio.sleep(0)  # let host tasks (tools, parsing) run a slice
        except BaseException as exc:
            for s in self.slots:
                if s.request is not None and not s.request.future.done():
                    s.request.future.set_exception(RuntimeError(f"engine scheduler failed: {exc!r}"))
            raise

    def _decode_mode(self) -> str:
        """What the rows' sampling needs (``sampling.sampling_mode``), from every row with a turn
        (a superset of those decoding on the device): decided here, never asked of the device."""
        sps = [s.request.sampling for s in self.slots if s.request is not None]
        return sampling_mode([sp.temperature for sp in sps], [sp.top_k for sp in sps], [sp.top_p for sp in sps])

    def _starved(self) -> bool:
        """A chunk was refused pages in this iteration (and, as the caller checks, nothing runs
        that could ever free one). Not merely "a turn is pending": a turn submitted while the loop
        awaited a result has not been offered pages yet (that race once preempted an idle row
        that eviction should have taken)."""
        return bool(self._refused)

    def _work_ready(self) -> bool:
        return self._closing or any(s.request is not None for s in self.slots)

    def _consume(self, out: StepOut, rows: list[int] | None, block: int) -> None:
        """Append a program's tokens to their rows' turns; finish turns that stopped.

        A decode block carries ``[block, rows]`` outputs: consumed step by step, in order."""
        if rows is None and block > 1:
            for i in range(block):
                if not out.emitted[i].any():
                    break  # the block ended early (a turn finished, or nothing was decoding)
                self.stats.decode_steps += 1
                self._consume_step(StepOut(*(getattr(out, f.name)[i] for f in dataclasses.fields(out))), None)
            return
        if rows is None:
            self.stats.decode_steps += 1
        self._consume_step(out, rows)

    def _consume_step(self, out: StepOut, rows: list[int] | None) -> None:
        indices = range(self.config.slots) if rows is None else rows
        emitted = out.emitted.tolist()
        if not any(emitted):
            return
        toks, mlps, slps, stops = out.tok.tolist(), out.model_logprob.tolist(), out.sample_logprob.tolist(), \
            out.stopped.tolist()
        if rows is None:
            self.stats.peak_decode_rows = max(self.stats.peak_decode_rows, sum(map(bool, emitted)))
        for j, r in enumerate(indices):
            if not emitted[j]:
                continue
            slot = self.slots[r]
            req = slot.request
            if req is None:  # pragma: no cover - device/host bookkeeping disagree
                raise RuntimeError(f"row {r} emitted a token without a request")
            req.ids.append(toks[j])
            req.logprobs.append(mlps[j])
            req.sample_logprobs.append(slps[j])
            self.stats.generated_tokens += 1
            if req.on_token is not None:
                try:
                    req.on_token(toks[j])
                except Exception:  # a listener's bug must not stop the scheduler: stop telling it
                    req.on_token = None
            if stops[j]:
                self._finish(slot, req)

    def _finish(self, slot: _Slot, req: _Request) -> None:
        if req.ids[-1] in self.stop_ids:
            finish = "stop"
        elif len(req.ids) >= req.max_new and req.max_new == req.sampling.max_new_tokens:
            finish = "length"
        else:
            finish = "capacity"
        slot.fed.extend(req.ids[:-1])  # the last sampled id was never fed to the cache
        slot.request = None
        slot.t_used = time.perf_counter()
        if self.pages is not None:  # the turn's unused allowance goes back to the pool
            self.pages.trim(slot.index, len(slot.fed))
        self.stats.turns += 1
        if not req.future.done():
            req.future.set_result(Generation(req.ids, req.logprobs, req.sample_logprobs, finish))
        if not slot.owned and self._free is not None:
            self._free.put_nowait(slot.index)
