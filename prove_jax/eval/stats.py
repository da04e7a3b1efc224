"""Standard errors for held-out figures, so a run's summary says what its sample size supports.

The in-domain eval scores a few dozen held-out examples on CPU runs: a difference of a few
hundredths between two models can be one example flipping. Every mean it reports carries the
standard error of that mean, and two models evaluated on the same examples are compared
*paired* (per-example differences), which removes the spread the examples share.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence


def mean_se(values: Sequence[float]) -> tuple[float, float | None]:
    """The mean and its standard error ``s / sqrt(n)`` (``s`` with ``n - 1``); ``None`` for the
    error of fewer than two values. Raises on an empty sequence."""
    n = len(values)
    if n == 0:
        raise ValueError("mean_se of no values")
    m = math.fsum(values) / n
    if n < 2:
        return m, None
    var = math.fsum((v - m) ** 2 for v in values) / (n - 1)
    return m, math.sqrt(var / n)


@dataclasses.dataclass(frozen=True)
class PairedDifference:
    """``b - a`` over the examples both were scored on: the mean difference, its standard error
    (``None`` under two examples) and how many examples were paired."""

    diff: float
    se: float | None
    n: int

    def verdict(self, a: str, b: str) -> str:
        """One line: ``b`` above, below or within one standard error of ``a``."""
        if self.se is None:
            return f"{b} - {a} = {self.diff:+.3f} on {self.n} example(s): too few for an error bar"
        where = ("within one standard error of" if abs(self.diff) <= self.se else
                 "above" if self.diff > 0 else "below")
        return f"{b} {where} {a}: {self.diff:+.3f} ± {self.se:.3f} (paired, n={self.n})"


def paired_difference(a: Mapping[str, float], b: Mapping[str, float]) -> PairedDifference:
    """``b - a`` per example id present in both (ids in only one are left out)."""
    ids = [k for k in a if k in b]
    if not ids:
        raise ValueError("paired_difference: the two sets share no example")
    diff, se = mean_se([b[k] - a[k] for k in ids])
    return PairedDifference(diff, se, len(ids))
