"""Values a tool result holds, from JSON or from plain text, with where each one sits.

A third-party server may answer with JSON (most do, as text content) or with prose ("Created issue
#12 (id 3f2a...) in project web"). Both become :class:`Found` values: the scalar, the key it was
under (``account_id``, or a token class such as ``uuid`` for text), the object it belongs to and
its position there. The object and position matter to the graph: a row's *own* id is the first
reference-like key of its object (``transaction_id`` in a transaction row), later ones are foreign
keys (the ``account_id`` it belongs to), and a tool produces only own ids.

Text is read three ways: ``key: value`` / ``key = value`` lines (a blank line starts a new object);
in a result of several lines, *item lines* holding one token after an optional marker (``* main``,
``[FILE] notes.md``, a tab-indented ``notes.txt``: how git and file servers list branches and
entries) and lone absolute paths (``/workspace``); and tokens that look like identifiers anywhere
(``ACC-0003``, UUIDs, e-mail addresses, absolute paths, ``#123``, commit hashes). Lines that report
an error (``ENOENT``, "not found") give nothing: a batch read that failed for one file names what it
was asked, which it does not produce. A result with no values at all is *empty*: what an unknown name gives a lenient
server that answers "no match" instead of an error, which probing reads as a rejection.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

LABEL_KEYS = ("name", "display_name", "full_name", "title", "subject", "label", "username", "nickname",
              "handle", "summary", "email")

TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("uuid", re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)),
    ("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")),
    ("code", re.compile(r"\b[A-Z][A-Z0-9]{1,9}-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")),
    ("path", re.compile(r"(?<![\w/])(?:~|/)[\w.-]+(?:/[\w.-]+)+/?")),
    ("number_ref", re.compile(r"(?<![\w#])#\d+\b")),
    ("hex", re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")),
)
KEY_VALUE = re.compile(r"^\s*[-*]?\s*([A-Za-z][\w .-]{0,40}?)\s*[:=]\s*(.+?)\s*$")
LONE_PATH = re.compile(r"^\s*(/[\w.-]+/?)\s*$")
ITEM = re.compile(r"^\s*(?:[-*+]\s+|\[([A-Za-z]{1,12})\]\s*)?([\w@~][\w./@~+-]{0,119})\s*(?:\s\d[\d.,]*\s*[A-Za-z]{0,3})?\s*$")
ERROR_LINE = re.compile(r"\b(?:error|ENOENT|EACCES|EISDIR|ENOTDIR)\b|no such file|not found|access denied|"
                        r"permission denied", re.IGNORECASE)


@dataclass(frozen=True)
class Found:
    """One scalar of a result."""

    path: str  # where: ``[].account_id``, ``order.lines[].line_id``; text: ``text:<key>``
    key: str
    value: str | int
    obj: int  # index into Extraction.objects
    position: int  # the key's position among its object's keys


@dataclass
class Obj:
    path: str
    keys: list[str] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str | None:
        for k in LABEL_KEYS:
            v = self.fields.get(k)
            if isinstance(v, str) and v and len(v) <= 80:
                return v
        return None


@dataclass
class Extraction:
    is_json: bool
    values: list[Found] = field(default_factory=list)
    objects: list[Obj] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.values

    def by_path(self) -> dict[str, list[Found]]:
        out: dict[str, list[Found]] = {}
        for f in self.values:
            out.setdefault(f.path, []).append(f)
        return out


def _scalar(v: Any) -> bool:
    return isinstance(v, str | int) and not isinstance(v, bool)


def _walk(node: Any, path: str, ex: Extraction, key_hint: str) -> None:
    if isinstance(node, list):
        for item in node[:200]:
            _walk(item, path + "[]", ex, key_hint)
        return
    if isinstance(node, dict):
        obj = Obj(path)
        ex.objects.append(obj)
        idx = len(ex.objects) - 1
        for k, v in node.items():
            key = str(k)
            if _scalar(v) and v != "":
                obj.keys.append(key)
                obj.fields[key] = v
                ex.values.append(Found(f"{path}.{key}" if path else key, key, v, idx, len(obj.keys) - 1))
            elif isinstance(v, list) and v and all(_scalar(x) for x in v):
                obj.keys.append(key)
                for x in v[:50]:
                    ex.values.append(Found(f"{path}.{key}[]" if path else f"{key}[]", key, x, idx, len(obj.keys) - 1))
        for k, v in node.items():
            if isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, dict | list) for x in v)):
                _walk(v, f"{path}.{k}" if path else str(k), ex, str(k))
        return
    if _scalar(node) and node != "":  # a bare scalar result (or a list of them)
        ex.objects.append(Obj(path, [key_hint], {key_hint: node}))
        ex.values.append(Found(path or "value", key_hint, node, len(ex.objects) - 1, 0))


def extract_text(text: str) -> Extraction:
    ex = Extraction(is_json=False)
    obj = Obj("text")
    ex.objects.append(obj)
    lines = text.splitlines()
    listing = sum(1 for x in lines if x.strip()) >= 2
    for line in lines:
        if not line.strip():
            if obj.keys:
                obj = Obj("text")
                ex.objects.append(obj)
            continue
        if ERROR_LINE.search(line):  # a per-item failure inside a result names what was asked, not a product
            continue
        item = ITEM.match(line) if listing else None
        if item and not re.fullmatch(r"[\d.,]+", item.group(2)):
            key = (item.group(1) or "item").lower()
            ex.values.append(Found(f"text:{key}[]", key, item.group(2), len(ex.objects) - 1, len(obj.keys)))
            continue
        lone = LONE_PATH.match(line)
        if lone:
            ex.values.append(Found("text:path", "path", lone.group(1), len(ex.objects) - 1, len(obj.keys)))
            continue
        m = KEY_VALUE.match(line)
        if m and len(m.group(2)) <= 200:
            key = re.sub(r"[\s.-]+", "_", m.group(1).strip().lower())
            value = m.group(2).strip().strip("\"'`")
            if key not in obj.fields:
                obj.keys.append(key)
                obj.fields[key] = value
                ex.values.append(Found(f"text:{key}", key, value, len(ex.objects) - 1, len(obj.keys) - 1))
        for cls, pattern in TOKENS:
            for tok in pattern.findall(line):
                if any(f.value == tok for f in ex.values[-8:]):
                    continue
                ex.values.append(Found(f"text:{cls}", cls, tok, len(ex.objects) - 1, len(obj.keys)))
    return ex


def extract(text: str) -> Extraction:
    """Every value of a result: JSON when the text parses as JSON, else text rules."""
    stripped = text.strip()
    if stripped[:1] in "[{\"" or stripped in ("null", "true", "false"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        else:
            ex = Extraction(is_json=True)
            if isinstance(data, str):  # a JSON string wrapping text
                return extract_text(data)
            _walk(data, "", ex, "value")
            return ex
    return extract_text(text)


RELATIVE = re.compile(r"[\w@~+-][\w.@~+-]*(?:/[\w.@~+-]+)*/?")


def under(ex: Extraction, base: str) -> Extraction:
    """Entries a listing names relative to the directory it was given (``[FILE] notes.md`` from
    ``list_directory(path="/workspace/docs")``) also as full paths (``/workspace/docs/notes.md``):
    a server that prints names wants them back joined to where they were listed. Added under their
    own path (``text:file+``), so probing tests them as one more output of the tool."""
    if not base.startswith("/"):
        return ex
    extra = [Found(f"{f.path}+", "path", f"{base.rstrip('/')}/{f.value}", f.obj, f.position)
             for f in ex.values if isinstance(f.value, str) and RELATIVE.fullmatch(f.value)
             and not re.fullmatch(r"[\d.,:-]+", f.value) and f.key not in ("path", "hex", "uuid", "email")
             and ((f.path.startswith("text:") and f.path.endswith("[]")) or f.key == "name")]
    return Extraction(ex.is_json, ex.values + extra, ex.objects) if extra else ex
