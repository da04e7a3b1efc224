"""Lines that are valid JSON but that the SDK's parser refuses, sent over stdio to every domain.

Arguments nested 200 levels deep, a ``"\\ud800"`` escape (in a value, an argument name, the method,
the tool name, a top-level key), a 5,000-digit integer, a method that is not a string: the SDK's
stdio reader cannot parse any of them and the kit once answered ``id: null``, which no client can
pair with its request (the official one waited forever). Each must now be answered promptly with the
request's id — an ``isError`` result naming the argument for ``tools/call``, ``-32602`` naming the
params member, ``-32600`` for the envelope — and the session must go on serving. Lines whose id
cannot be read (or that are no request) keep ``id: null``. One subprocess per domain takes them all.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.servers.harness import ALL_DOMAINS, raw_stdio_session, read_reply, run, runtime, send_line

PROMPT_S = 5.0
"""An answer must arrive well inside the official client's 10 s timeout (ours come in milliseconds)."""
DEEP = "[" * 200 + "1" + "]" * 200
HUGE = "9" * 5_000
LONE = "\\ud800"  # a lone surrogate escape, as it appears on the wire


def _tool_and_params(domain: str) -> tuple[str, str, str]:
    """A user tool of the domain with two parameters (names real clients would send)."""
    rt = runtime(domain)
    for name, schema in rt.table.schemas.items():
        props = list(schema.get("properties", {}))
        if rt.table.specs[name].visible and len(props) >= 2:
            return name, props[0], props[1]
    raise AssertionError(f"{domain}: no user tool with two parameters")


def _call(rid: Any, tool: str, arguments: str, extra: str = "") -> str:
    return (f'{{"jsonrpc":"2.0","id":{json.dumps(rid)},"method":"tools/call",'
            f'"params":{{"name":"{tool}","arguments":{arguments}{extra}}}}}')


def _hostile_lines(domain: str) -> list[tuple[str, str, Any, tuple[Any, ...]]]:
    """(label, raw line, id the answer must carry, expectation).

    Expectations: ``("tool", needle)`` an ``isError`` tool result containing ``needle``;
    ``("error", code, needle)`` a JSON-RPC error with that code and ``needle`` in its message."""
    tool, p, q = _tool_and_params(domain)
    return [
        ("deep argument", _call(101, tool, f'{{"{p}":{DEEP}}}'), 101, ("tool", f"'{p}': is nested too deeply")),
        ("lone surrogate value", _call(102, tool, f'{{"{p}":"x{LONE}"}}'), 102, ("tool", f"'{p}': is not valid Unicode")),
        ("lone surrogate argument name", _call(103, tool, f'{{"{LONE}":1}}'), 103,
         ("tool", "invalid argument name")),
        ("5000-digit integer", _call(104, tool, f'{{"{q}":{HUGE}}}'), 104, ("tool", f"'{q}': holds a number out of range")),
        ("bad argument among good ones", _call(105, tool, f'{{"{p}":"ok","{q}":{DEEP}}}'), 105,
         ("tool", f"'{q}'")),
        ("string id", _call("req-7", tool, f'{{"{p}":{DEEP}}}'), "req-7", ("tool", f"'{p}'")),
        ("lone surrogate tool name", _call(106, LONE, "{}"), 106, ("error", -32602, "'params.name' is not valid Unicode")),
        ("deep _meta", _call(107, tool, "{}", f',"_meta":{{"x":{DEEP}}}'), 107,
         ("error", -32602, "'params._meta' is nested too deeply")),
        ("deep arguments list", _call(108, tool, DEEP), 108, ("error", -32602, "'params.arguments'")),
        ("params not an object", f'{{"jsonrpc":"2.0","id":109,"method":"tools/list","params":{DEEP}}}', 109,
         ("error", -32602, "'params'")),
        ("huge cursor", f'{{"jsonrpc":"2.0","id":110,"method":"tools/list","params":{{"cursor":{HUGE}}}}}', 110,
         ("error", -32602, "'params.cursor' holds a number out of range")),
        ("lone surrogate method", f'{{"jsonrpc":"2.0","id":111,"method":"tools/{LONE}"}}', 111,
         ("error", -32600, "'method' is not valid Unicode")),
        ("method not a string", '{"jsonrpc":"2.0","id":112,"method":7}', 112, ("error", -32600, "'method'")),
        ("lone surrogate top-level key", f'{{"jsonrpc":"2.0","id":113,"method":"tools/list","{LONE}":1}}', 113,
         ("error", -32600, "ud800")),
        ("no jsonrpc", f'{{"id":114,"method":"tools/call","params":{{"name":"{tool}","arguments":{{"{p}":{DEEP}}}}}}}',
         114, ("error", -32600, "'jsonrpc'")),
        # no id can be read: null, as JSON-RPC says
        ("lone surrogate id", f'{{"jsonrpc":"2.0","id":"{LONE}","method":"tools/list"}}', None, ("error", -32600, "")),
        ("5000-digit id", f'{{"jsonrpc":"2.0","id":{HUGE},"method":"tools/list"}}', None, ("error", -32600, "")),
        # a broken *response* is never answered with its id: the client would take it for its own request's
        ("broken response", f'{{"jsonrpc":"2.0","id":115,"result":{{"x":"{LONE}"}}}}', None, ("error", -32600, "")),
        ("not JSON", '{"jsonrpc":"2.0","id":116,"method":"tools/list","params":{"a":tru}}', None,
         ("error", -32700, "")),
    ]


