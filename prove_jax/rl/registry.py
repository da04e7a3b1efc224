"""Name-keyed registries of pure functions (advantage estimators, policy losses, aggregations).

A config names the function (``rl.advantage: grpo``, ``rl.policy_loss: gspo``); the trainer looks
it up here, so adding an estimator is one decorated function and never an ``if`` chain in the loop.
Unknown names fail with the list of choices (a typo must not fall back to a default).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


class Registry:
    """``name -> function``; ``@registry.register("name")`` adds one."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._fns: dict[str, Callable[..., Any]] = {}

    def register(self, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def add(fn: Callable[..., Any]) -> Callable[..., Any]:
            if name in self._fns:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._fns[name] = fn
            return fn

        return add

    def get(self, name: str) -> Callable[..., Any]:
        try:
            return self._fns[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} {name!r}; choose from {sorted(self._fns)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._fns

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._fns))

    def names(self) -> list[str]:
        return sorted(self._fns)
