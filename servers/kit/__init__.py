"""The server kit: declare a domain once (state, seeded generator, typed tools), serve it anywhere."""

from servers.kit.clock import CALL_STEP, now, today
from servers.kit.domain import Domain
from servers.kit.fake import REFERENCE_DATE, Seeds, iso
from servers.kit.params import EmailAddress, IsoDate, IsoDateTime, Money, Name, Phone, Text, Url
from servers.kit.runtime import DEFAULT_SESSION, SESSION_META_KEY, DomainRuntime, ToolOutcome
from servers.kit.state import Cell, Counters, State, Table, diff_snapshots, new_id, snapshot_json, to_jsonable
from servers.kit.tools import (
    Sensitive,
    ToolError,
    discovery,
    helper,
    parse_date,
    parse_datetime,
    require,
    tool,
    value_counts,
)

__all__ = [
    "CALL_STEP",
    "DEFAULT_SESSION",
    "REFERENCE_DATE",
    "SESSION_META_KEY",
    "Cell",
    "Counters",
    "Domain",
    "DomainRuntime",
    "EmailAddress",
    "IsoDate",
    "IsoDateTime",
    "Money",
    "Name",
    "Phone",
    "Seeds",
    "Sensitive",
    "State",
    "Table",
    "Text",
    "ToolError",
    "ToolOutcome",
    "Url",
    "diff_snapshots",
    "discovery",
    "helper",
    "iso",
    "new_id",
    "now",
    "parse_date",
    "parse_datetime",
    "require",
    "snapshot_json",
    "to_jsonable",
    "today",
    "tool",
    "value_counts",
]
