"""Contract 1 across all implemented domains: counts, names, schemas, metadata."""

from __future__ import annotations

import re

import pytest
from jsonschema import Draft202012Validator

from servers import DOMAINS, PAPER_TOOL_COUNTS
from tests.servers.harness import ALL_DOMAINS, runtime

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_user_tool_count_matches_paper(domain: str) -> None:
    tools = runtime(domain).table.openai_tools()
    assert len(tools) == PAPER_TOOL_COUNTS[domain]


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_domain_has_discovery_tools(domain: str) -> None:
    kinds = [s.kind for s in runtime(domain).table.specs.values()]
    assert kinds.count("discovery") >= 2


def test_all_twenty_paper_domains_are_served_with_343_tools() -> None:
    assert set(DOMAINS) == set(PAPER_TOOL_COUNTS) and len(DOMAINS) == 20
    assert sum(len(runtime(d).table.openai_tools()) for d in DOMAINS) == 343


def test_tool_totals_match_the_paper() -> None:
    assert sum(len(runtime(d).table.openai_tools()) for d in ALL_DOMAINS) == sum(
        PAPER_TOOL_COUNTS[d] for d in ALL_DOMAINS)


def test_tool_names_unique_across_all_domains() -> None:
    seen: dict[str, str] = {}
    for domain in ALL_DOMAINS:
        rt = runtime(domain)
        for name in [*rt.table.specs, *rt.session_tools]:
            assert name not in seen, f"{name} is defined by {seen.get(name)} and {domain}"
            seen[name] = domain


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_schemas_are_valid_openai_functions(domain: str) -> None:
    rt = runtime(domain)
    for tool in rt.table.openai_tools(with_hidden=True):
        fn = tool["function"]
        assert NAME.match(fn["name"]), fn["name"]
        assert fn["description"].strip(), f"{fn['name']} has no description"
        params = fn["parameters"]
        Draft202012Validator.check_schema(params)
        assert params["type"] == "object" and params["additionalProperties"] is False
        for pname, prop in params["properties"].items():
            assert prop.get("description"), f"{fn['name']}.{pname} has no description"
            assert "$ref" not in str(prop), f"{fn['name']}.{pname} has an unresolved $ref"
        assert set(params.get("required", [])) <= set(params["properties"])


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_every_tool_lives_in_a_tools_or_discovery_module(domain: str) -> None:
    """The kit's one layout: user tools in a ``tools_*.py`` module of the domain's package, hidden
    discovery and helper tools in its ``discovery.py``."""
    for spec in runtime(domain).domain.tools.values():
        package, module = spec.fn.__module__.rsplit(".", 1)
        assert package == f"servers.{domain}", spec.name
        assert module.startswith("tools_") if spec.kind == "user" else module == "discovery", spec.name


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_user_tools_declare_entity_flow(domain: str) -> None:
    """Synthesis builds its dependency graph from produces/consumes/requires: most tools declare it."""
    specs = [s for s in runtime(domain).table.specs.values() if s.visible]
    declared = [s for s in specs if s.produces or s.consumes or s.requires]
    assert len(declared) >= 0.8 * len(specs), [s.name for s in specs if s not in declared]


def test_sensitive_parameters_are_marked() -> None:
    rt = runtime("banking")
    assert rt.table.sensitive_params("transfer_funds") == ["pin"]
    assert rt.table.sensitive_params("change_pin") == ["current_pin", "new_pin"]
