"""Filesystem domain: tool count, realistic failures (state untouched), multi-step
workflows, and the sandbox guarantee that no path ever reaches the host filesystem."""

from __future__ import annotations

import builtins
import io
import itertools
import os
import pathlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servers.banking import domain as banking
from servers.filesystem import domain
from servers.kit import DomainRuntime
from tests.servers.harness import drive
from tests.servers.scenarios.filesystem import smoke

RT = DomainRuntime(domain)  # one runtime (schemas built once); every Session gets a fresh session id
_IDS = itertools.count()


class Session:
    """One fresh session, with success/failure helpers."""

    def __init__(self, seed: int = 0, rt: DomainRuntime | None = None, sid: str | None = None) -> None:
        self.rt, self.seed, self.sid = rt or RT, seed, sid or f"t{next(_IDS)}"

    def raw(self, name: str, **args: Any):
        return self.rt.call(name, args, self.sid, self.seed)

    def ok(self, name: str, **args: Any) -> Any:
        out = self.raw(name, **args)
        assert not out.is_error, f"{name}({args}) failed: {out.text}"
        return out.json()

    def snap(self) -> str:
        """The session snapshot as the server returns it (byte-compared: a rolled-back call leaves it
        identical, key order included)."""
        return self.rt.call("filesystem_session_snapshot", {}, self.sid, self.seed).text

    def err(self, name: str, *needles: str, **args: Any) -> str:
        """The call fails, its message contains every needle, and the session state is unchanged."""
        before = self.snap()
        out = self.raw(name, **args)
        assert out.is_error, f"{name}({args}) unexpectedly succeeded: {out.text[:300]}"
        assert "internal error" not in out.text, out.text
        for needle in needles:
            assert needle in out.text, f"{needle!r} not in {out.text!r}"
        assert self.snap() == before, f"{name} changed state although it failed"
        return out.text

    def users(self) -> list[dict[str, Any]]:
        return self.ok("filesystem_list_users")

    def other_user(self) -> dict[str, Any]:
        me = self.ok("get_current_shell_user")["username"]
        return next(u for u in self.users() if u["username"] not in ("root", me) and "wheel" not in u["groups"])

    def home(self) -> str:
        return self.ok("get_current_shell_user")["home"]

    def find(self, prefix: str, **kw: Any) -> list[dict[str, Any]]:
        return self.ok("filesystem_find_nodes", path_prefix=prefix, **kw)


def run_smoke(session: Session) -> set[str]:
    seen: set[str] = set()

    async def call(name: str, args: dict[str, Any]) -> Any:
        seen.add(name)
        return session.ok(name, **args)

    drive(smoke(call))
    return seen


# ---------------------------------------------------------------- (1) tool surface
def test_exactly_40_user_tools_and_hidden_discovery() -> None:
    user = [t.name for t in domain.user_tools]
    discovery = [t.name for t in domain.tools.values() if t.kind == "discovery"]
    assert len(user) == 40
    assert 2 <= len(discovery) <= 4 and all(n.startswith("filesystem_") for n in discovery)
    assert not set(domain.tools) & set(banking.tools)
    assert all(t.produces or t.consumes or t.requires for t in domain.user_tools)
    openai = RT.table.openai_tools()
    assert len(openai) == 40
    for tool in openai:
        for pname, prop in tool["function"]["parameters"]["properties"].items():
            assert prop.get("description"), f"{tool['function']['name']}.{pname}"
    assert RT.table.sensitive_params("switch_shell_user") == ["password"]


# ---------------------------------------------------------------- (3) realistic failures
def test_lookup_failures() -> None:
    s = Session()
    s.err("read_file", "no such file or directory", "path", path="~/documents/missing.txt")
    s.err("change_directory", "not a directory", path="~/.bashrc")
    s.err("read_file", "is a directory", "path", path="~/documents")
    s.err("list_directory", "not a directory", path="~/.bashrc/x")
    s.err("read_file_head", "no such file", path="/nonexistent/dir/file")
    photo = s.find(s.home(), extension_is="jpg")[0]["path"]
    s.err("read_file", "cannot be shown as text", path=photo)
    s.err("append_to_file", "binary", path=photo, content="x")
    s.err("list_file_archive", "not an archive", archive_path="~/.bashrc")
    s.err("cut_file_columns", "column numbers run from 1", "fields", path="~/.bashrc", fields="0,2")
    s.err("cut_file_columns", "runs backwards", path="~/.bashrc", fields="4-2")


