"""data.byo static inference on hand-built listings with known answers (no server)."""

from __future__ import annotations

import re

from data.byo.discovery import ReadOnlyRule, classify_read_only, discover
from data.byo.protocol import ToolAnnotations, ToolListing
from data.byo.schema import entity_of, example_values, fill_value, infer_shapes, param_kind


def tool(name: str, props: dict | None = None, required: tuple[str, ...] = (), description: str = "",
         annotations: ToolAnnotations | None = None) -> ToolListing:
    schema = {"type": "object", "properties": props or {}, "required": list(required)}
    return ToolListing(name, description, schema, annotations or ToolAnnotations())


def test_read_only_annotation_beats_the_name() -> None:
    assert classify_read_only(tool("delete_everything", annotations=ToolAnnotations(read_only=True))).read_only
    v = classify_read_only(tool("get_thing", annotations=ToolAnnotations(destructive=True)))
    assert (v.read_only, v.source) == (False, "annotation")
    assert classify_read_only(tool("get_thing", annotations=ToolAnnotations(read_only=True)),
                              ReadOnlyRule(use_annotations=False)).source == "name"


def test_read_only_from_name_verbs_first_or_last() -> None:
    assert classify_read_only(tool("get_account_balance")).read_only
    assert classify_read_only(tool("listIssues")).read_only  # camelCase split
    assert classify_read_only(tool("issues_list")).read_only  # noun_verb
    assert not classify_read_only(tool("create_payee")).read_only
    assert not classify_read_only(tool("issues_delete")).read_only


def test_read_only_from_description_then_default_write() -> None:
    v = classify_read_only(tool("weather", description="Returns the forecast for a city."))
    assert (v.read_only, v.source) == (True, "description")
    v = classify_read_only(tool("frobnicate", description="Frobnicates the widget."))
    assert (v.read_only, v.source) == (False, "default")


def test_parameter_kinds() -> None:
    s = {"type": "string"}
    assert param_kind("from_account_id", s) == "reference"
    assert param_kind("symbol", s) == "reference"  # unknown strings are candidates; probing decides
    assert param_kind("limit", {"type": "integer"}) == "number"
    assert param_kind("issue_id", {"type": "integer"}) == "reference"  # integer ids exist
    assert param_kind("status", {"type": "string", "enum": ["a", "b"]}) == "enum"
    assert param_kind("query", s) == "query"
    assert param_kind("body", s) == "text"
    assert param_kind("pin", s) == "secret"
    assert param_kind("start_date", s) == "date"
    assert param_kind("when", {"type": "string", "format": "date-time"}) == "date"
    assert param_kind("invitee_emails", {"type": "array", "items": {"type": "string"}}) == "reference"
    assert param_kind("owner", {"type": "string", "format": "email"}) == "reference"


def test_entity_nouns_strip_roles_and_id_suffixes() -> None:
    assert entity_of("from_account_id") == "account"
    assert entity_of("to_account_id") == "account"
    assert entity_of("scheduled_transfer_id") == "scheduled_transfer"
    assert entity_of("invitee_emails") == "invitee_email"
    assert entity_of("categories") == "category"
    assert entity_of("id", "order") == "order"  # a bare id names the tool's noun


def test_shapes_nouns_and_produces_guess() -> None:
    listing = [
        tool("list_accounts", {"customer_id": {"type": "string"}}, ("customer_id",)),
        tool("create_payee", {"name": {"type": "string"}}, ("name",)),
        tool("get_order", {"id": {"type": "string"}}, ("id",)),
    ]
    shapes = infer_shapes(discover(listing))
    assert (shapes["list_accounts"].verb, shapes["list_accounts"].noun) == ("list", "account")
    assert shapes["list_accounts"].produces_guess == ("account",)
    assert shapes["create_payee"].produces_guess == ("payee",)
    assert shapes["get_order"].produces_guess == ()  # get reads what it is given
    assert shapes["get_order"].param("id").entity == "order"
    assert shapes["list_accounts"].param("customer_id").entity == "customer"


def test_example_values_from_descriptions() -> None:
    assert example_values("The account id, e.g. ACC-0003.") == ["ACC-0003"]
    assert example_values("Target file, e.g. 'report_final.md'.") == ["report_final.md"]
    assert example_values('A label such as "Q3 planning" or "x"') == ["Q3 planning", "x"]  # quoted: a value too
    assert example_values("local branches ('local') or all ('all'); don't") == ["local", "all"]
    assert example_values("The customer's id.") == []


def test_fill_values_follow_the_schema() -> None:
    shapes = infer_shapes(discover([tool("pay", {
        "pin": {"type": "string", "pattern": r"^\d{4}$"},
        "amount": {"type": "number", "minimum": 5, "maximum": 50},
        "kind": {"type": "string", "enum": ["fast", "slow"]},
        "on": {"type": "string", "format": "date"},
        "account_id": {"type": "string", "description": "e.g. ACC-0001"},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        "who": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
    })]))["pay"]
    assert re.fullmatch(r"\d{4}", fill_value(shape_p := shapes.param("pin")))
    assert shape_p.kind == "secret"
    assert 5 <= fill_value(shapes.param("amount")) <= 50
    assert fill_value(shapes.param("kind")) == "fast"
    assert fill_value(shapes.param("on"), "2026-07-01") == "2026-07-01"
    assert fill_value(shapes.param("account_id")) == "ACC-0001"
    assert len(fill_value(shapes.param("tags"))) == 2
    assert "@" in fill_value(shapes.param("who"))["email"]
