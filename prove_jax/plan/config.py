"""The launcher's ``plan:`` section (kept import-free: ``prove_jax.config`` composes it)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class PlanConfig:
    """``plan.check``: run the fit check at start-up (sft/grpo stages); ``headroom``: fraction of
    device memory kept free; ``hbm_gib``: per-device memory to check against (default: what the
    device reports; required on CPU)."""

    check: bool = True
    headroom: float = 0.1
    hbm_gib: float | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.headroom < 1.0:
            raise ValueError(f"headroom must be in [0, 1), got {self.headroom}")
        if self.hbm_gib is not None and self.hbm_gib <= 0:
            raise ValueError(f"hbm_gib must be > 0, got {self.hbm_gib}")