def test_existence_and_emptiness_failures() -> None:
    s = Session()
    s.err("make_directory", "already exists", "path", path="~/documents")
    s.err("remove_directory", "directory not empty", path="~/documents")
    s.err("remove_directory", "not a directory", path="~/.bashrc")
    s.err("delete_path", "is a directory", "recursive", path="~/documents")
    s.err("copy_path", "is a directory", "recursive", source="~/documents", destination="~/docs2")
    s.err("copy_path", "already exists", "overwrite", source="~/.bashrc", destination="~/.profile")
    s.err("move_path", "already exists", source="~/.bashrc", destination="~/.profile")
    s.err("rename_path", "already exists", "new_name", path="~/.bashrc", new_name=".profile")
    s.err("write_file", "already exists", path="~/.bashrc", content="x", overwrite=False)
    s.err("create_symlink", "already exists", "link_path", target="/etc", link_path="~/documents")
    s.err("move_files_by_pattern", "match pattern", "pattern", source_directory="~/documents",
          pattern="*.xyz", destination_directory="~")
    s.err("create_file_archive", "format", archive_path="~/backup.rar", sources=["~/documents"])


def test_moving_or_copying_a_directory_into_itself() -> None:
    s = Session()
    s.err("move_path", "into itself", "destination", source="~/documents", destination="~/documents/archive")
    s.err("copy_path", "into itself", source="~/documents", destination="~/documents/archive", recursive=True)
    s.err("copy_directory_structure", "into itself", source="~", destination="~/skeleton")
    s.err("move_path", "same file", source="~/documents", destination="~")


def test_permission_rules() -> None:
    s = Session()
    s.err("read_file", "permission denied", "/etc/shadow", path="/etc/shadow")
    s.err("write_file", "permission denied", "write", path="/etc/hosts", content="0.0.0.0 evil\n")
    s.err("write_file", "permission denied", "create or remove entries in '/etc'", path="/etc/new.conf", content="x")
    s.err("change_directory", "permission denied", "/root", path="/root")
    s.err("list_directory", "permission denied", path="/var/backups")
    s.err("read_file", "permission denied", path="/root/notes.txt")
    s.err("delete_path", "permission denied", path="/etc/motd")
    s.err("change_file_permissions", "only the owner", path="/etc/passwd", mode="666")
    s.err("read_file_tail", "permission denied", path="/var/log/auth.log")
    tmp = s.find("/tmp", name_contains="build_")[0]
    s.err("delete_path", "sticky", tmp["owner"], path=tmp["path"])
    s.err("extract_file_archive", "permission denied", archive_path="/var/backups/etc_backup.tar.gz")


def test_group_and_ownership_rules() -> None:
    s = Session()
    other = s.other_user()
    s.err("switch_shell_user", "root login is disabled", "username", username="root", password="x")
    s.err("switch_shell_user", "wrong password", "password", username=other["username"], password="nope")
    s.err("switch_shell_user", "unknown username", username="mallory", password="x")
    s.err("change_file_owner", "unknown user", "owner", path="~/.bashrc", owner="mallory")
    s.err("change_file_owner", "unknown group", "group", path="~/.bashrc", group="nogroup")
    s.ok("switch_shell_user", username=other["username"], password=other["password"])
    s.err("change_file_owner", "wheel", "owner", path="~/.bashrc", owner="root")
    s.err("change_file_owner", "not a member of group 'wheel'", path="~/.bashrc", group="wheel")
    s.err("change_file_owner", "operation not permitted", path="/etc/hosts", group="staff")


