"""Word-level English for synthesized turns: what a tool does, said from its *name*, and what a result
says, read from the actual output. Nothing here reads a tool's description: a request or a reply built
from documentation teaches a policy to match text to docs, not to use tools (data-2's finding)."""

from __future__ import annotations

from typing import Any

from data.catalog import ToolInfo, words
from data.sampler import LABEL_KEYS

SPECIAL = {"pin": "PIN", "id": "ID", "ids": "IDs", "url": "URL", "cvv": "CVV", "kmh": "km/h", "ev": "EV",
           "sku": "SKU", "crm": "CRM", "iot": "IoT"}
READ_VERBS = {"get", "view", "show", "read", "check", "describe", "inspect", "preview", "peek", "estimate",
              "compute", "compare", "calculate", "quote", "lookup", "track", "count", "print", "resolve"}
LIST_VERBS = {"list", "search", "find", "browse"}
CREATE_VERBS = {"create", "add", "book", "schedule", "place", "record", "send", "post", "make",
                "write", "upload", "register", "submit", "draft", "issue", "log", "request", "file", "plan"}
IRREGULAR = {"send": "sent", "pay": "paid", "set": "set", "get": "got", "make": "made", "put": "put", "read": "read",
             "write": "wrote", "find": "found", "begin": "began", "run": "ran", "buy": "bought", "leave": "left",
             "shut": "shut", "split": "split", "upload": "uploaded", "sell": "sold", "hold": "held",
             "withdraw": "withdrew", "forward": "forwarded", "open": "opened", "cancel": "cancelled",
             "label": "labelled", "travel": "travelled", "refuel": "refuelled", "unpin": "unpinned", "pin": "pinned",
             "stop": "stopped", "plan": "planned", "drop": "dropped", "ship": "shipped", "tag": "tagged",
             "submit": "submitted", "transfer": "transferred", "commit": "committed", "log": "logged",
             "mute": "muted", "unmute": "unmuted", "file": "filed", "star": "starred", "unstar": "unstarred"}
FACT_KEYS = ("status", "state", "amount", "total", "balance", "available", "price", "quantity", "count", "when",
             "start", "date", "scheduled_for", "eta", "arrives", "due_date", "expires_at", "replacements")


def phrase(p: str) -> str:
    """``from_account_id`` -> "from account"; ``pin`` -> "PIN"."""
    w = [SPECIAL.get(x, x) for x in words(p)]
    if len(w) > 1 and w[-1] == "ID":
        w = w[:-1]
    return " ".join(w)


def noun(t: str) -> str:
    """``account_id`` -> "account", ``file_path`` -> "file", ``mailbox`` -> "mailbox"."""
    w = words(t)
    core = [x for x in w if x not in ("id", "code", "name", "key")] or w
    if len(core) > 1 and core[-1] == "path":
        core = core[:-1]
    return " ".join(SPECIAL.get(x, x) for x in core)


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def obj(tool: ToolInfo) -> str:
    """The tool name's object: ``cancel_shop_order`` -> "shop order"."""
    w = words(tool.name)[1:]
    return " ".join(SPECIAL.get(x, x) for x in w) or "it"


PREPOSITIONS = {"from", "to", "into", "on", "in", "at", "for", "off", "out", "with", "onto", "up"}


def intent(tool: ToolInfo) -> str:
    """What a user asks for, from the tool's name alone: ``get_account_balance`` -> "check the
    account balance", ``create_merchant_payout`` -> "create a merchant payout", ``remove_from_wishlist``
    -> "remove it from the wishlist"."""
    verb = words(tool.name)[0]
    thing = obj(tool)
    if thing.split()[0] in PREPOSITIONS:
        head, _, rest = thing.partition(" ")
        return f"{verb} it {head} the {rest}" if rest else f"{verb} it {head}"
    if verb in READ_VERBS:
        return f"check the {thing}" if verb in ("get", "view", "show", "describe", "inspect") else f"{verb} the {thing}"
    if verb in LIST_VERBS:
        return f"show me the {thing}" if verb == "list" else f"{verb} the {thing}"
    if verb in CREATE_VERBS:
        return f"{verb} {article(thing)} {thing}"
    return f"{verb} the {thing}"


