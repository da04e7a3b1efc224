"""Session state with structural sharing and per-call rollback.

Why this shape: an RL run opens thousands of sessions on the same seeded world, so opening one must
not deep-copy the world. A domain's state is a set of :class:`Table` s (id -> record). Every session
shares the seed world's base dicts, which are never mutated; a session's writes live in a small
overlay. Opening a session is O(number of tables), reset is clearing the overlays.

Records are ordinary (mutable) dataclasses, but a session may only mutate a record it obtained via
:meth:`Table.edit` (which copies it into the overlay first). Every tool call runs inside a
transaction: the first edit of a key in a call journals the previous overlay entry, so a tool that
raises half-way is rolled back exactly — an illegal call never mutates state.

Scalar state (engine on/off, current directory) lives in a :class:`Cell`, a one-record table.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterator
from typing import Any, ClassVar, TypeVar, get_origin, get_type_hints

R = TypeVar("R")
_MISSING: Any = object()  # journal marker: the key had no overlay entry before this call
_DELETED: Any = object()  # overlay marker: the key was deleted in this session


class StateError(RuntimeError):
    """Misuse of the state API by domain code (a bug, never a user-facing tool error)."""


class Table[R]:
    """A copy-on-write mapping from string ids to records, shared with the seed world."""

    __slots__ = ("_base", "_base_json", "_journal", "_over", "_touched", "name")

    def __init__(self, name: str, base: dict[str, R] | None = None,
                 base_json: dict[str, Any] | None = None) -> None:
        self.name = name
        self._base: dict[str, R] = base if base is not None else {}
        # JSON form of base records, filled lazily and shared by every session of the world: the base
        # never changes, so snapshots only serialise what a session wrote.
        self._base_json: dict[str, Any] = base_json if base_json is not None else {}
        self._over: dict[str, Any] = {}
        self._journal: list[tuple[str, Any]] | None = None
        self._touched: set[str] = set()  # keys already copied into the overlay in this call

    # -- reads -------------------------------------------------------------------------------
    def get(self, key: str) -> R | None:
        """The record for ``key`` (treat as read-only: use :meth:`edit` to change it)."""
        rec = self._over.get(key, _MISSING)
        if rec is _MISSING:
            return self._base.get(key)
        return None if rec is _DELETED else rec

    def __getitem__(self, key: str) -> R:
        rec = self.get(key)
        if rec is None:
            raise KeyError(key)
        return rec

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def keys(self) -> Iterator[str]:
        """Ids in a deterministic order: seed-world order first, then ids created in the session."""
        over = self._over
        for key in self._base:
            if over.get(key, _MISSING) is not _DELETED:
                yield key
        for key, rec in over.items():
            if key not in self._base and rec is not _DELETED:
                yield key

    __iter__ = keys

    def values(self) -> Iterator[R]:
        for key in self.keys():
            yield self[key]

    def items(self) -> Iterator[tuple[str, R]]:
        for key in self.keys():
            yield key, self[key]

    def __len__(self) -> int:
        return sum(1 for _ in self.keys())

    # -- writes ------------------------------------------------------------------------------
    def _record_undo(self, key: str) -> None:
        journal = self._journal
        if journal is None:
            raise StateError(f"write to table {self.name!r} outside a transaction")
        if key not in self._touched:
            journal.append((key, self._over.get(key, _MISSING)))

    def edit(self, key: str) -> R:
        """A session-owned copy of the record that the caller may mutate in place.

        The first edit of a key within a call copies it (so the call can be rolled back); later
        edits in the same call return that same copy.
        """
        rec = self.get(key)
        if rec is None:
            raise KeyError(key)
        if key in self._touched:
            return rec
        self._record_undo(key)
        self._touched.add(key)
        owned = copy.deepcopy(rec)
        self._over[key] = owned
        return owned

    def put(self, key: str, rec: R) -> R:
        """Insert or replace a record (the table takes ownership of ``rec``)."""
        self._record_undo(key)
        self._touched.add(key)
        self._over[key] = rec
        return rec

    def delete(self, key: str) -> None:
        if self.get(key) is None:
            raise KeyError(key)
        self._record_undo(key)
        self._touched.add(key)
        self._over[key] = _DELETED

    # -- session plumbing (used by State) ----------------------------------------------------
    def _fork(self) -> Table[R]:
        return Table(self.name, self._base, self._base_json)

    def snapshot(self) -> dict[str, Any]:
        """JSON-ready ``{id: record}`` (read-only: base entries are shared between sessions)."""
        over, cache, out = self._over, self._base_json, {}
        for key in self.keys():
            rec = over.get(key, _MISSING)
            if rec is _MISSING:
                value = cache.get(key, _MISSING)
                if value is _MISSING:
                    value = cache[key] = to_jsonable(self._base[key])
                out[key] = value
            else:
                out[key] = to_jsonable(rec)
        return out

    def _rollback(self, journal: list[tuple[str, Any]]) -> None:
        for key, prev in reversed(journal):
            if prev is _MISSING:
                self._over.pop(key, None)
            else:
                self._over[key] = prev

    def _freeze_into_base(self) -> None:
        """Fold the overlay into a fresh base dict (used once, when building a seed world)."""
        merged = {k: self[k] for k in self.keys()}
        self._base, self._over, self._base_json = merged, {}, {}

    @property
    def dirty(self) -> bool:
        """Whether this session changed the table."""
        return bool(self._over)


class Cell[R]:
    """A single record (scalar state) with the same copy-on-write and rollback rules as a Table."""

    __slots__ = ("_table",)
    KEY: ClassVar[str] = "value"

    def __init__(self, name: str, value: R | None = None) -> None:
        self._table: Table[R] = Table(name, {self.KEY: value} if value is not None else {})

    def get(self) -> R:
        return self._table[self.KEY]

    def edit(self) -> R:
        return self._table.edit(self.KEY)

    def set(self, value: R) -> R:
        return self._table.put(self.KEY, value)


def _is_store(tp: Any) -> type | None:
    origin = get_origin(tp) or tp
    return origin if origin in (Table, Cell) else None


@dataclasses.dataclass
class SessionClock:
    """The session's "now" as ISO text (see :mod:`servers.kit.clock`)."""

    now: str