def test_quota_exceeded_is_rolled_back() -> None:
    s = Session()
    quota = s.ok("get_disk_quota")
    albums = [n["path"] for n in s.find(s.ok("get_current_shell_user")["home"] + "/photos", kind="directory")[1:]]
    for i in range(40):
        out = s.raw("copy_path", source=albums[i % len(albums)], destination=f"~/copy_{i}", recursive=True)
        if out.is_error:
            assert "disk quota exceeded" in out.text
            break
    else:
        pytest.fail("the quota was never reached")
    assert s.ok("get_disk_quota")["used_bytes"] <= quota["quota_bytes"]
    s.err("copy_path", "disk quota exceeded", "destination", source=albums[i % len(albums)],
          destination=f"~/copy_{i}", recursive=True)


def test_busy_symlink_regex_and_archive_failures() -> None:
    s = Session()
    s.ok("change_directory", path="~/documents")
    s.err("delete_path", "current working directory", path="~/documents", recursive=True)
    s.err("delete_path", "root directory", path="/", recursive=True)
    s.ok("create_symlink", target="loop_b", link_path="loop_a")
    s.ok("create_symlink", target="loop_a", link_path="loop_b")
    s.err("read_file", "too many levels of symbolic links", path="loop_a")
    s.err("search_file_contents", "repeating a group", "pattern", pattern="(a+)+$", path=".", recursive=True,
          regex=True)
    s.err("replace_in_file", "not a valid regular expression", "search", path="todo.md", search="([",
          replacement="", regex=True)
    s.err("rename_path", "without '/'", "new_name", path="todo.md", new_name="../escape.md")
    s.err("rename_path", "'.' or '..'", path="todo.md", new_name="..")
    evil = s.find("/home", name_contains="free_fonts")[0]["path"]
    s.err("extract_file_archive", "path traversal", "archive_path", archive_path=evil, destination="~")
    s.ok("create_file_archive", archive_path="~/docs.zip", sources=["~/documents/todo.md"])
    s.ok("extract_file_archive", archive_path="~/docs.zip", destination="~")
    s.err("extract_file_archive", "already exists", archive_path="~/docs.zip", destination="~")
    s.err("create_file_archive", "already exists", archive_path="~/docs.zip", sources=["~/.bashrc"])
    s.ok("make_directory", path="~/empty")
    s.ok("change_directory", path="~/empty")
    s.err("remove_directory", "current working directory", path=".")


def test_schema_errors_name_the_field() -> None:
    s = Session()
    s.err("list_directory", "unexpected argument", "recursive", path=".", recursive=True)
    s.err("show_directory_tree", "max_depth", max_depth=99)
    s.err("change_file_permissions", "mode", path="~/.bashrc", mode="rwxrwxrwx")
    s.err("read_file", "missing required argument 'path'")


# ---------------------------------------------------------------- (4) multi-step workflows
def test_project_setup_copy_move_and_listing() -> None:
    s = Session(seed=2)
    home = s.ok("get_current_shell_user")["home"]
    s.ok("make_directory", path="~/clients/acme/invoices", parents=True)
    s.ok("change_directory", path="~/clients/acme")
    assert s.ok("print_working_directory")["cwd"] == f"{home}/clients/acme"
    s.ok("write_file", path="invoices/inv_001.txt", content="Invoice 001\nTotal: 120.00\n")
    s.ok("write_file", path="invoices/inv_002.txt", content="Invoice 002\nTotal: 80.50\n")
    s.ok("copy_path", source="invoices", destination="../invoices_backup", recursive=True)
    s.ok("move_path", source="..", destination="~/archive_clients")  # moving the cwd's parent
    assert s.ok("print_working_directory")["cwd"] == f"{home}/archive_clients/acme"
    names = [e["name"] for e in s.ok("list_directory", path="~/archive_clients/invoices_backup")["entries"]]
    assert names == ["inv_001.txt", "inv_002.txt"]
    hits = s.ok("search_file_contents", pattern="Total", path="~/archive_clients", recursive=True)
    assert hits["match_count"] == 4
    diff = s.ok("filesystem_session_diff")
    assert f"{home}/archive_clients/acme/invoices/inv_001.txt" in diff["nodes"]["added"]
    assert s.ok("get_file_info", path="invoices/inv_001.txt")["owner"] == s.ok("get_current_shell_user")["username"]


