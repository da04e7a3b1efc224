"""Target topologies the planner compiles for, without the hardware.

``v5p-32`` / ``v5e-256`` / ``v6e-64`` / ``v4-32`` (Cloud TPU slice names) or an explicit
``v5p:2x2x4``: libtpu's deviceless topology (``jax.experimental.topologies``) gives the slice's
devices to ``jit(...).lower(...).compile()``, and the TPU compiler's ``memory_analysis()`` is
the per-chip truth. ``cpu-8``: the host platform with that many devices (XLA:CPU's figures).
``8xh100`` / ``8xh200``: no deviceless GPU target is reachable from the installed jax (it needs
the CUDA plugin and its libraries), so these are planned analytically from the same shapes and
say so.

Chip figures are the vendors' published per-chip numbers: HBM capacity, dense bf16 peak and HBM
bandwidth; ``link_bw`` is the per-chip interconnect bandwidth (ICI / NVLink) used for the weight
transfer estimate.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from typing import Any

GiB = 1024**3


@dataclasses.dataclass(frozen=True)
class Chip:
    kind: str
    hbm_bytes: int
    peak_flops: float  # dense bf16 per chip
    hbm_bw: float  # bytes/s
    link_bw: float  # bytes/s per chip, interconnect


CHIPS: dict[str, Chip] = {
    "v4": Chip("TPU v4", 32 * GiB, 275e12, 1.2e12, 2.7e11),
    "v5e": Chip("TPU v5e", 16 * GiB, 197e12, 8.19e11, 2.0e11),
    "v5p": Chip("TPU v5p", 95 * GiB, 459e12, 2.765e12, 6.0e11),
    "v6e": Chip("TPU v6e", 32 * GiB, 918e12, 1.64e12, 4.5e11),
    "h100": Chip("NVIDIA H100 SXM 80GB", int(79.6 * GiB), 989e12, 3.35e12, 4.5e11),
    "h200": Chip("NVIDIA H200 141GB", int(139.8 * GiB), 989e12, 4.8e12, 4.5e11),
}

# TPU slice name -> (generation, chips); v4/v5p count TensorCores (2 per chip), v5e/v6e chips.
_CORES_PER_CHIP = {"v4": 2, "v5p": 2, "v5e": 1, "v6e": 1}


@dataclasses.dataclass(frozen=True)
class Topology:
    """A planning target. ``devices`` is None for analytic (GPU) targets."""

    name: str
    platform: str  # tpu | cpu | gpu
    chip: Chip
    chips: int
    chips_per_host: int
    devices: tuple[Any, ...] | None
    method: str  # "compiled (libtpu deviceless)", "compiled (XLA:CPU)", "analytic"

    @property
    def hosts(self) -> int:
        return max(1, self.chips // self.chips_per_host)

    @property
    def compiled(self) -> bool:
        return self.devices is not None

    def host_devices(self, host: int = 0) -> list[Any]:
        """The devices of one host (one JAX process): where that process's engine lives."""
        if self.devices is None:
            raise ValueError(f"{self.name} is analytic: it has no devices")
        mine = [d for d in self.devices if getattr(d, "process_index", 0) == host]
        return mine if mine else list(self.devices[: self.chips_per_host])


def _tpu_shape(gen: str, chips: int) -> str:
    """The physical slice shape libtpu expects for ``chips`` chips (3-D for v4/v5p, 2-D else)."""
    if gen in ("v4", "v5p"):
        dims = [1, 1, 1]
        i = 0
        while math.prod(dims) < chips:
            dims[i % 3] *= 2
            i += 1
        if math.prod(dims) != chips:
            raise ValueError(f"{chips} chips is not a {gen} slice")
        return "x".join(str(d) for d in sorted(dims))
    side = 1
    while side * side * 2 <= chips:
        side *= 2
    other = chips // side
    if side * other != chips:
        raise ValueError(f"{chips} chips is not a {gen} slice")
    return f"{side}x{other}"


def _host_memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError):  # pragma: no cover - non-POSIX
        return 16 * GiB


def resolve(name: str) -> Topology:
    """``v5p-32`` | ``v5p:2x2x4`` | ``cpu-8`` | ``8xh100`` | ``8xh200`` -> a Topology."""
    n = name.strip().lower()
    m = re.fullmatch(r"(\d+)x(h100|h200)", n) or re.fullmatch(r"(h100|h200)-(\d+)", n)
    if m:
        count, kind = (int(m.group(1)), m.group(2)) if m.group(1).isdigit() else (int(m.group(2)), m.group(1))
        return Topology(name, "gpu", CHIPS[kind], count, min(count, 8), None, "analytic")
    m = re.fullmatch(r"cpu-(\d+)", n)
    if m:
        import jax

        count = int(m.group(1))
        devs = jax.devices("cpu")
        if len(devs) < count:
            raise ValueError(f"{name}: this process has {len(devs)} CPU devices; set "
                             f"XLA_FLAGS=--xla_force_host_platform_device_count={count} before jax starts "
                             "(`python -m prove_jax.plan` does it for you)")
        chip = Chip("CPU (host memory / devices)", _host_memory_bytes() // count, 1e12, 1e10, 1e10)
        return Topology(name, "cpu", chip, count, count, tuple(devs[:count]), "compiled (XLA:CPU)")
    m = re.fullmatch(r"(v4|v5p|v5e|v6e)(?:-(\d+)|:([0-9x]+))", n)
    if not m:
        raise ValueError(f"unknown topology {name!r}: use e.g. v5p-32, v5e-256, v6e-64, v5p:2x2x4, cpu-8, "
                         "8xh100, 8xh200")
    gen = m.group(1)
    if m.group(2):
        chips = int(m.group(2)) // _CORES_PER_CHIP[gen]
        shape = _tpu_shape(gen, chips)
    else:
        shape = m.group(3)
    from jax.experimental import topologies

    # libtpu takes a machine-wide lock file unless told several processes may load it: a
    # deviceless compile touches no chip, so parallel planners (and test workers) are safe.
    os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
    desc = topologies.get_topology_desc(platform="tpu", topology_name=f"{gen}:{shape}")
    devices = tuple(desc.devices)
    hosts = len({getattr(d, "process_index", 0) for d in devices}) or 1
    chips = len(devices)
    return Topology(name, "tpu", CHIPS[gen], chips, max(1, chips // hosts), devices, "compiled (libtpu deviceless)")
