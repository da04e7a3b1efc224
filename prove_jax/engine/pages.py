"""The host's page allocator for the paged KV cache (``models/paged.py``).

The device only follows a table; every decision about which page holds what is made here, by
the scheduler, between programs:

* a free list and a reference count per page;
* each slot's pages in order (its row of the table the programs read);
* :meth:`PageTable.share`: a row starts from another row's leading pages (a GRPO group's prompt is
  stored once and referenced by all ``G`` rows).  Only whole pages are shared, and a row writes
  only at slots past what it holds, so a row never writes into a page it shares: copy-on-write
  never has to copy (``EngineConfig`` keeps ``page_size`` a divisor of the shared unit,
  ``max_chunk``);
* :meth:`PageTable.ensure` / :meth:`PageTable.trim`: grow a row to the tokens a program will write,
  shrink it to what it holds after a turn.

Allocation is all-or-nothing (``ensure`` returns False and changes nothing when the free list is
short), so a program is dispatched only when every page it writes exists.  What to do when pages
run out (wait, evict an idle row's cached pages, preempt an episode) is the scheduler's policy.
"""

from __future__ import annotations

import logging
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from prove_jax.engine.config import EngineConfig
from prove_jax.models.config import ModelConfig
from prove_jax.models.kernels import KernelChoice, choose_kernel

log = logging.getLogger(__name__)


class PagePoolTooSmall(ValueError):
    """The configured pool cannot hold even one episode of ``max_len`` tokens."""