def test_permissions_flow_between_two_users() -> None:
    s = Session(seed=1)
    me = s.ok("get_current_shell_user")
    other = s.other_user()
    s.ok("write_file", path="/home/shared/plan.txt", content="shared plan\n")
    info = s.ok("get_file_info", path="/home/shared/plan.txt")
    assert info["group"] == "staff"  # setgid directory: new files inherit its group
    s.ok("write_file", path="~/private.txt", content="secret\n")
    s.ok("change_file_permissions", path="~/private.txt", mode="go-rwx")
    s.ok("change_file_permissions", path="/home/shared/plan.txt", mode="g+w")
    s.ok("switch_shell_user", username=other["username"], password=other["password"])
    s.err("read_file", "permission denied", path=f"{me['home']}/private.txt")
    s.ok("append_to_file", path="/home/shared/plan.txt", content=f"ok from {other['username']}")
    assert s.ok("read_file", path="/home/shared/plan.txt")["content"].endswith(f"ok from {other['username']}\n")
    if "adm" in other["groups"]:
        s.ok("read_file_tail", path="/var/log/syslog", lines=2)


def test_wheel_user_can_take_over_a_directory_and_login_survives_a_moved_home() -> None:
    s = Session(seed=3)
    other = s.other_user()
    s.err("rename_path", "permission denied", path=other["home"], new_name="old_home")
    s.ok("change_file_owner", path="/home", owner=s.ok("get_current_shell_user")["username"])  # sudo chown
    s.ok("rename_path", path=other["home"], new_name="old_home")
    switched = s.ok("switch_shell_user", username=other["username"], password=other["password"])
    assert switched["cwd"] == "/" and s.ok("print_working_directory")["cwd"] == "/"
    s.err("list_directory", "no such file", path="~")


def test_archive_round_trip_preserves_content() -> None:
    s = Session(seed=4)
    before = s.ok("compute_file_checksum", path="~/documents/todo.md")["checksum"]
    s.ok("create_file_archive", archive_path="~/docs.tar.gz", sources=["~/documents"])
    s.ok("delete_path", path="~/documents", recursive=True)
    s.err("read_file", "no such file", path="~/documents/todo.md")
    s.ok("extract_file_archive", archive_path="~/docs.tar.gz", destination="~")
    assert s.ok("compute_file_checksum", path="~/documents/todo.md")["checksum"] == before


def test_sessions_are_isolated_and_reset() -> None:
    a, b = Session(0), Session(0)
    fresh = a.snap()
    a.ok("write_file", path="~/only_in_a.txt", content="a")
    a.ok("change_directory", path="/tmp")
    b.err("read_file", "no such file", path="~/only_in_a.txt")
    assert b.ok("print_working_directory")["cwd"] != "/tmp"
    assert b.snap() == fresh
    assert not RT.call("filesystem_session_reset", {}, a.sid, 0).is_error
    assert a.snap() == fresh


# ---------------------------------------------------------------- (5) world generation
def test_worlds_are_fast_and_sized() -> None:
    start = time.perf_counter()
    world = domain.new_world(7)
    assert time.perf_counter() - start < 1.0  # ~0.05 s on an idle core; generous for shared CI
    assert 150 <= len(world.nodes) <= 400


# ---------------------------------------------------------------- security: the host is unreachable
ESCAPES = ["../../etc/passwd", "/etc/passwd", "/../../../../root", "/../../../../etc/shadow", "..", "/..",
           "~", "~/../../..", "~root", "$HOME", "$HOME/.ssh/id_rsa", "/proc/self/environ", "/proc/self/cwd",
           "/dev/null", "/sys/kernel", "C:\\Windows\\System32", "file:///etc/passwd", "\\\\server\\share",
           "a\x00b", "/etc/passwd\x00.txt", "\n", "x" * 300, "/" + "a/" * 3000, "~/" + "é" * 200,
           "//etc//passwd", "./././../..", "/home/../../../../../../etc/hosts", "日本語/ファイル.txt",
           "\ud800", "%2e%2e/%2e%2e/etc/passwd", "....//....//etc"]


