"""Argument values for any tool, from its JSON schema, parameter names and descriptions alone.

The realiser first tries values that are *grounded* (ids from earlier tool outputs or the sampling
context, keys of a chosen row); everything else comes from here. Rules key on the schema (enum,
bounds, pattern, array items) and on words in the parameter name/description ("amount", "date",
"YYYY-MM-DD", "date-time", "email", "query"), so a new domain gets sensible values without code.
Values are "nice" (round amounts, whole hours, short texts) because a user must be able to say them
and a model must be able to copy them exactly. Nothing reads the clock: dates are relative to the
worlds' fixed reference date.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from faker import Faker

from data.catalog import words
from data.sampler import SamplingContext

MONEY = (15, 20, 25, 30, 40, 45, 50, 60, 75, 80, 100, 120, 150, 200, 250, 300, 400, 500)
FREE_TEXT = {"body", "content", "description", "note", "memo", "comment", "message", "text", "agenda"}
EMAILISH = {"email", "emails", "to", "cc", "bcc", "recipient", "recipients", "invitee", "invitees"}
END_WORDS = {"to": "from", "until": "since", "max": "min", "end": "start"}


@dataclass
class ValueContext:
    """Everything value synthesis may look at for one call."""

    rng: random.Random
    fake: Faker
    ref: datetime
    ctx: SamplingContext | None = None
    bound: dict[str, Any] = field(default_factory=dict)
    focus: set[str] = field(default_factory=set)
    produced_labels: list[str] = field(default_factory=list)


def _bounds(prop: dict[str, Any], lo: float, hi: float) -> tuple[float, float]:
    if "minimum" in prop:
        lo = max(lo, prop["minimum"]) if lo >= prop["minimum"] else prop["minimum"]
    if "exclusiveMinimum" in prop:
        lo = max(lo, prop["exclusiveMinimum"] + 1)
    if "maximum" in prop:
        hi = min(hi, prop["maximum"])
    if "exclusiveMaximum" in prop:
        hi = min(hi, prop["exclusiveMaximum"] - 1)
    if hi < lo:
        lo, hi = prop.get("minimum", hi), prop.get("maximum", lo)
    return lo, hi


def _pick_in(vc: ValueContext, choices: list[int] | tuple[int, ...], prop: dict[str, Any]) -> int:
    lo, hi = _bounds(prop, min(choices), max(choices))
    ok = [c for c in choices if lo <= c <= hi]
    return vc.rng.choice(ok) if ok else int(lo)


def synth_integer(name: str, prop: dict[str, Any], vc: ValueContext) -> int:
    w = set(words(name))
    desc = str(prop.get("description", "")).lower()
    if w & {"limit", "results", "count"} or name.startswith("max_results"):
        return _pick_in(vc, (3, 5, 10, 20), prop)
    if "quantity" in w:
        return _pick_in(vc, (1, 2, 3), prop)
    if w & {"minutes", "duration"}:
        return _pick_in(vc, (15, 30, 45, 60, 90), prop)
    if "percent" in w:
        return _pick_in(vc, (20, 30, 50, 60, 70, 80, 90, 100), prop)
    if "speed" in w or "kmh" in w:
        return _pick_in(vc, (40, 50, 60, 70, 80, 90, 100, 110), prop)
    if "year" in w:
        return _pick_in(vc, tuple(vc.ref.year + i for i in range(1, 6)), prop)
    if "month" in w:
        return _pick_in(vc, tuple(range(1, 13)), prop)
    if "hour" in w:
        if "end" in w:
            start = vc.bound.get(name.replace("end", "start"), 9)
            return _pick_in(vc, tuple(h for h in (16, 17, 18, 19) if h > start) or (18,), prop)
        return _pick_in(vc, (8, 9, 10), prop)
    if w & {"lines", "line"}:
        return _pick_in(vc, (5, 10, 20), prop)
    if "depth" in w:
        return _pick_in(vc, (1, 2, 3), prop)
    if ("size" in w and "bytes" in desc) or w & {"size"}:
        return _pick_in(vc, (100, 1000, 4096, 10000), prop)
    if "capacity" in w:
        return _pick_in(vc, (4, 6, 8, 10), prop)
    lo, hi = _bounds(prop, 1, 10)
    return vc.rng.randint(int(lo), int(max(lo, min(hi, lo + 9))))


def synth_number(name: str, prop: dict[str, Any], vc: ValueContext) -> float | int:
    w = set(words(name))
    if w & {"amount", "deposit", "payment", "total"}:
        return _pick_in(vc, MONEY, prop)
    if "price" in w:
        return _pick_in(vc, (10, 20, 25, 50) if "min" in w else (100, 150, 200, 300, 500), prop)
    if "rating" in w:
        return vc.rng.choice((3, 3.5, 4, 4.5))
    if "temperature" in w:
        unit = vc.bound.get("unit")
        return vc.rng.choice((64, 68, 70, 72, 75) if unit == "F" else (18, 19, 20, 21, 22, 23, 24))
    return synth_integer(name, prop, vc)


def _date_value(name: str, desc: str, vc: ValueContext) -> str:
    w = words(name)
    for end, start in END_WORDS.items():
        if end in w:
            other = "_".join(start if x == end else x for x in w)
            if other in vc.bound and isinstance(vc.bound[other], str):
                try:
                    base = datetime.fromisoformat(vc.bound[other][:10])
                    return (base + timedelta(days=vc.rng.randint(1, 6))).date().isoformat()
                except ValueError:
                    pass
    future = any(k in desc for k in ("after today", "not before today", "future", "execution"))
    past = bool(set(w) & {"since", "from", "min"}) and not future
    offset = -vc.rng.randint(5, 40) if past else vc.rng.randint(1, 21)
    return (vc.ref + timedelta(days=offset)).date().isoformat()


def _datetime_value(name: str, vc: ValueContext) -> tuple[str, bool]:
    """A date-time (or the end of a range whose start is bound); second item: True if it ends a range."""
    w = words(name)
    for end, start in END_WORDS.items():
        if end in w:
            other = "_".join(start if x == end else x for x in w) if len(w) > 1 else start
            begin = vc.bound.get(other)
            if isinstance(begin, str) and "T" in begin:
                base = datetime.fromisoformat(begin)
                later = base + timedelta(minutes=vc.rng.choice((30, 45, 60, 60, 90)))
                return later.isoformat(timespec="seconds"), True
            if isinstance(begin, str) and len(begin) == 10:
                day = datetime.fromisoformat(begin) + timedelta(days=vc.rng.randint(1, 6))
                return day.date().isoformat(), True
    day = vc.ref + timedelta(days=vc.rng.randint(1, 10))
    while day.weekday() >= 5:
        day += timedelta(days=1)
    at = day.replace(hour=vc.rng.randint(9, 16), minute=vc.rng.choice((0, 0, 30)), second=0, tzinfo=None)
    return at.isoformat(timespec="seconds"), False


EXAMPLE = re.compile(r"e\.g\.,?\s*['\"]?([^\s'\",;()]+(?:;[^\s'\",()]+)*)")


def description_example(desc: str) -> str | None:
    """The example a parameter description gives ("e.g. FREQ=WEEKLY;COUNT=8"), if any."""
    m = EXAMPLE.search(desc)
    if not m or re.match(r"^[A-Z]{2,6}-\d", m.group(1)):
        return None
    return m.group(1).rstrip(".")


def _context_strings(vc: ValueContext, pred: Any) -> list[str]:
    if vc.ctx is None:
        return []
    out: list[str] = []
    for t in sorted(vc.ctx.rows):
        for row in vc.ctx.rows[t]:
            for v in row.fields.values():
                if isinstance(v, str) and pred(v) and v not in out:
                    out.append(v)
    return out


def synth_string(name: str, prop: dict[str, Any], vc: ValueContext) -> str:
    w = set(words(name))
    desc = str(prop.get("description", ""))
    low = desc.lower()
    rng, fake = vc.rng, vc.fake
    value: str
    if ("yyyy-mm-dd" in low and "date-time" not in low) or w & {"date", "since", "until"} or name.endswith("_date"):
        value = _date_value(name, low, vc)
    elif "date-time" in low or w & {"start", "end", "time"} or name.startswith("available_"):
        value, is_end = _datetime_value(name, vc)
        if "min" in w and "date" in low.replace("date-time", "") and rng.random() < 0.5 and not is_end:
            value = value[:10]
    elif w & EMAILISH or ("address" in w and "email" in low):
        taken = {str(x) for v in vc.bound.values() for x in (v if isinstance(v, list) else [v])}
        pool = [v for v in _context_strings(vc, lambda v: "@" in v and " " not in v) if v not in taken]
        related = [p for p in pool if p in vc.focus]
        value = rng.choice(related or pool) if pool else fake.email()
    elif "timezone" in w:
        value = rng.choice((vc.ctx.values.get("timezone") if vc.ctx else None) or ["UTC", "America/New_York"])
    elif w & {"query", "keyword", "keywords", "search"}:
        tokens = [t for label in vc.produced_labels for t in re.findall(r"[A-Za-z]{4,}", label)]
        value = (rng.choice(tokens) if tokens else fake.word()).lower()
    elif "card" in w and "number" in w:
        value = fake.credit_card_number(card_type=rng.choice(("visa16", "mastercard", "discover")))
    elif w & {"cvv", "cvc"} or ("security" in w and "code" in w):
        value = fake.numerify("###")
    elif w & {"phone"}:
        value = fake.numerify("(###) ###-####")
    elif "street" in w:
        value = fake.street_address()
    elif "city" in w:
        value = fake.city()
    elif "state" in w:
        value = fake.state_abbr(include_territories=False)
    elif w & {"zip", "postal"}:
        value = fake.zipcode()
    elif "address" in w:
        value = fake.address().replace("\n", ", ")
    elif w & {"subject", "title"}:
        value = rng.choice((fake.catch_phrase(), f"{fake.word().title()} {rng.choice(('review', 'sync', 'update', 'plan', 'notes'))}"))
    elif "name" in w and w & {"recipient", "cardholder", "full", "owner", "person", "contact"}:
        value = fake.name()
    elif "name" in w and re.search(r"\.\w{2,4}\b", description_example(desc) or ""):  # a file name
        ext = (description_example(desc) or "x.txt").rsplit(".", 1)[-1]
        value = f"{fake.word()}_{fake.word()}.{ext}"
    elif "name" in w:
        value = f"{fake.word().title()} {rng.choice(('Notes', 'Projects', 'Receipts', 'Travel', 'Team', 'Bills'))}"
    elif w & FREE_TEXT:
        value = fake.sentence(nb_words=rng.randint(6, 12))
    elif "pattern" in w or "glob" in low:
        value = _pattern_value(desc, vc)
    elif "mode" in w:
        value = rng.choice(("644", "640", "755", "750", "600"))
    elif w & {"code", "coupon"}:
        value = fake.bothify("????##").upper()
    else:
        example = description_example(desc)
        exact = vc.ctx.key_values(name) if vc.ctx is not None else []
        if example and (not exact or rng.random() < 0.5):
            value = example
        else:
            value = str(rng.choice(exact)[1]) if exact else fake.word()
    pattern = prop.get("pattern")
    if pattern and not re.search(pattern, value):
        value = from_pattern(pattern, rng)
    if "maxLength" in prop:
        value = value[: prop["maxLength"]]
    return value


def _pattern_value(desc: str, vc: ValueContext) -> str:
    """A glob that matches something: an extension of a file under a directory already chosen for
    this call when there is one (``*.csv`` in ``~/downloads``), else a common one."""
    dirs = [v for v in vc.bound.values() if isinstance(v, str) and v.startswith("/")]
    exts: list[str] = []
    if vc.ctx is not None and dirs:
        for rows in vc.ctx.all_rows.values():
            for row in rows:
                rid = str(row.id)
                if any(rid.startswith(d.rstrip("/") + "/") and "/" not in rid[len(d.rstrip("/")) + 1:]
                       for d in dirs) and "." in rid.rsplit("/", 1)[-1]:
                    exts.append(rid.rsplit(".", 1)[-1])
    if not exts:
        exts = [str(e).lstrip(".") for e in ((vc.ctx.values.get("extension") if vc.ctx else None) or
                                              ["txt", "log", "csv", "md"])]
    ext = vc.rng.choice(sorted(set(exts)))
    if "glob" in desc.lower() or "*" in desc:
        return f"*.{ext}"
    return vc.rng.choice(("TODO", "error", "import", "total"))


def synth_value(name: str, prop: dict[str, Any], vc: ValueContext) -> Any:
    """A plausible value for one parameter (schema first, then name/description heuristics)."""
    if "enum" in prop:
        return vc.rng.choice(prop["enum"])
    kind = prop.get("type")
    if kind == "boolean":
        if "default" in prop:
            return not prop["default"] if vc.rng.random() < 0.8 else prop["default"]
        return vc.rng.random() < 0.5
    if kind == "integer":
        return synth_integer(name, prop, vc)
    if kind == "number":
        return synth_number(name, prop, vc)
    if kind == "array":
        items = prop.get("items", {})
        lo = max(1, prop.get("minItems", 1))
        hi = max(lo, min(prop.get("maxItems", 2), 2))
        n = vc.rng.randint(lo, hi)
        singular = name[:-1] if name.endswith("s") else name
        if "enum" in items:
            return vc.rng.sample(list(items["enum"]), min(n, len(items["enum"])))
        out: list[Any] = []
        for _ in range(n * 3):
            v = synth_value(singular, {**items, "description": prop.get("description", "")}, vc)
            if v not in out:
                out.append(v)
            if len(out) == n:
                break
        if items.get("type") == "integer":
            out.sort(reverse=True)
        return out
    if kind == "object":
        return {}
    return synth_string(name, prop, vc)


_TOKEN = re.compile(r"\\d|\\w|\\.|\[[^\]]+\]|\([^)]*\)[?*+]?|.")


def _top_level_alternatives(body: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for i, ch in enumerate(body):
        escaped = i > 0 and body[i - 1] == "\\"
        if ch in "([" and not escaped:
            depth += 1
        elif ch in ")]" and not escaped:
            depth -= 1
        if ch == "|" and depth == 0 and not escaped:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def from_pattern(pattern: str, rng: random.Random) -> str:
    """A string matching a simple regex (classes, counts, groups, alternation): enough for ids, PINs,
    ZIP codes and octal modes. Optional and starred groups are left out; alternation takes the first."""
    body = pattern.removeprefix("^").removesuffix("$")
    if body.startswith("(?:") and body.endswith(")") and _top_level_alternatives(body[3:-1]) != [body[3:-1]]:
        body = body[3:-1]
    body = _top_level_alternatives(body)[0]
    out: list[str] = []
    i = 0
    while i < len(body):
        m = _TOKEN.match(body, i)
        assert m is not None
        tok = m.group(0)
        i = m.end()
        if tok.startswith("(") and tok[-1] in "?*":
            continue
        if tok.startswith("("):
            inner = tok.rstrip("+")[1:-1].removeprefix("?:")
            out.append(from_pattern(inner, rng))
            continue
        reps = 1
        q = re.match(r"\{(\d+)(?:,(\d*))?\}|[+*?]", body[i:])
        if q:
            i += q.end()
            if q.group(0) in ("*", "?"):
                reps = 0
            elif q.group(0) == "+":
                reps = 1
            else:
                lo = int(q.group(1))
                hi = int(q.group(2)) if q.group(2) else lo
                reps = max(lo, min(hi, lo + 2))
        for _ in range(reps):
            out.append(_char(tok, rng))
    return "".join(out)


def _char(tok: str, rng: random.Random) -> str:
    if tok == "\\d":
        return str(rng.randint(0, 9))
    if tok == "\\w":
        return rng.choice("abcdefghijklmnopqrstuvwxyz")
    if tok.startswith("["):
        inner = tok[1:-1]
        ranges = re.findall(r"(.)-(.)", inner)
        if ranges:
            a, b = ranges[0]
            return chr(rng.randint(ord(a), ord(b)))
        return rng.choice(inner.replace("\\", ""))
    return tok.replace("\\", "")
