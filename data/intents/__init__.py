"""Per-domain intent banks: how people ask for each tool, and for common multi-tool goals.

One module per domain (``data/intents/<domain>.py``) defines:

* ``BANK: dict[str, dict[str, list[str]]]`` — tool name → ``{"ask": [...], "vague": [...]}``.
  ``ask`` phrasings are imperative clauses in a user's voice that state intent and outcome
  ("pay the {payee_name} invoice from checking"), with ``{slot}`` named after the tool's parameters;
  ``vague`` ones are what a user says before giving details. None copies the tool's description.
* ``GOALS: list[dict[str, list[str]]]`` — ``{"tools": [...], "ask": [...]}``: one goal that takes
  several calls, phrased as a single request.
* ``SELF: tuple[str, ...]`` (optional) — parameters that identify the person using the assistant
  (banking ``customer_id``, email ``mailbox``). The system prompt states their value, as a deployed
  assistant knows who is signed in, so user turns never spell them out ("my accounts").
* ``SPOKEN: tuple[str, ...]`` (optional) — entity types whose ids people really say (order numbers,
  ticket keys, invoice numbers). Every other id-shaped value (``ACC-0001``) is internal: the user
  names the entity ("my savings account") and the gold trajectory looks it up.

:func:`load` merges every module, so a new domain adds a file and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Profile:
    """How people refer to one domain's entities (see the module docstring)."""

    self_params: tuple[str, ...] = ()
    spoken: tuple[str, ...] = ()


@cache
def load() -> tuple[dict[str, dict[str, list[str]]], dict[str, list[dict[str, list[str]]]]]:
    """(merged tool bank, goals per domain) over every module of this package."""
    bank: dict[str, dict[str, list[str]]] = {}
    goals: dict[str, list[dict[str, list[str]]]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module: Any = importlib.import_module(f"{__name__}.{info.name}")
        for tool, entry in getattr(module, "BANK", {}).items():
            if tool in bank:
                raise ValueError(f"tool {tool!r} has phrasings in two intent modules")
            bank[tool] = entry
        goals[info.name] = list(getattr(module, "GOALS", []))
    return bank, goals


@cache
def profile(domain: str) -> Profile:
    """The domain's :class:`Profile` (empty for a domain without an intent module)."""
    try:
        module: Any = importlib.import_module(f"{__name__}.{domain}")
    except ModuleNotFoundError:
        return Profile()
    return Profile(tuple(getattr(module, "SELF", ())), tuple(getattr(module, "SPOKEN", ())))
