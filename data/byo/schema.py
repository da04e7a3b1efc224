"""Static inference from one listing: what each parameter is, and which entity types a tool touches.

Without kit metadata the only static evidence is the schema and the names. Each parameter gets a
*kind* — ``reference`` (may name an existing entity: ``account_id``, ``path``, ``symbol``), or one of
the kinds that never do (``enum``, ``number``, ``bool``, ``date``, ``secret``, ``text``, ``query``,
``object``) — and, for references, an *entity* noun from its name (``from_account_id`` ->
``account``, ``invitee_emails`` -> ``invitee_email``, a bare ``id`` -> the tool's noun). A tool's
noun comes from its name after the verb (``list_accounts`` -> ``account``); list/search/create verbs
suggest the tool *produces* that noun.

These guesses are only candidates: a string parameter called ``account`` or ``nickname`` may or may
not reference anything, and the names of the producer and the consumer often differ
(``scheduled_transfer`` vs ``schedule_transfer``'s output). Probing (:mod:`data.byo.probe`) decides;
the static side orders the work, fills arguments, and gives the fallback graph when nothing can be
called. Example values are read from descriptions ("e.g. ACC-0003"): a root entity (a customer) that
no tool lists can only be reached through them. Values to fill the non-reference arguments of a call
come from the schema (enum, bounds, formats, simple patterns) by :func:`fill_value`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from data.byo.discovery import Discovery, name_words

ParamKind = Literal["reference", "enum", "number", "bool", "date", "secret", "text", "query", "object"]

ID_SUFFIXES = frozenset({"id", "ids", "key", "keys", "uuid", "uuids", "slug", "ref", "handle", "code", "codes"})
ROLE_WORDS = frozenset({"from", "to", "source", "src", "destination", "dest", "target", "new", "old", "parent",
                        "current", "primary", "other", "funding", "reply", "input", "output", "a", "b", "my",
                        "the", "original", "existing", "selected"})
TEXT_WORDS = frozenset({"body", "content", "contents", "description", "note", "notes", "memo", "comment",
                        "message", "text", "reason", "instructions", "bio", "summary", "caption", "title",
                        "subject", "observation", "observations", "prompt", "answer", "details", "feedback"})
QUERY_WORDS = frozenset({"query", "q", "search", "keyword", "keywords", "term", "terms", "filter", "pattern",
                         "prefix", "contains", "regex", "glob"})
SECRET_WORDS = frozenset({"pin", "password", "passcode", "secret", "token", "otp", "cvv", "api", "apikey"})
DATE_WORDS = frozenset({"date", "time", "since", "until", "start", "end", "at", "on", "day", "month", "year",
                        "before", "after", "deadline", "due", "timestamp", "from", "to", "datetime"})
DATE_FORMATS = frozenset({"date", "date-time", "time", "duration"})
PATH_WORDS = frozenset({"path", "paths", "dir", "dirs", "directory", "directories", "folder", "folders", "root",
                        "repo", "repository", "file", "files", "filename", "filepath"})
PRODUCING_VERBS = frozenset({"list", "search", "find", "browse", "create", "add", "new", "open", "book", "make",
                             "schedule", "place", "post", "send", "start", "upload", "register", "submit", "draft",
                             "reserve", "generate", "issue", "import", "write", "copy", "duplicate", "save"})


def singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def entity_of(name: str, fallback: str = "") -> str:
    """The entity noun a parameter or output key names (``from_account_id`` -> ``account``)."""
    ws = name_words(name)
    while ws and ws[-1] in ID_SUFFIXES and len(ws) > 0:
        ws = ws[:-1]
    while len(ws) > 1 and ws[0] in ROLE_WORDS:
        ws = ws[1:]
    if not ws or (len(ws) == 1 and ws[0] in ROLE_WORDS):
        return fallback
    ws[-1] = singular(ws[-1])
    return "_".join(ws)


def path_like(p: ParamInfo) -> bool:
    """A reference naming a place in a file tree (``path``, ``repo_path``, ``files``): it may take
    the server's root, and what a listing of it names, joined to it, is a path too."""
    return p.kind == "reference" and bool(PATH_WORDS & set(name_words(p.name)))


def compatible(a: str, b: str) -> bool:
    """Entity nouns match exactly or as sub-kinds by suffix (``file_path`` is a ``path``)."""
    return bool(a and b) and (a == b or a.endswith("_" + b) or b.endswith("_" + a))


EXAMPLE = re.compile(r"(?:e\.g\.,?|for example,?|such as|like)\s+((?:[\"'`][^\"'`]{1,60}[\"'`])|[^\s,;()]{2,60})",
                     re.IGNORECASE)