CLOCK_FIELD = "session_clock"


class State:
    """Base class of a domain's state: declare ``Table[Record]`` and ``Cell[Record]`` annotations.

    Every state also has the kit's ``session_clock`` cell (see :mod:`servers.kit.clock`); it is left
    out of snapshots, which describe the world, not the time it was looked at.

    Example::

        class BankingState(State):
            accounts: Table[Account]
            clock: Cell[Clock]
    """

    _store_fields: ClassVar[dict[str, type]]
    session_clock: Cell[SessionClock]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, type] = {}
        for name, tp in get_type_hints(cls).items():
            kind = _is_store(tp)
            if kind is not None:
                fields[name] = kind
            elif not name.startswith("_"):
                raise StateError(
                    f"{cls.__name__}.{name}: state fields must be Table[...] or Cell[...] so sessions "
                    "can share and roll them back"
                )
        cls._store_fields = fields

    def __init__(self) -> None:
        for name, kind in self._store_fields.items():
            setattr(self, name, kind(name))
        self._journal: list[tuple[Table[Any], list[tuple[str, Any]]]] | None = None

    # -- iteration over stores ---------------------------------------------------------------
    def _tables(self) -> Iterator[Table[Any]]:
        for name, kind in self._store_fields.items():
            store = getattr(self, name)
            yield store if kind is Table else store._table

    # -- session lifecycle -------------------------------------------------------------------
    def seal(self) -> State:
        """Turn a freshly generated world into an immutable seed world (call once after generate)."""
        for table in self._tables():
            table._freeze_into_base()
        return self

    def fork(self) -> State:
        """A new session on this seed world: O(#tables), shares every record until written."""
        clone = object.__new__(type(self))
        for name, kind in self._store_fields.items():
            store = getattr(self, name)
            if kind is Table:
                setattr(clone, name, store._fork())
            else:
                cell = object.__new__(Cell)
                cell._table = store._table._fork()
                setattr(clone, name, cell)
        clone._journal = None
        return clone

    def reset(self) -> None:
        """Drop every write of this session (back to the seed world)."""
        for table in self._tables():
            table._over = {}

    @property
    def dirty(self) -> bool:
        return any(t.dirty for t in self._tables())

    # -- transactions ------------------------------------------------------------------------
    def begin(self) -> None:
        if self._journal is not None:
            raise StateError("nested transaction")
        self._journal = []
        for table in self._tables():
            journal: list[tuple[str, Any]] = []
            table._journal = journal
            self._journal.append((table, journal))

    def commit(self) -> None:
        for table, _ in self._journal or ():
            table._journal = None
            table._touched.clear()
        self._journal = None

    def rollback(self) -> None:
        for table, journal in self._journal or ():
            table._rollback(journal)
            table._journal = None
            table._touched.clear()
        self._journal = None

    # -- snapshots ---------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready, deterministic view of the whole state (used for final-state checks)."""
        out: dict[str, Any] = {}
        for name, kind in self._store_fields.items():
            if name == CLOCK_FIELD:
                continue
            store = getattr(self, name)
            if kind is Table:
                out[name] = store.snapshot()
            else:
                out[name] = store._table.snapshot().get(Cell.KEY)
        return out


def to_jsonable(value: Any) -> Any:
    """Records (dataclasses), tuples, sets and nested containers → plain JSON types."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(to_jsonable(v) for v in value)
    return value


def snapshot_json(snapshot: dict[str, Any]) -> str:
    """Canonical text of a snapshot: equal states give byte-identical strings."""
    return json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def diff_snapshots(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per-table added / removed / changed ids between two snapshots (cells compare as a whole)."""
    out: dict[str, Any] = {}
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict) and _looks_like_table(a) and _looks_like_table(b):
            added = sorted(set(b) - set(a))
            removed = sorted(set(a) - set(b))
            changed = {k: {"before": a[k], "after": b[k]} for k in sorted(set(a) & set(b)) if a[k] != b[k]}
            out[name] = {"added": {k: b[k] for k in added}, "removed": removed, "changed": changed}
        else:
            out[name] = {"before": a, "after": b}
    return out


def _looks_like_table(d: dict[str, Any]) -> bool:
    return all(isinstance(v, dict) for v in d.values())


@dataclasses.dataclass
class Counters:
    """Per-prefix counters so ids created in a session are deterministic (``TRF-0042``)."""

    next: dict[str, int] = dataclasses.field(default_factory=dict)


def new_id(counters: Cell[Counters], prefix: str, width: int = 4) -> str:
    """Allocate the next id for ``prefix`` in this session (rolled back with the call on error)."""
    record = counters.edit()
    n = record.next.get(prefix, 1)
    record.next[prefix] = n + 1
    return f"{prefix}-{n:0{width}d}"
