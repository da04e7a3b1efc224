"""data.byo on a fake file tree served the way file and git servers answer: plain text, names listed
relative to the directory asked for, a root only an error reveals, per-file errors inside a
successful batch read. Each test names the rule it holds."""

from __future__ import annotations

import asyncio
from typing import Any

from data.byo.discovery import discover
from data.byo.graph import GraphOptions, InferredGraph, infer_graph
from data.byo.protocol import CallOutcome, ToolAnnotations, ToolListing
from data.byo.schema import fill_value, infer_shapes

S = {"type": "string"}
ROOT = "/ws"


def t(name: str, props: dict[str, Any], read_only: bool) -> ToolListing:
    return ToolListing(name, "", {"type": "object", "properties": props, "required": list(props)},
                       ToolAnnotations(read_only=read_only))


LISTING = [
    t("list_roots", {}, True),
    t("list_dir", {"path": S}, True),
    t("read_text", {"path": S}, True),
    t("read_many", {"paths": {"type": "array", "items": S}}, True),
    t("write_text", {"path": S, "content": S}, False),
    t("repo_status", {"repo_path": S}, True),
]


class FakeTree:
    """Files under /ws; relative paths resolve against it; nothing outside it is reachable."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.reset_sync()

    def reset_sync(self) -> None:
        self.files = {f"{ROOT}/docs/a.txt": "alpha", f"{ROOT}/b.md": "beta"}

    async def reset(self) -> None:
        self.reset_sync()

    @staticmethod
    def resolve(p: str) -> str:
        return p.rstrip("/") if p.startswith("/") else f"{ROOT}/{p}"

    def is_dir(self, p: str) -> bool:
        return p == ROOT or any(f.startswith(p + "/") for f in self.files)

    async def call(self, name: str, args: dict[str, Any]) -> CallOutcome:
        if name == "list_roots":
            return CallOutcome(f"Allowed directories:\n{ROOT}", False)
        if name == "read_many":
            out = []
            for q in args["paths"]:
                p = self.resolve(q)
                out.append(f"{q}:\n{self.files[p]}" if p in self.files else f"{q}: Error - ENOENT: no such file, open '{p}'")
            return CallOutcome("\n---\n".join(out), False)
        p = self.resolve(args.get("path") or args.get("repo_path") or "")
        if not (p == ROOT or p.startswith(ROOT + "/")):
            return CallOutcome(f"Access denied - path outside allowed directories: {p}", True)
        if name == "repo_status":
            return (CallOutcome("* main\nUntracked files:\n\tb.md\n", False) if p == ROOT
                    else CallOutcome(f"Error executing tool repo_status: {p}", True))
        if name == "list_dir":
            if p in self.files:
                return CallOutcome(f"ENOTDIR: not a directory, scandir '{p}'", True)
            if not self.is_dir(p):
                return CallOutcome(f"ENOENT: no such file or directory, scandir '{p}'", True)
            names = sorted({f[len(p) + 1:].split("/")[0] for f in self.files if f.startswith(p + "/")})
            return CallOutcome("\n".join(f"[{'DIR' if self.is_dir(f'{p}/{n}') else 'FILE'}] {n}" for n in names), False)
        if name == "read_text":
            if p not in self.files:
                return CallOutcome(f"ENOENT: no such file or directory, open '{p}'", True)
            return CallOutcome(self.files[p], False)
        if name == "write_text":
            self.files[p] = args["content"]
            return CallOutcome(f"Successfully wrote to {p}", False)
        return CallOutcome("unknown tool", True)


def graph() -> InferredGraph:
    return asyncio.run(infer_graph(LISTING, discover(LISTING), FakeTree(), GraphOptions(schema_fallback=False)))


def test_a_listing_of_names_feeds_the_readers_joined_to_its_directory() -> None:
    g = graph()
    assert ("list_dir", "read_text") in g.pairs()
    assert g.probe is not None  # b.md was listed; /ws/b.md (the name under the directory asked for) is accepted
    assert any(x.producer == "list_dir" and x.path.endswith("+") and str(x.value).startswith(ROOT + "/")
               for x in g.probe.accepted())


def test_a_lone_root_line_is_a_path_and_its_mutant_stays_inside() -> None:
    g = graph()
    assert ("list_roots", "list_dir") in g.pairs()
    assert ("list_roots", "read_text") not in g.pairs()  # /ws/<mutant> and /ws both fail alike for a reader


def test_a_root_only_an_error_reveals_opens_the_tool_that_needs_it() -> None:
    alone = [x for x in LISTING if x.name == "repo_status"]  # nothing lists the root
    g = asyncio.run(infer_graph(alone, discover(alone), FakeTree(), GraphOptions()))
    assert g.probe is not None
    assert g.probe.runs["repo_status"].args == {"repo_path": ROOT}


def test_errors_inside_a_batch_read_produce_nothing() -> None:
    g = graph()
    assert not [e for e in g.edges if e.producer == "read_many"]


def test_a_write_that_creates_the_name_it_is_given_produces_it() -> None:
    g = graph()
    assert g.probe is not None and "write_text" in g.probe.creations
    assert ("write_text", "read_text") in g.pairs()
    edge = next(e for e in g.edges if (e.producer, e.consumer) == ("write_text", "read_text"))
    assert edge.path == "created:path"
    # a file it made is not a directory: failing differently from an unknown name is no dependency here
    assert ("write_text", "list_dir") not in g.pairs()


def test_made_up_references_have_no_spaces() -> None:
    shapes = infer_shapes(discover([t("create_branch", {"branch_name": S}, False)]))
    assert " " not in fill_value(shapes["create_branch"].param("branch_name"))