def past(verb: str) -> str:
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def done(tool: ToolInfo) -> str:
    """``cancel_shop_order`` -> "cancelled the shop order"."""
    verb = words(tool.name)[0]
    thing = obj(tool)
    if thing.split()[0] in PREPOSITIONS:
        head, _, rest = thing.partition(" ")
        return f"{past(verb)} it {head} the {rest}" if rest else f"{past(verb)} it {head}"
    return f"{past(verb)} {article(thing) if verb in CREATE_VERBS and verb != 'send' else 'the'} {thing}"


def money(value: float | int) -> str:
    return f"${value:,.2f}" if isinstance(value, float) and value != int(value) else f"${int(value):,}"


def fact(key: str, value: Any) -> str | None:
    """One field of a result in words ("balance $1,230.50", "status shipped")."""
    w = set(words(key))
    if isinstance(value, bool):
        return key.replace("_", " ") if value else None
    if isinstance(value, int | float):
        if w & {"amount", "total", "balance", "available", "price", "cost", "fee", "cash", "limit", "refund"}:
            return f"{key.replace('_', ' ')} {money(value)}"
        return f"{key.replace('_', ' ')} {value:,}" if isinstance(value, int) else f"{key.replace('_', ' ')} {value:,.2f}"
    if isinstance(value, str) and 0 < len(value) <= 60:
        return f"{key.replace('_', ' ')} {value}"
    return None


def label_of(item: dict[str, Any]) -> str | None:
    for k in LABEL_KEYS:
        v = item.get(k)
        if isinstance(v, str) and v and len(v) <= 70:
            return v
    for k, v in item.items():
        if (k.endswith("_id") or k in ("path", "code", "key", "symbol", "username")) and isinstance(v, str | int):
            return str(v)
    return None


def _plural(word: str) -> str:
    if word.endswith("s"):
        return word
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("sh", "ch", "x")) else "s")


def _facts(item: dict[str, Any], limit: int = 3) -> list[str]:
    keys = [k for k in FACT_KEYS if k in item] + [k for k in item if k not in FACT_KEYS]
    out = []
    for k in keys:
        if k in LABEL_KEYS or (k.endswith("_id") and k != "order_id"):
            continue
        f = fact(k, item[k])
        if f:
            out.append(f)
        if len(out) >= limit:
            break
    return out


def describe(tool: ToolInfo, payload: Any) -> str:
    """A plain-English reading of an actual tool result, e.g. "3 accounts: Shane's checking, Savings
    and Joint" or "Savings: status open, balance $1,230.50"."""
    items: list[Any] | None = None
    key = ""
    if isinstance(payload, list):
        items = payload
    elif isinstance(payload, dict):
        lists = [(k, v) for k, v in payload.items() if isinstance(v, list) and v and isinstance(v[0], dict)]
        if len(lists) == 1:
            key, items = lists[0]
    if items is not None:
        thing = key.replace("_", " ") if key else (obj(tool).split()[-1] if obj(tool) != "it" else "result")
        if not items:
            return f"no {_plural(thing)}"
        labels = [label_of(x) if isinstance(x, dict) else str(x) for x in items[:4]]
        labels = [x for x in labels if x]
        more = len(items) - len(labels)
        named = ", ".join(labels[:-1]) + " and " + labels[-1] if len(labels) > 1 else (labels[0] if labels else "")
        head = f"{len(items)} {_plural(thing) if len(items) != 1 else thing}"
        if not named:
            return head
        return f"{head}: {named}" + (f" (and {more} more)" if more > 0 else "")
    if isinstance(payload, dict):
        name = label_of(payload)
        facts = _facts(payload)
        if name and facts:
            return f"{name} — {', '.join(facts)}"
        return name or ", ".join(facts) or "done"
    return str(payload)