def _check(label: str, reply: dict[str, Any], rid: Any, expect: tuple[Any, ...]) -> None:
    assert reply.get("id", "absent") == rid, f"{label}: answered with id {reply.get('id', 'absent')!r}: {reply}"
    if expect[0] == "tool":
        result = reply.get("result") or {}
        text = "\n".join(c.get("text", "") for c in result.get("content", []))
        assert result.get("isError") is True and expect[1] in text, f"{label}: {reply}"
        assert len(text) <= 2_000 and "Traceback" not in text, f"{label}: {text[:300]}"
    else:
        error = reply.get("error") or {}
        assert error.get("code") == expect[1] and expect[2] in error.get("message", ""), f"{label}: {reply}"


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_hostile_lines_are_answered_with_their_id(domain: str) -> None:
    proc = raw_stdio_session(domain)
    try:
        for label, line, rid, expect in _hostile_lines(domain):
            send_line(proc, line)
            _check(label, read_reply(proc, timeout=PROMPT_S), rid, expect)
        # the session is intact: a normal call and a listing still work, with their ids
        send_line(proc, {"jsonrpc": "2.0", "id": 900, "method": "tools/call",
                         "params": {"name": f"{domain}_server_info", "arguments": {}}})
        reply = read_reply(proc, timeout=PROMPT_S)
        assert reply["id"] == 900 and not reply["result"].get("isError"), reply
        assert json.loads(reply["result"]["content"][0]["text"])["domain"] == domain
        send_line(proc, {"jsonrpc": "2.0", "id": 901, "method": "tools/list"})
        reply = read_reply(proc, timeout=PROMPT_S)
        assert reply["id"] == 901 and reply["result"]["tools"], reply
    finally:
        proc.kill()
        proc.wait()


def test_official_client_gets_a_prompt_error_not_a_timeout() -> None:
    """What the official client itself can send but the server's parser refuses (200-deep arguments,
    a 5,000-digit integer): an ``isError`` result naming the argument, long before the client's
    timeout, on a session that then goes on working."""
    domain = ALL_DOMAINS[0]
    tool, p, q = _tool_and_params(domain)
    deep: Any = 1
    for _ in range(200):
        deep = [deep]

    async def go() -> None:
        target = StdioServerParameters(command=sys.executable, args=["-m", f"servers.{domain}"])
        async with Client(target, cache=None, read_timeout_seconds=10) as client:
            for args, field in (({p: deep}, p), ({q: 10**5_000}, q)):
                # an unanswered (or id-null) request raises TimeoutError after PROMPT_S
                result = await client.call_tool(tool, args, read_timeout_seconds=PROMPT_S)
                text = result.content[0].text
                assert result.is_error and f"'{field}'" in text, text
            info = await client.call_tool(f"{domain}_server_info", {})
            assert not info.is_error and f'"domain": "{domain}"' in info.content[0].text

    run(go())


def test_every_refused_line_gets_a_reply_that_can_be_written() -> None:
    """The reply is built inside the stdio transport's screen: if building it raised, or the reply
    could not be written as JSON (a lone surrogate echoed in a message or id), the server would stop
    answering altogether. Random envelopes of hostile members, each refused by the SDK's own parser."""
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    from servers.kit.wire import answer_unparsed

    rng = random.Random(0)
    atoms = ["1", '"x"', f'"{LONE}"', f'"\\udfff{LONE}"', HUGE, DEEP, "[" * 1_500 + "]" * 1_500, "null", "true",
             "NaN", "1.5", "{}", "[]", f'{{"{LONE}":1}}', '"' + "y" * 10_000 + '"']
    keys = ["jsonrpc", "id", "method", "params", "result", "error", LONE, "_meta", "name", "arguments", "x"]
    fixed = {"jsonrpc": ['"2.0"'], "method": ['"tools/call"', '"tools/list"', '"initialize"']}

    def member_object(depth: int) -> str:
        members = []
        for _ in range(rng.randint(0, 4)):
            key = rng.choice(keys)
            value = rng.choice(fixed[key]) if key in fixed and rng.random() < 0.6 else (
                rng.choice(atoms) if depth > 1 or rng.random() < 0.5 else member_object(depth + 1))
            members.append(f'"{key}":{value}')
        return "{" + ",".join(members) + "}"

    refused = with_id = 0
    for i in range(1_500):
        line = member_object(0) if i % 3 else f'{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{member_object(1)}}}'
        try:
            jsonrpc_message_adapter.validate_json(line, by_name=False)
            continue
        except ValidationError as exc:
            reply = answer_unparsed(exc)
        refused += 1
        with_id += reply.id is not None
        json.loads(reply.model_dump_json(by_alias=True, exclude_unset=True))
    assert refused > 1_000 and with_id > 100, (refused, with_id)
