"""Argument values for a server without metadata: what results hold, what a schema asks for, how to fill it.

Synthesis binds every argument of a gold call to a *source* — the live state (values the fixture's
read-only tools return, :class:`~data.byo.sampling.LiveState` entities), an earlier step's real
output, the session root (``path_alias``), or a value the user makes up (a new name, a note). This
module holds the pieces:

* :class:`Value` — one scalar a result held, with its key, the call that produced it, its object
  (so sibling fields of one row stay together: an entity name with *its* observations), its label and
  its position among its path's values ("the first one it lists");
* :func:`values_of` — :func:`data.byo.extract.extract` plus what plain-text listings hold beyond
  ``key: value`` lines: one bare token per line (``[FILE] todo.md``, ``* main``, a tab-indented file
  name) as an ``item`` (or the bracket tag's noun), and each line as a ``line`` (old text to edit);
  values produced by a call given a path-like argument ``P`` also stand as ``P/value`` (a listing of
  ``/workspace/notes`` names ``/workspace/notes/todo.md``);
* :func:`leaves` — the schema walked down to scalar *leaves* (``entities[0].name``), each with a
  kind (``reference``, ``path``, ``text``, ``query``, ``enum``, ``number``, ``bool``, ``date``);
* :func:`candidates` — pool values ranked for one leaf: same key / compatible entity noun first,
  then values of a tool whose name names the leaf (``git_branch`` for ``branch_name``), then any.

Nothing here reads a tool's description: names and schemas only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from data.byo.discovery import name_words
from data.byo.extract import extract
from data.byo.schema import DATE_FORMATS, QUERY_WORDS, TEXT_WORDS, compatible, entity_of, json_type, singular

PATH_WORDS = frozenset({"path", "paths", "dir", "dirs", "directory", "directories", "folder", "root", "repo",
                        "file", "files", "source", "destination", "src", "dest", "filename"})
DATE_ONLY = frozenset({"date", "time", "timestamp", "datetime", "deadline", "due", "day", "month", "year"})
OLD_WORDS = frozenset({"old", "current", "existing", "original", "find", "search", "match"})
ITEM_LINE = re.compile(r"^\s*(?:[*+>-]\s+|\[(\w+)\]\s+)?([\w@][\w./@:+-]*)\s*(?:\s{2,}.*)?$")
Kind = str  # reference | path | text | query | enum | number | bool | date | object


@dataclass(frozen=True)
class Value:
    """One scalar of a result (or a root value), and where it came from."""

    value: str | int
    key: str
    origin: int  # -1: the fixture (live-state sampling) or the root; k >= 0: step k of the chain
    tool: str  # the producing tool ("" for the root)
    obj: str  # "<origin>:<tool>:<object index>": values of one result row
    label: str | None = None
    ordinal: int = 0  # position among the values at its path in that result
    count: int = 1  # how many values sit at that path


def _line_values(text: str) -> list[tuple[str, str]]:
    """(key, value) per line of a text listing: the bare token of an item line, and the line itself."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines()[:200]:
        stripped = line.strip()
        if not stripped or len(stripped) > 200:
            continue
        m = ITEM_LINE.match(line)
        if m and not stripped.endswith(":") and not m.group(2).endswith(":"):  # "modified:   a.md": a label
            out.append(((m.group(1) or "item").lower(), m.group(2)))
        if len(stripped) >= 3 and not stripped.startswith(("```", "@@", "---", "+++", "===")):
            out.append(("line", stripped))
    return out


def values_of(text: str, origin: int, tool: str, base: str | None = None) -> list[Value]:
    """Every value of one result; ``base`` is the path-like argument the call was given, if any."""
    ex = extract(text)
    out: list[Value] = []
    per_path: dict[str, int] = {}
    totals: dict[str, int] = {}
    for f in ex.values:
        totals[f.path] = totals.get(f.path, 0) + 1
    for f in ex.values:
        n = per_path.get(f.path, 0)
        per_path[f.path] = n + 1
        label = ex.objects[f.obj].label if f.obj < len(ex.objects) else None
        out.append(Value(f.value, f.key, origin, tool, f"{origin}:{tool}:{f.obj}", label, n, totals[f.path]))
    if not ex.is_json:
        lines = _line_values(text)
        counts: dict[str, int] = {}
        for key, _ in lines:
            counts[key] = counts.get(key, 0) + 1
        seen: dict[str, int] = {}
        for key, v in lines:
            n = seen.get(key, 0)
            seen[key] = n + 1
            out.append(Value(v, key, origin, tool, f"{origin}:{tool}:line{n}", None, n, counts[key]))
    if base:
        joined = [Value(f"{base.rstrip('/')}/{v.value}", v.key, v.origin, v.tool, v.obj, v.label, v.ordinal, v.count)
                  for v in out if isinstance(v.value, str) and v.key != "line" and "/" not in v.value
                  and not v.value.startswith(".") and " " not in v.value]
        out += joined
    return out


@dataclass(frozen=True)
class Leaf:
    """One scalar slot of a tool's arguments (``("entities", 0, "name")``)."""

    where: tuple[str | int, ...]
    name: str
    kind: Kind
    schema: dict[str, Any]
    json_type: str
    in_array: bool  # the slot is an item of an array of scalars (``files[0]``)
    required: bool

    @property
    def words(self) -> list[str]:
        return [singular(w) for w in name_words(self.name)]

    @property
    def entity(self) -> str:
        return entity_of(self.name)

    @property
    def noun(self) -> str:
        """How a person names the slot: its name's words, id suffixes dropped (``entityType`` -> "entity type")."""
        ws = [w for w in name_words(self.name) if w not in ("id", "ids")] or name_words(self.name)
        return " ".join(ws)


