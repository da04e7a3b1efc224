"""A domain = a state model + a seeded generator + typed tools. Declared once, served anywhere."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from servers.kit.fake import Seeds, make_seeds
from servers.kit.state import State
from servers.kit.tools import ToolKind, ToolSpec, make_spec

F = TypeVar("F", bound=Callable[..., Any])
S = TypeVar("S", bound=State)

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what OpenAI-compatible function calling accepts


class Domain:
    """Registry for one environment.

    Example::

        domain = Domain("banking", BankingState, generate_banking, description="Retail bank")

        @domain.tool(produces=("transfer_id",), consumes=("account_id",))
        def transfer_funds(s: BankingState, from_account_id: str, ...) -> dict: ...
    """

    def __init__(
        self,
        name: str,
        state_cls: type[S],
        generate: Callable[[S, Seeds], None],
        *,
        description: str = "",
    ) -> None:
        self.name = name
        self.state_cls = state_cls
        self._generate = generate
        self.description = description
        self.tools: dict[str, ToolSpec] = {}

    def tool(
        self,
        fn: F | None = None,
        *,
        name: str | None = None,
        kind: ToolKind = "user",
        produces: tuple[str, ...] = (),
        consumes: tuple[str, ...] = (),
        requires: tuple[str, ...] = (),
        establishes: tuple[str, ...] = (),
        read_only: bool = False,
        tags: tuple[str, ...] = (),
    ) -> Any:
        """Register a tool. ``produces``/``consumes`` name entity-id types (``account_id``...);
        ``requires`` names state preconditions (``engine_on``) and ``establishes`` the ones this tool
        makes true — together they give synthesis the implicit (state) edges of the tool graph."""

        def register(f: F) -> F:
            spec = make_spec(
                f, name=name, kind=kind, produces=produces, consumes=consumes,
                requires=requires, establishes=establishes, read_only=read_only, tags=tags,
            )
            if not _TOOL_NAME.match(spec.name):
                raise ValueError(f"tool name {spec.name!r} is not a valid function name")
            if spec.name in self.tools:
                raise ValueError(f"duplicate tool {spec.name!r} in domain {self.name!r}")
            self.tools[spec.name] = spec
            return f

        return register(fn) if fn is not None else register

    def discovery(self, fn: F | None = None, **kw: Any) -> Any:
        """Register a read-only discovery tool (hidden from the model, used by synthesis)."""
        return self.tool(fn, kind="discovery", **kw)

    def helper(self, fn: F | None = None, **kw: Any) -> Any:
        """Register a hidden helper/debug tool."""
        return self.tool(fn, kind="helper", **kw)

    def new_world(self, seed: int) -> State:
        """Generate and seal the seed world for ``seed`` (deterministic)."""
        state = self.state_cls()
        state.begin()
        self._generate(state, make_seeds(seed, salt=self.name))
        state.commit()
        return state.seal()

    @property
    def user_tools(self) -> list[ToolSpec]:
        return [t for t in self.tools.values() if t.kind == "user"]
