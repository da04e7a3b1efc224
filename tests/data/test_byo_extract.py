"""data.byo output extraction (JSON and text) and the probe's value helpers, on known inputs."""

from __future__ import annotations

import json
import random
import re

from data.byo.extract import extract
from data.byo.probe import mutate, shape_of, skeleton
from data.byo.probe import testable as is_testable


def test_json_rows_keep_paths_objects_and_positions() -> None:
    text = json.dumps({"orders": [{"order_id": "ORD-1", "customer_id": "CUS-9", "lines": [{"line_id": "L-1"}]},
                                  {"order_id": "ORD-2", "customer_id": "CUS-9", "lines": []}], "total": 2})
    ex = extract(text)
    assert ex.is_json and not ex.empty
    paths = ex.by_path()
    assert [f.value for f in paths["orders[].order_id"]] == ["ORD-1", "ORD-2"]
    assert paths["orders[].lines[].line_id"][0].value == "L-1"
    first = paths["orders[].order_id"][0]
    fk = paths["orders[].customer_id"][0]
    assert first.obj == fk.obj and (first.position, fk.position) == (0, 1)  # own id before foreign key
    assert paths["total"][0].value == 2


def test_json_labels_and_scalar_lists() -> None:
    ex = extract('[{"id": 7, "name": "Ana", "tags": ["a", "b"], "ok": true}]')
    obj = ex.objects[0]
    assert obj.label == "Ana"
    assert [f.value for f in ex.by_path()["[].tags[]"]] == ["a", "b"]
    assert "[].ok" not in ex.by_path()  # booleans are not values anything could reference


def test_empty_results() -> None:
    for text in ("[]", "{}", '{"entities": [], "relations": []}', "No results found.", '""'):
        assert extract(text).empty, text


def test_text_key_value_lines_and_tokens() -> None:
    text = ("Created issue #12 in project WEB-7.\n"
            "id: 3f2a9c1e-0b7d-4c2e-9a1f-1234567890ab\n"
            "owner = ana@example.com\n\n"
            "title: Second block\nsaved to /home/ana/notes.txt")
    ex = extract(text)
    assert not ex.is_json
    by = ex.by_path()
    assert by["text:id"][0].value == "3f2a9c1e-0b7d-4c2e-9a1f-1234567890ab"
    assert by["text:owner"][0].value == "ana@example.com"
    assert by["text:number_ref"][0].value == "#12"
    assert by["text:id"][0].obj != by["text:title"][0].obj  # a blank line starts a new object
    assert "/home/ana/notes.txt" in [f.value for f in by["text:path"]]
    assert "WEB-7" in [f.value for f in ex.values]


def test_mutants_keep_the_shape_and_name_nothing() -> None:
    rng = random.Random(0)
    m = mutate("ACC-0003", rng, {"ACC-9003"})
    assert re.fullmatch(r"ACC-9\d{3}", str(m)) and m != "ACC-0003"
    assert shape_of(m) == shape_of("ACC-0003")
    m = mutate("/home/ana/notes.txt", rng, set())
    assert str(m).startswith("/home/ana/") and str(m).endswith(".txt") and m != "/home/ana/notes.txt"
    assert mutate(41, rng, set()) != 41


def test_skeleton_masks_values_quotes_and_digits() -> None:
    a = skeleton("unknown account_id 'ACC-0001' (argument 'account_id')", "ACC-0001")
    b = skeleton("unknown account_id 'ACC-9381' (argument 'account_id')", "ACC-9381")
    assert a == b
    assert a != skeleton("incorrect PIN for account ACC-0001", "ACC-0001")


def test_testable_values() -> None:
    def found(v):
        return extract(json.dumps({"k": v})).values[0]
    assert is_testable(found("ACC-1")) and is_testable(found(12))
    assert not is_testable(found("2026-05-01")) and not is_testable(found("12.50"))
    assert not is_testable(found("a long sentence that is clearly prose and not a name"))


def test_text_item_lines_lone_paths_hashes_and_error_lines() -> None:
    """git and file servers list one name a line; a batch read reports per-file errors inline."""
    by = extract("* main\n  release").by_path()
    assert [f.value for f in by["text:item[]"]] == ["main", "release"]
    by = extract("[FILE] notes.md   12 B\n[DIR] src").by_path()
    assert [f.value for f in by["text:file[]"]] == ["notes.md"] and by["text:dir[]"][0].value == "src"
    assert extract("Allowed directories:\n/workspace").by_path()["text:path"][0].value == "/workspace"
    assert extract("Commit history:\ncommit 59c3e49b1bb4c272\n").by_path()["text:hex"][0].value == "59c3e49b1bb4c272"
    assert extract("a.txt: Error - ENOENT: no such file, open '/ws/a.txt'\n---\nb.txt:\nhello").empty is False
    assert "/ws/a.txt" not in [f.value for f in extract("a.txt: Error - ENOENT: no such file, open '/ws/a.txt'").values]
    assert extract("closed").empty  # one line is a message, not a listing


def test_names_listed_under_a_directory_are_joined_to_it() -> None:
    from data.byo.extract import under
    ex = under(extract("[FILE] a.txt\n[DIR] sub"), "/ws/docs")
    assert [f.value for f in ex.by_path()["text:file[]+"]] == ["/ws/docs/a.txt"]
    assert under(extract("[FILE] a.txt\n[DIR] sub"), "docs").by_path().get("text:file[]+") is None


def test_path_mutants_stay_in_their_directory() -> None:
    rng = random.Random(1)
    for v in ("/workspace/probe", "/workspace/docs/readme"):
        m = str(mutate(v, rng, set()))
        assert m.rsplit("/", 1)[0] == v.rsplit("/", 1)[0] and m != v
    assert str(mutate("/workspace", rng, set())).startswith("/workspace/")  # a lone root: a name inside it