@pytest.mark.parametrize("path", ESCAPES)
def test_escape_attempts_stay_virtual(path: str) -> None:
    s = Session()
    nodes = {n["path"] for n in s.find("/", limit=2000)}
    for tool, args in (("read_file", {"path": path}), ("list_directory", {"path": path}),
                       ("get_file_info", {"path": path}), ("resolve_real_path", {"path": path})):
        out = s.raw(tool, **args)
        assert "internal error" not in out.text, out.text
        if out.is_error:
            continue
        result = out.json()
        real = result.get("real_path") or result.get("path")
        assert real.startswith("/") and ".." not in real.split("/")
        if tool != "resolve_real_path" or result["exists"]:
            assert real in nodes, real
    out = s.raw("write_file", path=path, content="pwned")
    assert "internal error" not in out.text
    if not out.is_error:
        assert out.json()["path"] in {n["path"] for n in s.find("/", limit=2000)}


def test_etc_passwd_is_the_virtual_one() -> None:
    s = Session()
    text = s.ok("read_file", path="../../../../../etc/passwd")["content"]
    assert text == s.ok("filesystem_get_node", path="/etc/passwd")["content"]
    assert all(u["username"] in text for u in s.users())


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(path=st.lists(st.sampled_from(["..", ".", "", "~", "etc", "home", "tmp", "x", "ü", "a b", "\\", "*"]),
                     max_size=12).map("/".join) | st.text(max_size=40))
def test_arbitrary_paths_never_crash_or_escape(path: str) -> None:
    s = Session(sid="fuzz")
    out = s.raw("resolve_real_path", path=path)
    assert "internal error" not in out.text, out.text
    if not out.is_error:
        real = out.json()["real_path"]
        assert real.startswith("/") and "//" not in real and ".." not in real.split("/")


_HOST_FS: list[tuple[Any, str]] = [
    (builtins, "open"), (io, "open"), (os, "open"), (os, "stat"), (os, "lstat"), (os, "listdir"),
    (os, "scandir"), (os, "walk"), (os, "remove"), (os, "unlink"), (os, "rmdir"), (os, "mkdir"),
    (os, "makedirs"), (os, "rename"), (os, "replace"), (os, "chmod"), (os, "chown"), (os, "access"),
    (os, "readlink"), (os, "symlink"), (os, "getcwd"), (os, "chdir"),
    (pathlib.Path, "open"), (pathlib.Path, "stat"), (pathlib.Path, "iterdir"), (pathlib.Path, "exists"),
    (pathlib.Path, "read_text"), (pathlib.Path, "write_text"), (pathlib.Path, "read_bytes"),
    (pathlib.Path, "mkdir"), (pathlib.Path, "unlink"),
]


@contextmanager
def host_filesystem_forbidden() -> Iterator[list[str]]:
    """Every host filesystem entry point raises (and is recorded) while the block runs."""
    touched: list[str] = []
    saved = [(owner, name, getattr(owner, name)) for owner, name in _HOST_FS]

    def trap(label: str) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            touched.append(f"{label}{args[:2]!r}")
            raise PermissionError(f"host filesystem access attempted: {label}")
        return refuse

    try:
        for owner, name, _ in saved:
            setattr(owner, name, trap(f"{getattr(owner, '__name__', owner)}.{name}"))
        yield touched
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def test_no_tool_ever_touches_the_host_filesystem() -> None:
    s = Session(0)
    s.ok("print_working_directory")  # build the seed world before the trap (generation is not a tool)
    every = {t.name for t in domain.user_tools}
    with host_filesystem_forbidden() as touched:
        seen = run_smoke(s)
        outcomes = [s.raw(tool, path=p) for p in ESCAPES for tool in
                    ("read_file", "list_directory", "change_directory", "touch_file", "delete_path",
                     "get_file_info", "make_directory", "find_files", "get_disk_usage")]
        outcomes += [s.raw("write_file", path=p, content="x") for p in ESCAPES]
        outcomes += [s.raw("copy_path", source="/etc/passwd", destination=p) for p in ESCAPES]
        outcomes += [s.raw("create_symlink", target=p, link_path=f"link{i}") for i, p in enumerate(ESCAPES)]
        outcomes += [s.raw("read_file", path=f"link{i}") for i in range(len(ESCAPES))]
        outcomes += [s.raw("create_file_archive", archive_path="~/host.zip", sources=["/etc/passwd", "/proc"])]
    assert touched == [], touched
    assert every <= seen
    assert not [o.text for o in outcomes if "internal error" in o.text]