def _sub(schema: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of an ``anyOf`` (pydantic's ``str | None``), else the schema."""
    if "anyOf" in schema and "type" not in schema:
        return next((o for o in schema["anyOf"] if o.get("type") not in (None, "null")), schema)
    return schema


def leaf_kind(name: str, schema: dict[str, Any]) -> Kind:
    s = _sub(schema)
    t = json_type(s)
    ws = set(name_words(name))
    if "enum" in s or "const" in s:
        return "enum"
    if t == "boolean":
        return "bool"
    if t in ("number", "integer"):
        last = name_words(name)[-1] if name else ""
        return "reference" if last in ("id", "ids") else "number"
    if t == "object":
        return "object"
    if s.get("format") in DATE_FORMATS or ws & DATE_ONLY:
        return "date"
    if ws & PATH_WORDS:
        return "path"
    if ws & QUERY_WORDS:
        return "query"
    if ws & TEXT_WORDS or ws & {"contents", "observations", "message", "content", "text"}:
        return "text"
    return "reference"


def leaves(schema: dict[str, Any], *, optional: frozenset[str] = frozenset()) -> list[Leaf]:
    """The scalar slots of an argument object: required properties, plus ``optional`` top-level ones;
    an array of objects gets one item, an array of scalars one slot."""
    out: list[Leaf] = []

    def walk(s: dict[str, Any], where: tuple[str | int, ...], top: bool) -> None:
        props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
        req = s.get("required", list(props) if not top else [])
        for pname, ps in props.items():
            if pname not in req and not (top and pname in optional):
                continue
            ps = _sub(ps)
            t = json_type(ps)
            if t == "array":
                item = _sub(ps.get("items", {}))
                if json_type(item) == "object" and isinstance(item.get("properties"), dict):
                    walk(item, (*where, pname, 0), False)
                else:
                    out.append(Leaf((*where, pname, 0), pname, leaf_kind(pname, item), item, json_type(item), True,
                                    pname in req))
            elif t == "object" and isinstance(ps.get("properties"), dict):
                walk(ps, (*where, pname), False)
            else:
                out.append(Leaf((*where, pname), pname, leaf_kind(pname, ps), ps, t, False, pname in req))

    walk(schema, (), True)
    return out


def put(args: dict[str, Any], where: tuple[str | int, ...], value: Any) -> None:
    """Set ``args[where]``, creating the objects and one-item arrays on the way."""
    node: Any = args
    for i, step in enumerate(where[:-1]):
        nxt = where[i + 1]
        if isinstance(step, int):
            while len(node) <= step:
                node.append({} if not isinstance(nxt, int) else [])
            node = node[step]
        else:
            node = node.setdefault(step, [] if isinstance(nxt, int) else {})
    last = where[-1]
    if isinstance(last, int):
        while len(node) <= last:
            node.append(None)
        node[last] = value
    else:
        node[last] = value


def _key_matches(leaf: Leaf, key: str) -> bool:
    if key == leaf.name:
        return True
    ke, le = entity_of(key), leaf.entity
    return bool(ke and le) and compatible(ke, le)


def _names_it(leaf: Leaf, tool: str) -> bool:
    """The producing tool's name names the leaf (``git_branch`` lists what ``branch_name`` takes)."""
    lw = {w for w in leaf.words if w not in ("name", "id", "type", "new", "old")}
    return bool(lw & {singular(w) for w in name_words(tool)})


def candidates(leaf: Leaf, pool: list[Value]) -> list[tuple[int, Value]]:
    """Pool values that fit the leaf's type, scored (higher first): 3 key match, 2 named by the
    producer, 1 any item-like value; paths need a '/' or a file-like dot, lines only for text leaves
    that name existing text (``oldText``)."""
    out: list[tuple[int, Value]] = []
    wants_int = leaf.json_type == "integer"
    old_text = leaf.kind == "text" and bool(set(name_words(leaf.name)) & OLD_WORDS)
    for v in pool:
        if isinstance(v.value, int) != wants_int or isinstance(v.value, bool):
            continue
        if v.key == "line":
            if old_text:
                out.append((3, v))
            continue
        if leaf.kind == "text":
            continue
        if isinstance(v.value, str) and (len(v.value) > 80 or "\n" in v.value):
            continue
        if leaf.kind == "path":
            s = str(v.value)
            if not ("/" in s or re.search(r"\.\w{1,5}$", s)):
                continue
            score = 3 if v.key in ("path", "file", "dir", "item", "name", "directory") or _key_matches(leaf, v.key) else 1
        elif _key_matches(leaf, v.key):
            score = 3
        elif _names_it(leaf, v.tool) and v.key in ("item", "name", "value"):
            score = 2
        elif v.key in ("item", "name") or v.key.endswith(("_id", "Id", "id")) or (
                isinstance(v.value, str) and " " not in v.value and 2 < len(v.value) <= 64):
            score = 1  # any identifier-like token: execution decides
        else:
            continue
        out.append((score, v))
    return out
