"""A domain = a state model + a seeded generator + typed tools. Declared once, served anywhere.

Every domain package has the same layout::

    servers/<domain>/
        __init__.py     docstring (the state behaviour and failure rules) + ``domain = Domain(...)``
        __main__.py     ``main("<domain>")``
        state.py        records, the ``State`` subclass, shared rule helpers
        world.py        ``generate(state, seeds)``: the seeded world
        tools_*.py      user-visible tools, marked with ``@tool``
        discovery.py    hidden discovery (and helper) tools, marked with ``@discovery`` / ``@helper``

Tools are registered explicitly: ``Domain(..., modules=(tools_a, tools_b, discovery))`` collects the
marked functions of each module in definition order, so listing order never depends on imports.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from types import ModuleType
from typing import Any, TypeVar

from servers.kit.clock import set_time
from servers.kit.fake import REFERENCE_DATE, Seeds, make_seeds
from servers.kit.state import State
from servers.kit.tools import TOOL_MARK, ToolSpec

OnTime = Callable[[Any, datetime, datetime], None]

S = TypeVar("S", bound=State)

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what OpenAI-compatible function calling accepts


class Domain:
    """Registry for one environment.

    Example (``servers/banking/__init__.py``)::

        domain = Domain("banking", BankingState, generate, description=__doc__,
                        modules=(tools_accounts, tools_transfers, discovery), on_time=run_due_transfers)

    ``on_time(state, before, after)`` runs whenever the session clock moves (see
    :mod:`servers.kit.clock`): scheduled work whose time has come happens there.
    """

    def __init__(
        self,
        name: str,
        state_cls: type[S],
        generate: Callable[[S, Seeds], None],
        *,
        description: str = "",
        modules: tuple[ModuleType, ...] = (),
        on_time: OnTime | None = None,
    ) -> None:
        self.name = name
        self.state_cls = state_cls
        self._generate = generate
        self.description = description
        self.on_time = on_time
        self.tools: dict[str, ToolSpec] = {}
        for module in modules:
            for value in vars(module).values():
                spec = getattr(value, TOOL_MARK, None)
                if isinstance(spec, ToolSpec) and getattr(value, "__module__", None) == module.__name__:
                    self._add(spec)

    def _add(self, spec: ToolSpec) -> None:
        if not _TOOL_NAME.match(spec.name):
            raise ValueError(f"tool {spec.name!r} is not a valid function name")
        if spec.name in self.tools:
            raise ValueError(f"duplicate tool {spec.name!r} in domain {self.name!r}")
        self.tools[spec.name] = spec

    def new_world(self, seed: int) -> State:
        """Generate and seal the seed world for ``seed`` (deterministic)."""
        state = self.state_cls()
        state.begin()
        set_time(state, REFERENCE_DATE)
        self._generate(state, make_seeds(seed, salt=self.name))
        state.commit()
        return state.seal()

    @property
    def user_tools(self) -> list[ToolSpec]:
        return [t for t in self.tools.values() if t.kind == "user"]