def test_symlink_destinations_follow_cp_and_mv_rules() -> None:
    s = Session(seed=5)
    home = s.home()
    s.ok("write_file", path="~/a.txt", content="A\n")
    s.ok("write_file", path="~/b.txt", content="B\n")
    s.ok("create_symlink", target="b.txt", link_path="~/link_b")
    s.ok("create_symlink", target="documents", link_path="~/docs")
    s.ok("copy_path", source="~/a.txt", destination="~/link_b", overwrite=True)  # cp writes through the link
    assert s.ok("read_file", path="~/b.txt")["content"] == "A\n"
    assert s.ok("move_path", source="~/a.txt", destination="~/docs")["destination"] == f"{home}/documents/a.txt"
    s.ok("write_file", path="~/c.txt", content="C\n")
    s.ok("move_path", source="~/c.txt", destination="~/link_b", overwrite=True)  # mv replaces the link itself
    assert s.ok("get_file_info", path="~/link_b")["type"] == "file"
    assert s.ok("read_file", path="~/b.txt")["content"] == "A\n"


# ---------------------------------------------------------------- the session clock and typed text
def test_modification_times_follow_the_session_clock() -> None:
    snaps = []
    for _ in range(2):  # the same calls replayed on a fresh session give the same state
        s = Session(2)
        s.ok("write_file", path="~/notes.txt", content="line one\n\tindented\r\nline three\n")
        info = s.ok("get_file_info", path="~/notes.txt")
        assert info["modified"] == "2026-06-01T09:01:00+00:00"
        home = s.ok("get_file_info", path="~")
        assert home["modified"] == info["modified"]  # creating an entry touches its directory
        s.ok("filesystem_session_advance_clock", minutes=3 * 24 * 60)
        s.ok("touch_file", path="~/notes.txt")
        assert s.ok("get_file_info", path="~/notes.txt")["modified"] == "2026-06-04T09:04:00+00:00"
        s.ok("append_to_file", path="~/notes.txt", content="a\tb\n")
        assert s.ok("cut_file_columns", path="~/notes.txt", fields="2", delimiter="\t")["lines"][-1] == "b"
        snaps.append(s.snap())
    assert snaps[0] == snaps[1]


def test_file_contents_are_text_but_paths_are_single_line() -> None:
    s = Session()
    s.ok("write_file", path="~/multi.txt", content="a\nb\tc\n")
    s.ok("replace_in_file", path="~/multi.txt", search="a\nb", replacement="x\ny")
    assert s.ok("read_file", path="~/multi.txt")["content"] == "x\ny\tc\n"
    s.err("write_file", "content", path="~/big.txt", content="x" * 10_001)
    s.err("write_file", "path", path="~/a\nb.txt", content="x")
    s.err("write_file", "content", path="~/nul.txt", content="a\x00b")


# ---------------------------------------------------------------- layout: listing order and tool modules
USER_TOOL_ORDER = [
    "print_working_directory", "change_directory", "get_current_shell_user", "switch_shell_user",
    "list_directory", "show_directory_tree", "get_file_info", "resolve_real_path", "find_files",
    "count_directory_entries", "get_disk_usage", "get_disk_quota", "create_file_archive",
    "list_file_archive", "extract_file_archive", "make_directory", "remove_directory", "touch_file",
    "delete_path", "create_symlink", "copy_path", "move_path", "rename_path", "move_files_by_pattern",
    "copy_directory_structure", "change_file_permissions", "change_file_owner", "read_file",
    "read_file_head", "read_file_tail", "get_file_word_count", "compute_file_checksum", "write_file",
    "append_to_file", "replace_in_file", "search_file_contents", "compare_files", "sort_file_lines",
    "unique_file_lines", "cut_file_columns",
]


def test_user_tool_order_is_pinned() -> None:
    """The listing order the model sees is pinned (where each tool lives is checked for every domain
    by ``test_contract``)."""
    assert [t.name for t in domain.user_tools] == USER_TOOL_ORDER
