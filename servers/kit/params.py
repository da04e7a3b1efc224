"""Typed parameter kinds every domain uses, so input rules live in one place.

The kit enforces these for every tool (see ``servers.kit.hardening``): a domain only picks the right
kind. Plain ``str`` parameters are single-line and at most :data:`DEFAULT_MAX_CHARS` characters;
free text (bodies, descriptions, notes) must be declared :data:`Text`; money must be :data:`Money`
(at least one cent, at most two decimals, finite); structured strings carry a pattern.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MONEY_KEY = "x-money"
MULTILINE_KEY = "x-multiline"

DEFAULT_MAX_CHARS = 200
"""The bound the kit publishes on a ``str`` parameter that declares none (names, ids, queries)."""
DEFAULT_MAX_ITEMS = 100
"""The bound the kit publishes on an array parameter that declares none."""
TEXT_MAX_CHARS = 10_000
MAX_MONEY = 10_000_000.0

Money = Annotated[float, Field(ge=0.01, le=MAX_MONEY, json_schema_extra={MONEY_KEY: True})]
"""An amount of money: finite, at least 0.01, at most two decimals (the kit refuses ``0.001``)."""

Text = Annotated[str, Field(max_length=TEXT_MAX_CHARS, json_schema_extra={MULTILINE_KEY: True})]
"""Free text that may span lines (an email body, a description, a note)."""

Name = Annotated[str, Field(min_length=1, max_length=120)]
"""A human-readable name or title (single line)."""

EmailAddress = Annotated[str, Field(max_length=254, pattern=r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$")]
Phone = Annotated[str, Field(min_length=7, max_length=20, pattern=r"^\+?\(?[0-9][0-9 ().-]{5,18}[0-9]$")]
IsoDate = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
IsoDateTime = Annotated[str, Field(max_length=32, pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})?$")]
Url = Annotated[str, Field(max_length=500, pattern=r"^https?://[^\s]+$")]
