"""Markdown table cells and tables shared by the report and each benchmark's report section."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def pct(x: Any) -> str:
    """A fraction as a percent cell ("–": not run)."""
    return "–" if x is None else f"{100 * float(x):.1f}"


def num(x: Any, digits: int = 3) -> str:
    """A plain number cell ("–": not run)."""
    return "–" if x is None else f"{float(x):.{digits}f}"


def mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-markdown table as lines."""
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(r) + " |" for r in rows)]
