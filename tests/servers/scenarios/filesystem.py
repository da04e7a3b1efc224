"""Filesystem smoke scenario: a realistic shell session that succeeds with every user-visible tool once.

The logged-in user tidies their home: looks around, reads documents and a CSV, drafts notes in a new
work folder, sorts and dedupes them, searches the projects for TODOs, backs a project up into an
archive and restores it, fixes permissions, then switches to a colleague's account. Every path comes
from discovery or from an earlier tool result, never from the generator's internals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    users = await call("filesystem_list_users", {})
    me = await call("get_current_shell_user", {})
    home = me["home"]
    assert (await call("print_working_directory", {}))["cwd"] == home

    # -- look around
    listing = await call("list_directory", {"path": "~", "long_format": True, "show_hidden": True, "sort_by": "size"})
    assert any(e["name"] == "documents" for e in listing["entries"])
    await call("show_directory_tree", {"path": "~", "max_depth": 2})
    await call("change_directory", {"path": "documents"})
    docs = await call("find_files", {"path": ".", "name_pattern": "*.md", "kind": "file", "max_depth": 1})
    report = docs["matches"][0]["path"]
    await call("read_file", {"path": report})
    await call("read_file_head", {"path": report, "lines": 5})
    await call("read_file_tail", {"path": report, "lines": 3})
    await call("get_file_word_count", {"path": report})
    csv = (await call("find_files", {"path": ".", "name_pattern": "*.csv"}))["matches"][0]["path"]
    columns = await call("cut_file_columns", {"path": csv, "fields": "1,3", "delimiter": ","})
    assert columns["line_count"] > 1

    # -- draft notes in a new work folder
    work = f"{home}/work"
    made = await call("make_directory", {"path": f"{work}/2026/june", "parents": True})
    assert made["created"][-1] == f"{work}/2026/june"
    notes = f"{work}/2026/june/notes.txt"
    await call("write_file", {"path": notes, "content": "draft: budget review\nbuy paper\nbuy paper\ncall bank\n"})
    await call("append_to_file", {"path": notes, "content": "archive old photos"})
    sorted_out = await call("sort_file_lines", {"path": notes, "output_path": f"{work}/2026/june/sorted.txt"})
    assert sorted_out["line_count"] == 5
    uniq = await call("unique_file_lines", {"path": f"{work}/2026/june/sorted.txt", "count": True})
    assert {"line": "buy paper", "count": 2} in uniq["lines"]
    replaced = await call("replace_in_file", {"path": notes, "search": "draft", "replacement": "final"})
    assert replaced["replacements"] == 1
    diff = await call("compare_files", {"path_a": notes, "path_b": f"{work}/2026/june/sorted.txt"})
    assert not diff["identical"]
    await call("compute_file_checksum", {"path": notes, "algorithm": "sha256"})

    # -- search the code projects
    todos = await call("search_file_contents", {"pattern": "TODO", "path": "~/projects", "recursive": True})
    assert todos["match_count"] > 0

    # -- copies, renames and moves
    await call("copy_path", {"source": notes, "destination": f"{work}/notes_copy.txt"})
    info = await call("get_file_info", {"path": f"{work}/notes_copy.txt"})
    assert info["owner"] == me["username"]
    await call("rename_path", {"path": f"{work}/notes_copy.txt", "new_name": "notes_backup.txt"})
    await call("make_directory", {"path": f"{work}/old"})
    await call("move_path", {"source": f"{work}/notes_backup.txt", "destination": f"{work}/old"})
    await call("touch_file", {"path": f"{work}/scratch.log"})
    await call("delete_path", {"path": f"{work}/scratch.log"})
    await call("make_directory", {"path": f"{work}/empty"})
    await call("remove_directory", {"path": f"{work}/empty"})
    await call("create_symlink", {"target": "2026/june/notes.txt", "link_path": f"{work}/latest_notes"})
    real = await call("resolve_real_path", {"path": f"{work}/latest_notes"})
    assert real["real_path"] == notes and real["exists"]
    await call("move_files_by_pattern", {"source_directory": f"{work}/2026/june", "pattern": "*.txt",
                                         "destination_directory": f"{work}/old"})
    await call("copy_directory_structure", {"source": "~/projects", "destination": f"{work}/skeleton"})

    # -- permissions and ownership
    await call("change_file_permissions", {"path": f"{work}/old/notes.txt", "mode": "640"})
    await call("change_file_owner", {"path": f"{work}/old/notes.txt", "group": "staff"})

    # -- back a project up and restore it
    projects = await call("list_directory", {"path": "~/projects"})
    project = f"{home}/projects/{projects['entries'][0]['name']}"
    archive = await call("create_file_archive", {"archive_path": f"{work}/project_backup.tar.gz", "sources": [project]})
    members = await call("list_file_archive", {"archive_path": archive["archive_path"]})
    assert len(members["members"]) == archive["members"]
    await call("make_directory", {"path": f"{work}/restore"})
    restored = await call("extract_file_archive", {"archive_path": archive["archive_path"],
                                                   "destination": f"{work}/restore"})
    assert restored["extracted"] == archive["members"]

    # -- space accounting
    counts = await call("count_directory_entries", {"path": work, "recursive": True})
    assert counts["files"] >= 3
    await call("get_disk_usage", {"path": "~"})
    quota = await call("get_disk_quota", {})
    assert quota["used_bytes"] <= quota["quota_bytes"]

    # -- hand over to a colleague
    colleague = next(u for u in users if u["username"] not in ("root", me["username"]))
    switched = await call("switch_shell_user", {"username": colleague["username"], "password": colleague["password"]})
    assert switched["cwd"] == colleague["home"]
