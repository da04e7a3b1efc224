"""The server kit: declare a domain once (state, seeded generator, typed tools), serve it anywhere."""

from servers.kit.domain import Domain
from servers.kit.fake import REFERENCE_DATE, Seeds, iso
from servers.kit.runtime import DEFAULT_SESSION, SESSION_META_KEY, DomainRuntime, ToolOutcome
from servers.kit.state import Cell, Counters, State, Table, diff_snapshots, new_id, snapshot_json, to_jsonable
from servers.kit.tools import Sensitive, ToolError, parse_date, parse_datetime, require, value_counts

__all__ = [
    "DEFAULT_SESSION",
    "REFERENCE_DATE",
    "SESSION_META_KEY",
    "Cell",
    "Counters",
    "Domain",
    "DomainRuntime",
    "Seeds",
    "Sensitive",
    "State",
    "Table",
    "ToolError",
    "ToolOutcome",
    "diff_snapshots",
    "iso",
    "new_id",
    "parse_date",
    "parse_datetime",
    "require",
    "snapshot_json",
    "to_jsonable",
    "value_counts",
]
