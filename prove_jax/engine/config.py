"""Engine configuration: how to sample (per request) and how the slots are laid out (per engine).

Two small frozen dataclasses instead of one large config: :class:`SamplingConfig` travels with
each request (training rollouts, greedy eval and a sampled demo can share one engine and one set
of compiled programs, because every field becomes a per-row *array* on the device), while
:class:`EngineConfig` fixes the shapes of the compiled programs (slots, cache capacity, prefill
chunk buckets) and therefore the compile count.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class SamplingConfig:
    """Per-request sampling.

    ``temperature == 0`` means greedy (argmax; its sampling log-prob is 0, a point mass).
    ``top_k == 0`` and ``top_p == 1`` switch truncation off; when no row of a step truncates,
    the step skips the vocabulary sort entirely.
    ``max_new_tokens`` caps one assistant turn (the episode driver also caps whole episodes).
    """

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_new_tokens: int = 256

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0, got {self.top_k}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


GREEDY = SamplingConfig(temperature=0.0)


@dataclasses.dataclass(frozen=True)
class EngineConfig:
    """Static shapes of the engine: each distinct value here is a distinct compiled program.

    * ``slots``: rows of the decode batch (concurrent sequences). With a mesh it should be a
      multiple of the data x fsdp size so the batch shards evenly.
    * ``max_len``: most tokens one row may hold (prompt + every turn of an episode).
    * ``min_chunk`` / ``max_chunk``: prefill chunk lengths are the powers of two between them
      (both must be powers of two), so a run compiles ``log2(max/min) + 1`` prefill programs
      and one decode program, whatever the prompt lengths.
    * ``prefill_rows``: rows prefilled together in one prefill call (rows of equal chunk bucket
      are grouped; the rest of the batch keeps decoding between prefill calls).
    * ``prefills_per_step``: prefill calls dispatched between two decode steps; bounds how long
      decoding rows wait behind refills (chunked-prefill interleaving).
    * ``decode_block``: this many decode steps run inside one compiled program (a
      ``lax.while_loop``), so the host's per-dispatch cost (Python scheduling, the device→host
      copy) is paid once per block. Rows whose turn ends inside a block idle in place; the block
      stops early only when no row decodes. Prefills run between blocks, so a new request or a
      finished turn waits at most one block (JetStream's insert/generate split, vLLM's
      multi-step scheduling).

    * ``share_prefixes``: a new sequence whose first chunks equal tokens already cached in another
      row (a GRPO group's shared prompt, a common system prompt + tool schemas) copies those K/V
      rows on device instead of prefilling them again. Only whole ``max_chunk`` chunks are
      shared, so the row's remaining chunks — and its numerics — are exactly those of a prefill
      from scratch.

    Where the K/V live (``kv``):

    * ``paged`` (default): a pool of ``pages`` pages of ``page_size`` tokens
      (``models/paged.py``); a row holds only the pages its tokens fill, a GRPO group's shared
      prompt pages are referenced, not copied, and attention reads only live pages (the TPU
      ragged paged attention kernel on TPU, ``kernel``). ``pages: 0`` = ``slots x row_pages``,
      the dense layout's memory (start-up may size it from device memory instead); a pool that
      cannot hold one ``max_len`` row is refused. ``page_size`` (0: ``min(64, max_chunk)``) divides ``max_chunk``, the unit
      prefix sharing shares, so a row never writes into a page it shares.
    * ``dense``: ``max_len + max_chunk`` slots per row (``models/cache.py``; the slack lets a
      right-padded chunk be written at any legal offset without XLA clamping the write onto valid
      entries). Kept as the reference the paged engine is tested and benchmarked against.

    A run's config (the launch YAML's ``engine:`` section is this class) may leave two shapes for
    start-up to fill in: ``slots: 0`` (as many as the devices' memory holds, sized by the plan) and
    ``max_len: null`` (the transcript cap derived from the data, ``rl.caps``). An engine is built
    only from a config that is :attr:`resolved`. Where a run's engine holds its weights:

    * ``param_dtype``: the weight dtype (empty: the model's compute dtype; bf16 in the paper
      recipes, whose f32 master weights stay with the trainer);
    * ``mesh``: the layout over one process's devices, e.g. ``"tensor=4"`` (empty: a decode
      layout, ``engine.weights.decode_layout``: tensor parallel over as many local devices as the
      KV heads split over, data parallel over the rest, never the trainer's fsdp, whose weights
      would be gathered at every step; one device: the trainer's placement). With the trainer's
      dtype and layout in one process the engine decodes from the trainer's own buffers,
      otherwise every update is one on-device cast + reshard (``engine.weights.WeightSync``).
    """

    slots: int = 8
    max_len: int | None = 2048
    min_chunk: int = 32
    max_chunk: int = 256
    prefill_rows: int = 2
    prefills_per_step: int = 1
    decode_block: int = 8
    share_prefixes: bool = True
    kv: str = "paged"
    page_size: int = 0  # 0: min(64, max_chunk)
    pages: int = 0
    pages_per_block: int = 8  # pages the XLA paged path reads per loop iteration
    kernel: str = "auto"  # models.kernels.KERNELS
    # Set in a run's YAML; no CLI flag: serve and eval load one model with their own --mesh/--dtype.
    param_dtype: str = dataclasses.field(default="", metadata={"cli": False})
    mesh: str = dataclasses.field(default="", metadata={"cli": False})

    def __post_init__(self) -> None:
        for name in ("min_chunk", "max_chunk"):
            v = getattr(self, name)
            if v < 1 or v & (v - 1):
                raise ValueError(f"{name} must be a power of two, got {v}")
        if self.min_chunk > self.max_chunk:
            raise ValueError(f"min_chunk {self.min_chunk} > max_chunk {self.max_chunk}")
        if self.slots < 0:
            raise ValueError(f"slots must be >= 0 (0 = sized from device memory at start-up), got {self.slots}")
        if self.prefill_rows < 1 or self.prefills_per_step < 1 or self.decode_block < 1:
            raise ValueError("prefill_rows, prefills_per_step and decode_block must be >= 1")
        if self.max_len is not None and self.max_len < 2:
            raise ValueError(f"max_len must be >= 2, got {self.max_len}")
        if self.kv not in ("paged", "dense"):
            raise ValueError(f"engine.kv must be 'paged' or 'dense', got {self.kv!r}")
        if self.page_size < 0 or self.pages < 0 or self.pages_per_block < 1:
            raise ValueError("engine.page_size and engine.pages must be >= 0, engine.pages_per_block >= 1")
        if self.kv == "paged" and self.max_chunk % self.page_len:
            raise ValueError(f"engine.page_size ({self.page_size}) must divide engine.max_chunk ({self.max_chunk}): "
                             "prefixes are shared in whole chunks, and a row must never write into a shared page")

    @property
    def resolved(self) -> bool:
        """Whether every shape is fixed (``slots >= 1`` and a ``max_len``): what an engine needs."""
        return self.slots >= 1 and self.max_len is not None

    def require_resolved(self) -> None:
        if not self.resolved:
            raise ValueError(f"engine config has slots={self.slots}, max_len={self.max_len}: start-up sizes "
                             "slots=0 and derives max_len=null before an engine is built")

    @property
    def capacity(self) -> int:
        """KV-cache slots per row (``max_len`` plus one chunk of slack)."""
        self.require_resolved()
        assert self.max_len is not None
        return self.max_len + self.max_chunk

    @property
    def paged(self) -> bool:
        return self.kv == "paged"

    @property
    def page_len(self) -> int:
        """Tokens per page (``page_size``, or ``min(64, max_chunk)`` when 0)."""
        return self.page_size or min(64, self.max_chunk)

    @property
    def row_pages(self) -> int:
        """Pages one row's ``max_len`` tokens fill."""
        self.require_resolved()
        assert self.max_len is not None
        return -(-self.max_len // self.page_len)

    @property
    def max_pages(self) -> int:
        """The page table's width: :attr:`row_pages` rounded up to whole ``pages_per_block`` units,
        so a row's last unit (and the TPU kernel's last block of pages) stays inside its table row."""
        return -(-self.row_pages // self.pages_per_block) * self.pages_per_block

    @property
    def pool_pages(self) -> int:
        """Pages in the pool (``pages``, or ``slots x row_pages`` when 0)."""
        return self.pages or self.slots * self.row_pages

    @property
    def buckets(self) -> tuple[int, ...]:
        """All prefill chunk lengths (ascending)."""
        out, c = [], self.min_chunk
        while c <= self.max_chunk:
            out.append(c)
            c *= 2
        return tuple(out)

    def bucket(self, n: int) -> int:
        """Chunk length used to prefill ``n`` tokens in one call (``n <= max_chunk``)."""
        if n > self.max_chunk:
            raise ValueError(f"{n} tokens exceed max_chunk {self.max_chunk}")
        c = self.min_chunk
        while c < n:
            c *= 2
        return c

    def split(self, n: int) -> list[int]:
        """Token counts of the chunks that prefill ``n`` tokens: full ``max_chunk`` pieces, then
        the rest. Depends on ``n`` alone, so a row's programs (and its numerics) never depend on
        what the other rows are doing — the basis of refill invariance."""
        sizes = [self.max_chunk] * (n // self.max_chunk)
        if n % self.max_chunk:
            sizes.append(n % self.max_chunk)
        return sizes
