"""The inferred dependency graph of a server without metadata: ``A -> B`` when A's output feeds B.

**Method, in order.** (1) Static: each parameter's kind and entity noun from its name and schema,
reference fields inside object parameters included; example values from descriptions ("e.g.",
quoted tokens) (:mod:`data.byo.schema`). (2) Run every tool on a live session with the best
arguments known (:mod:`data.byo.probe`); results are read as JSON or text, including item lines
and paths joined to the directory listed (:mod:`data.byo.extract`); a root nothing lists is read
off an error echoing a relative path. (3) Differential test of every value A returned against
every reference parameter of B: the value is accepted where a same-shaped mutant is rejected.
(4) Creation test of each write: a made-up name it accepts and a consumer then takes. (5) Keep,
per A, only the tests through its rows' own ids (below) or its created names. (6) Tools that never
ran get name-only edges. A failed session stops probing rather than let its errors pass for hits.

**Edge.** Tool A *produces* an entity a reference parameter of tool B *consumes*: a value A returns
(not one it was given) is accepted by B's parameter where a value of the same shape that names
nothing is rejected (:mod:`data.byo.probe`). That is the same relation the kit declares with
``produces``/``consumes`` for our servers (``data.graph``'s explicit edges), established from
behaviour instead of declarations.

**Own ids only.** A result row carries its own id and foreign keys (a transaction's ``account_id``).
A tool produces the first reference-valued key of each *row* it returns — the row's own id — not
the foreign ones: listing transactions is not a way to find accounts. Rows are the result, the
items of a top-level list, and for reads the items of a list under a top-level key; nested objects
and lists inside rows are the row's links to other entities (:func:`row_level`). Keys count as
reference-valued when some consumer accepted their value; an object whose own id is an echo of the
call's input (``get_account_balance`` returning its ``account_id``) produces nothing.
``own_ids_only=False`` keeps every accepted key (more edges, more of them invented).

**Fallback.** A tool that never ran (no arguments found that it accepts) gets the schema-only
edges: its name's noun (``create_payee`` -> ``payee``) against the entity nouns of other tools'
reference parameters. They are marked ``evidence="schema"``, so a caller can drop them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from data.byo.discovery import Discovery, name_words
from data.byo.extract import Found
from data.byo.probe import CREATED, Prober, ProbeResult, Run
from data.byo.protocol import Session, ToolListing
from data.byo.schema import ToolShape, compatible, entity_of, infer_shapes, singular


@dataclass(frozen=True)
class Edge:
    producer: str
    consumer: str
    param: str
    entity: str
    evidence: str  # "probe" | "schema"
    path: str = ""


@dataclass(frozen=True)
class GraphOptions:
    own_ids_only: bool = True
    named_production: bool = False
    schema_fallback: bool = True
    max_rounds: int = 3
    seed: int = 0


@dataclass
class InferredGraph:
    shapes: dict[str, ToolShape]
    edges: list[Edge]
    probe: ProbeResult | None = None
    entities: dict[str, str] = field(default_factory=dict)  # "tool.param" -> entity noun

    def pairs(self, evidence: tuple[str, ...] = ("probe", "schema")) -> set[tuple[str, str]]:
        return {(e.producer, e.consumer) for e in self.edges if e.evidence in evidence}

    def consumers(self, producer: str) -> list[str]:
        return sorted({e.consumer for e in self.edges if e.producer == producer})


def schema_edges(shapes: dict[str, ToolShape], producers: set[str] | None = None) -> list[Edge]:
    """Name-only candidates: a producing verb's noun against reference parameters' entities."""
    out = []
    for a in shapes.values():
        if producers is not None and a.name not in producers:
            continue
        for noun in a.produces_guess:
            for b in shapes.values():
                if b.name == a.name:
                    continue
                for p in b.references:
                    if compatible(noun, p.entity):
                        out.append(Edge(a.name, b.name, p.name, p.entity, "schema"))
    return out


def own_paths(run: Run, ref_keys: set[str]) -> set[str]:
    """Per object of the result, the path of its first reference-valued key (a key some consumer
    accepted a value of, from any tool), unless that value echoes the call's inputs: then the object
    is about the input (``get_account_balance``'s ``account_id``) and produces nothing."""
    inputs = run.inputs()
    echoed = {k for k, v in run.args.items() if isinstance(v, str | int) and not isinstance(v, bool)}
    ref_keys = ref_keys | echoed  # an echoed input parameter is an id even if nothing tested it
    out: set[str] = set()
    by_obj: dict[int, list[Found]] = {}
    for f in run.extraction.values:
        by_obj.setdefault(f.obj, []).append(f)
    for idx, found in by_obj.items():
        if not row_level(run, run.extraction.objects[idx].path if 0 <= idx < len(run.extraction.objects) else ""):
            continue
        first = next((f for f in sorted(found, key=lambda x: x.position) if f.key in ref_keys), None)
        if first is not None and str(first.value) not in inputs:
            out.add(first.path)
    return out


def row_level(run: Run, path: str) -> bool:
    """Is the object at ``path`` one of the result's rows, whose own ids the tool produces? The
    result itself (``""``), the items of a top-level list (``[]``) and, for a read, the items of a
    list under a top-level key (``devices[]``, a wishlist's ``items[]``). Not a nested object
    (``home`` of a device, ``[].runs`` of an automation: links to other entities), nor a list inside
    a row (``[].devices[]`` of a scene: its members), nor a list in a write's result (the cart
    after ``update_cart_quantity`` lists products it did not make)."""
    if path.startswith("text") or path in ("", "[]"):
        return True
    if not path.endswith("[]") or "." in path or path.startswith("[]"):
        return False
    return run.read_only


def names_its_output(tool: str, path: str) -> bool:
    """Does the tool's name mention what the value at ``path`` is (``list_transactions`` ->
    ``transaction_id``; an ``id`` key is named by its container, else by the tool)? A report of
    energy use per device holds device ids, but it is not how one finds devices."""
    parts = [p.removesuffix("[]") for p in path.removeprefix("text:").split(".") if p.removesuffix("[]")]
    key = parts[-1] if parts else ""
    noun = entity_of(key) or (entity_of(parts[-2]) if len(parts) > 1 else "")
    if not noun:
        return True
    tool_words = {singular(w) for w in name_words(tool)}
    return any(singular(w) in tool_words for w in noun.split("_"))


def probe_edges(shapes: dict[str, ToolShape], result: ProbeResult, *, own_ids_only: bool = True,
                named_production: bool = False) -> list[Edge]:
    accepted = result.accepted()
    ref_keys = {t.path.rsplit(".", 1)[-1].removesuffix("[]").removeprefix("text:") for t in accepted}
    own = {name: own_paths(run, ref_keys) for name, run in result.runs.items()}
    out = []
    for t in accepted:
        if t.producer not in result.runs:
            continue
        if own_ids_only and t.path not in own[t.producer] and not t.path.startswith(CREATED):
            continue
        if named_production and not names_its_output(t.producer, t.path):
            continue
        ent = shapes[t.consumer].param(t.param).entity or entity_of(t.path.rsplit(".", 1)[-1])
        out.append(Edge(t.producer, t.consumer, t.param, ent, "probe", t.path))
    return out


async def infer_graph(tools: list[ToolListing], discovery: Discovery, session: Session,
                      options: GraphOptions = GraphOptions()) -> InferredGraph:
    """Discovery + static shapes + probing on ``session`` -> the graph."""
    del tools  # the listing is inside ``discovery``; kept in the signature for symmetry with callers
    shapes = infer_shapes(discovery)
    prober = Prober(shapes, session, seed=options.seed, max_rounds=options.max_rounds)
    result = await prober.probe()
    edges = probe_edges(shapes, result, own_ids_only=options.own_ids_only,
                        named_production=options.named_production)
    if options.schema_fallback:
        never_ran = {n for n in shapes if n not in result.runs}
        edges += schema_edges(shapes, never_ran)
    entities = {f"{s.name}.{p.name}": p.entity for s in shapes.values() for p in s.references}
    return InferredGraph(shapes, edges, result, entities)
