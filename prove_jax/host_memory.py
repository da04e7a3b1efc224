"""Keep XLA:CPU's per-step buffers in the heap instead of fresh ``mmap`` pages every step.

An XLA:CPU executable allocates its temporary buffer (all intermediates of the program, one
block) with ``malloc`` at every execution and frees it at the end.  glibc serves blocks above its
mmap threshold with a fresh ``mmap`` and returns them with ``munmap``; the threshold adapts to the
largest freed block but never beyond 32 MiB.  So as soon as a train step's temporaries pass
32 MiB, every step faults in and zeroes every page of them again: for the tiny Qwen3 at batch 10 x
129 tokens (36 MB of temporaries) that is ~9,300 page faults per step (it cost the step +40 % when
8 x 129 was past the cap; ``benchmarks/bench_models.py`` prints faults per step).

:func:`configure_host_allocator` raises the mmap and trim thresholds with ``mallopt`` so such
blocks come from, and go back to, the heap: the pages stay mapped and the next step reuses them.
The cost is that freed memory is kept by the process up to ``retain_bytes`` instead of going back
to the OS, which is what a long-running trainer wants.  A block allocated off the main thread
must fit in one glibc thread-arena heap (64 MiB, less what the heap already holds), or glibc
still uses ``mmap`` whatever the thresholds: the wider bench model's 89 MB still faults every
page.  PyTorch's CPU docs point to jemalloc/tcmalloc (``LD_PRELOAD``) for this problem; jemalloc
with its default settings faulted just as much here.

Only glibc is handled (``mallopt`` with these parameters); elsewhere the call is a no-op that
says so by returning False.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
DEFAULT_RETAIN_BYTES = 1 << 30
"""Blocks up to 1 GiB are served from the heap and kept after ``free``."""

_applied: int | None = None


def configure_host_allocator(retain_bytes: int = DEFAULT_RETAIN_BYTES) -> bool:
    """Serve and keep heap blocks up to ``retain_bytes`` (glibc ``mallopt``); True if applied.

    Process-wide and idempotent; call it once before the first jitted step (the launcher and
    the benchmarks do).
    """
    global _applied
    if retain_bytes <= 0:
        raise ValueError(f"retain_bytes must be positive, got {retain_bytes}")
    if _applied == retain_bytes:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018  (glibc only: musl's mallopt ignores these)
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    value = min(int(retain_bytes), 2**31 - 1)
    ok = mallopt(M_MMAP_THRESHOLD, value) == 1 and mallopt(M_TRIM_THRESHOLD, value) == 1
    if ok:
        _applied = retain_bytes
    return ok