def pages_for(tokens: int, page_size: int) -> int:
    return -(-max(tokens, 0) // page_size)


class PageTable:
    """Pages of ``pages`` pool entries handed to ``slots`` rows of at most ``max_pages`` pages.

    ``shards``: the pool and the rows are split into that many equal parts on the devices
    (``PagedKVCache.shard_axes``: a data-parallel replica holds only its own rows' pages). Row
    ``r`` belongs to shard ``r // (slots / shards)`` and takes pages only from that shard's range;
    its table row holds page ids *within the shard*, which is what the shard's program indexes.
    Pages are shared only between rows of one shard."""

    def __init__(self, pages: int, page_size: int, slots: int, max_pages: int, shards: int = 1) -> None:
        if shards < 1 or pages % shards or slots % shards:
            raise ValueError(f"{pages} pages and {slots} slots do not split into {shards} shards")
        self.page_size, self.max_pages, self.shards = page_size, max_pages, shards
        self.shard_pages, self.shard_rows = pages // shards, slots // shards
        self.refs = np.zeros((pages,), np.int32)
        # pop() hands out a shard's low pages first
        self._free = [list(range((i + 1) * self.shard_pages - 1, i * self.shard_pages - 1, -1)) for i in range(shards)]
        self.rows: list[list[int]] = [[] for _ in range(slots)]
        self.table = np.zeros((slots, max_pages), np.int32)
        self.version = 0  # bumped on every change of ``table`` (the sampler re-uploads it then)

    @property
    def num_pages(self) -> int:
        return self.refs.shape[0]

    @property
    def free(self) -> int:
        """Free pages in the whole pool."""
        return sum(len(f) for f in self._free)

    def shard(self, slot: int) -> int:
        """The shard row ``slot`` (and every page it holds) lives on."""
        return slot // self.shard_rows

    def free_for(self, slot: int) -> int:
        """Free pages row ``slot`` can take (its shard's)."""
        return len(self._free[self.shard(slot)])

    @property
    def in_use(self) -> int:
        return self.num_pages - self.free

    def held(self, slot: int) -> int:
        """Pages row ``slot`` references (shared ones included)."""
        return len(self.rows[slot])

    def shortfall(self, slot: int, tokens: int) -> int:
        """Pages ``ensure(slot, tokens)`` would need from the free list."""
        return max(0, min(pages_for(tokens, self.page_size), self.max_pages) - len(self.rows[slot]))

    def ensure(self, slot: int, tokens: int) -> bool:
        """Give row ``slot`` pages for its first ``tokens`` tokens; False (nothing changed) when
        the free list is short."""
        need = self.shortfall(slot, tokens)
        if need == 0:
            return True
        free = self._free[self.shard(slot)]
        if need > len(free):
            return False
        row, base = self.rows[slot], self.shard(slot) * self.shard_pages
        for _ in range(need):
            page = free.pop()
            self.refs[page] = 1
            self.table[slot, len(row)] = page - base
            row.append(page)
        self.version += 1
        return True

    def trim(self, slot: int, tokens: int) -> None:
        """Drop row ``slot``'s pages past its first ``tokens`` tokens."""
        keep = pages_for(tokens, self.page_size)
        row = self.rows[slot]
        if len(row) <= keep:
            return
        for page in row[keep:]:
            self._unref(page)
        del row[keep:]
        self.table[slot, keep:] = 0
        self.version += 1

    def release(self, slot: int) -> None:
        """Row ``slot`` holds nothing any more."""
        self.trim(slot, 0)

    def share(self, dst: int, src: int, tokens: int) -> None:
        """Row ``dst`` (emptied first) starts with row ``src``'s pages for its first ``tokens``
        tokens (a whole number of pages)."""
        if tokens % self.page_size:
            raise ValueError(f"only whole pages are shared: {tokens} tokens, pages of {self.page_size}")
        if self.shard(dst) != self.shard(src):
            raise ValueError(f"rows {dst} and {src} live on different shards: pages are not shared across them")
        n = tokens // self.page_size
        if n > len(self.rows[src]):
            raise ValueError(f"row {src} holds {len(self.rows[src])} pages, {n} asked")
        self.release(dst)
        pages = self.rows[src][:n]
        for page in pages:
            self.refs[page] += 1
        self.rows[dst] = list(pages)
        self.table[dst, :n] = np.asarray(pages, np.int32) - self.shard(dst) * self.shard_pages
        self.version += 1

    def shared_pages(self, slot: int) -> int:
        """Pages of row ``slot`` that another row also references."""
        return int(sum(self.refs[p] > 1 for p in self.rows[slot]))

    def _unref(self, page: int) -> None:
        self.refs[page] -= 1
        if self.refs[page] == 0:
            self._free[page // self.shard_pages].append(page)
        elif self.refs[page] < 0:  # pragma: no cover - a bookkeeping bug, never a silent reuse
            raise RuntimeError(f"page {page} released more often than referenced")


def _platform(mesh: Mesh | None) -> str:
    device = mesh.devices.flat[0] if mesh is not None else jax.devices()[0]
    return str(device.platform)


def engine_kernel(config: EngineConfig, model_config: ModelConfig, mesh: Mesh | None, cache_dtype: Any
                  ) -> KernelChoice:
    """The paged attention an engine on ``mesh``'s devices runs (``engine.kernel``), said once."""
    dtype = str(jnp.dtype(cache_dtype or model_config.dtype))
    choice = choose_kernel(config.kernel, _platform(mesh), head_dim=model_config.head_dim,
                           page_size=config.page_len, dtype=dtype)
    _log_kernel_once(choice)
    return choice


_KERNELS_SAID: set[KernelChoice] = set()


def _log_kernel_once(choice: KernelChoice) -> None:
    if choice not in _KERNELS_SAID:
        _KERNELS_SAID.add(choice)
        log.info("engine attention: %s (%s)", choice.name, choice.reason)


def page_bytes(config: EngineConfig, model_config: ModelConfig, cache_dtype: Any = None) -> int:
    """Bytes of one page across every layer (K and V)."""
    itemsize = jnp.dtype(cache_dtype or model_config.dtype).itemsize
    return 2 * model_config.num_layers * config.page_len * model_config.num_kv_heads * model_config.head_dim * itemsize


def sharded_pool_pages(config: EngineConfig, shards: int) -> int:
    """The pool's pages when it is split into ``shards`` equal parts (``engine.pages`` rounded down)."""
    return config.pool_pages // shards * shards


def check_pool(config: EngineConfig, model_config: ModelConfig, cache_dtype: Any = None, shards: int = 1) -> None:
    """Refuse a pool that cannot hold one ``max_len`` row (no episode could ever finish); split
    over ``shards`` data-parallel replicas, each part must hold one."""
    need = config.row_pages
    if config.pool_pages // shards < need:
        per = page_bytes(config, model_config, cache_dtype)
        split = f" split over {shards} data-parallel row shards ({config.pool_pages // shards} each)" if shards > 1 else ""
        raise PagePoolTooSmall(
            f"engine.pages={config.pool_pages}{split} cannot hold one episode of max_len={config.max_len} tokens: "
            f"it needs at least {need} pages of {config.page_len} tokens ({need * per / 2**20:.1f} MiB of KV)"
            f"{' per shard' if shards > 1 else ''}; raise engine.pages (0 = slots x {need}) or lower max_len")