QUOTED = re.compile(r"(?<![\w'\"`])['\"`]([\w.@/-]{1,40})['\"`](?![\w'\"`])")


def example_values(text: str) -> list[str]:
    """Example values a description gives ("e.g. ACC-0003", "e.g. 'report.md'"), then single
    quoted tokens ("local branches ('local')"): the values a free-form string accepts, when the
    schema has no enum."""
    out = []
    for m in EXAMPLE.finditer(text or ""):
        v = m.group(1).strip()
        if v[:1] in "\"'`":
            v = v[1:-1]
        v = v.rstrip(".:")
        if v and v not in out:
            out.append(v)
    out += [v for v in QUOTED.findall(text or "") if v not in out]
    return out


@dataclass(frozen=True)
class ParamInfo:
    name: str
    kind: ParamKind
    entity: str
    json_type: str
    is_array: bool
    required: bool
    examples: tuple[str, ...]
    schema: dict[str, Any]
    parent: str = ""  # a field of an object parameter (``observations[].entityName``): the parameter
    field: str = ""

    @property
    def item_schema(self) -> dict[str, Any]:
        return self.schema.get("items", {}) if self.is_array else self.schema


@dataclass(frozen=True)
class ToolShape:
    name: str
    read_only: bool
    verb: str
    noun: str
    params: tuple[ParamInfo, ...]
    produces_guess: tuple[str, ...]
    nested: tuple[ParamInfo, ...] = ()  # reference fields inside object parameters

    def param(self, name: str) -> ParamInfo:
        return next(p for p in (*self.params, *self.nested) if p.name == name)

    @property
    def references(self) -> list[ParamInfo]:
        return [p for p in (*self.params, *self.nested) if p.kind == "reference"]


def json_type(schema: dict[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    if t is None and "anyOf" in schema:
        t = next((o.get("type") for o in schema["anyOf"] if o.get("type") not in (None, "null")), None)
    return str(t or "string")


def param_kind(pname: str, schema: dict[str, Any]) -> ParamKind:
    t = json_type(schema)
    item = schema.get("items", {}) if t == "array" else schema
    it = json_type(item) if t == "array" else t
    ws = set(name_words(pname))
    last = name_words(pname)[-1] if pname else ""
    if "enum" in item or "const" in item:
        return "enum"
    if it == "boolean":
        return "bool"
    if it == "object":
        return "object"
    if it in ("number", "integer"):
        return "reference" if last in ID_SUFFIXES else "number"
    if item.get("format") in DATE_FORMATS or (last in DATE_WORDS and last not in ID_SUFFIXES):
        return "date"
    if schema.get("writeOnly") or ws & SECRET_WORDS:
        return "secret"
    if last in ID_SUFFIXES or item.get("format") in ("uuid", "uri", "email", "idn-email"):
        return "reference"
    if ws & QUERY_WORDS:
        return "query"
    if ws & TEXT_WORDS or (item.get("maxLength") or 0) > 1000:
        return "text"
    return "reference"


def tool_noun(name: str, verb_words: frozenset[str]) -> tuple[str, str]:
    """(verb, noun) of a tool name: ``list_accounts`` -> ``("list", "account")``."""
    ws = name_words(name)
    if not ws:
        return "", ""
    verb = ws[0]
    rest = ws[1:] if len(ws) > 1 else ws
    rest = [w for w in rest if w not in ("by", "all", "for", "of", "my", "to", "from", "in", "on")] or rest
    rest[-1] = singular(rest[-1])
    return verb, "_".join(rest)


def infer_shapes(discovery: Discovery) -> dict[str, ToolShape]:
    verbs = frozenset().union(*(v.verb for v in discovery.verdicts.values()))
    out: dict[str, ToolShape] = {}
    for tool in discovery.tools:
        verb, noun = tool_noun(tool.name, verbs)
        params = []
        for pname, schema in tool.properties.items():
            kind = param_kind(pname, schema)
            jt = json_type(schema)
            is_array = jt == "array"
            item_t = json_type(schema.get("items", {})) if is_array else jt
            ex = tuple(example_values(str(schema.get("description", ""))))
            ex += tuple(str(e) for e in schema.get("examples", []) if isinstance(e, str | int))
            params.append(ParamInfo(pname, kind, entity_of(pname, noun) if kind == "reference" else "",
                                    item_t, is_array, pname in tool.required, ex, schema))
        guess = (noun,) if verb in PRODUCING_VERBS and noun else ()
        nested = tuple(f for p in params if p.kind == "object" for f in object_fields(p, noun))
        out[tool.name] = ToolShape(tool.name, discovery.read_only(tool.name), verb, noun, tuple(params), guess,
                                   nested)
    return out


def object_fields(p: ParamInfo, noun: str) -> list[ParamInfo]:
    """The reference fields of an object parameter (or of the items of an array of objects), as
    parameters of their own named ``parent[].field``: a knowledge-graph server takes the entity it
    adds observations to as ``observations: [{entityName, contents}]``, never as a plain argument."""
    props = p.item_schema.get("properties")
    if not isinstance(props, dict):
        return []
    out = []
    for fname, sub in props.items():
        if not isinstance(sub, dict) or param_kind(fname, sub) != "reference":
            continue
        jt = json_type(sub)
        item_t = json_type(sub.get("items", {})) if jt == "array" else jt
        ex = tuple(example_values(str(sub.get("description", ""))))
        out.append(ParamInfo(f"{p.name}{'[]' if p.is_array else ''}.{fname}", "reference", entity_of(fname, noun),
                             item_t, jt == "array", True, ex, sub, p.name, fname))
    return out


# -- argument values for parameters that are not references ------------------------------------------

_PATTERN_SAMPLES = {r"\d": "1", r"[0-9]": "1", r"[A-Z]": "A", r"[a-z]": "a", r"[A-Za-z]": "a", r"\w": "a",
                    r"[A-Za-z0-9]": "a", r".": "a"}


def _from_pattern(pattern: str) -> str | None:
    """A string matching simple anchored patterns (``^\\d{4}$``, ``^[A-Z]{3}$``); None if too complex."""
    body = pattern.removeprefix("^").removesuffix("$")
    out = ""
    for m in re.finditer(r"(\\d|\\w|\[[^\]]+\]|\.|[A-Za-z0-9 _:/-])(\{(\d+)(?:,(\d*))?\}|\+|\*|\?)?", body):
        atom, quant, n = m.group(1), m.group(2), m.group(3)
        ch = _PATTERN_SAMPLES.get(atom, atom if len(atom) == 1 else "a")
        count = int(n) if n else (0 if quant in ("*", "?") else 1)
        out += ch * count
    return out if re.fullmatch(pattern.removeprefix("^").removesuffix("$"), out) else None


def fill_value(p: ParamInfo, date_hint: str = "2026-06-15") -> Any:
    """A plausible value for a non-reference parameter, from its schema alone."""
    s = p.item_schema
    if p.examples and p.kind in ("date", "text", "query", "reference"):
        v: Any = p.examples[0]
    elif "enum" in s:
        v = s["enum"][0]
    elif "const" in s:
        v = s["const"]
    elif "default" in s and s["default"] is not None:
        v = s["default"]
    elif p.json_type == "boolean":
        v = True
    elif p.json_type in ("integer", "number"):
        lo = s.get("minimum", s.get("exclusiveMinimum", 0))
        hi = s.get("maximum", lo + 100)
        v = min(max(lo + 1, 1), hi)
        v = int(v) if p.json_type == "integer" else float(v)
    elif p.json_type == "object":
        v = fill_object(s, date_hint)
    elif s.get("format") == "date-time" or (p.kind == "date" and "time" in p.name):
        v = date_hint + "T10:00:00"
    elif s.get("format") == "date" or p.kind == "date":
        v = date_hint
    elif s.get("format") in ("email", "idn-email") or "email" in p.name:
        v = "probe.user@example.com"
    elif s.get("format") == "uri" or "url" in p.name:
        v = "https://example.com/probe"
    elif "pattern" in s and (sample := _from_pattern(s["pattern"])) is not None:
        v = sample
    else:  # a made-up name: no spaces in a reference (a git ref, a file name refuses them)
        v = ("probe-" if p.kind == "reference" else "probe ") + p.name.replace("_", "-" if p.kind == "reference" else " ")
        lo, hi = s.get("minLength", 0), s.get("maxLength", 200)
        v = v[:hi] if len(v) >= lo else v + "x" * (lo - len(v))
    if p.is_array and not isinstance(v, list):
        lo = p.schema.get("minItems", 1)
        return [v] * max(1, lo)
    return v


def fill_object(schema: dict[str, Any], date_hint: str = "2026-06-15") -> dict[str, Any]:
    props = schema.get("properties", {})
    req = schema.get("required", list(props))
    out = {}
    for name in req:
        sub = props.get(name, {})
        kind = param_kind(name, sub)
        jt = json_type(sub)
        is_array = jt == "array"
        item_t = json_type(sub.get("items", {})) if is_array else jt
        info = ParamInfo(name, kind, "", item_t, is_array, True, tuple(example_values(str(sub.get("description", "")))), sub)
        out[name] = fill_value(info, date_hint)
    return out
