"""Tools over file contents: cat/head/tail, write/append, grep, wc, diff, sort, uniq, cut, sed, checksums."""

from __future__ import annotations

import difflib
import hashlib
import re
from typing import Annotated, Literal

from pydantic import Field

from servers.filesystem.state import DIRECTORY, FILE, FsState
from servers.filesystem.vfs import (
    R,
    W,
    X,
    allowed,
    enforce_quota,
    lookup,
    lookup_file,
    make_node,
    need,
    need_entry_write,
    parent_of,
    read_text,
    resolve,
    set_text,
    utf8_len,
    walk,
)
from servers.kit import Text, ToolError, tool

Content = Text
"""File contents: multi-line text (the kit allows line breaks and tabs in Text, at most 10,000 characters
per call; append to build larger files)."""
Delimiter = Annotated[Text, Field(min_length=1, max_length=1)]
"""One delimiter character; declared as Text so a tab (the default of cut) is accepted."""
Lines = Annotated[int, Field(ge=1, le=1000)]
MAX_RETURN_CHARS = 20_000
MAX_RETURN_LINES = 1000
# A group repeated by *, + or {n,} is the shape of catastrophic backtracking ((a+)+, (a|aa)*): refuse it.
_REPEATED_GROUP = re.compile(r"(?<!\\)\)\s*(?:[*+]|\{\d*,)")


def compile_pattern(pattern: str, field: str, *, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    flags = re.IGNORECASE if ignore_case else 0
    if not regex:
        return re.compile(re.escape(pattern), flags)
    if len(pattern) > 256:
        raise ToolError(f"{field} is too long for a regular expression (max 256 characters)", field=field)
    if _REPEATED_GROUP.search(pattern):
        raise ToolError(f"{field}: repeating a group with *, + or {{n,}} is not supported (it can make "
                        "matching hang); rewrite the pattern without a repeated group", field=field)
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise ToolError(f"{field} is not a valid regular expression: {exc}", field=field) from None


def _write_output(s: FsState, raw: str, text: str, field: str) -> str:
    """Create or replace a text file with ``text`` (shared by write_file and tools with an output_path)."""
    path, node = resolve(s, raw, field, must_exist=False)
    if node is None:
        need_entry_write(s, parent_of(path), field)
        made = make_node(s, path, FILE, content=text)
        owner = made.owner
    else:
        if node.kind == DIRECTORY:
            raise ToolError(f"{field} '{raw}' is a directory", field=field, code="is_a_directory")
        need(s, node, W, "write", field)
        owner = set_text(s, path, text).owner
    enforce_quota(s, owner, field)
    return path


def _cap(lines: list[str]) -> tuple[list[str], bool]:
    return lines[:MAX_RETURN_LINES], len(lines) > MAX_RETURN_LINES


# ---------------------------------------------------------------- reading
@tool(consumes=("file_path",), read_only=True)
def read_file(s: FsState, path: str, start_line: Annotated[int, Field(ge=1, le=10_000_000)] = 1,
              max_lines: Annotated[int, Field(ge=1, le=5000)] | None = None) -> dict:
    """Read a text file (like cat). Needs read permission; binary files (images, PDFs, archives) cannot be
    shown. Long output is cut at 20,000 characters (page with start_line/max_lines).

    Args:
        path: The file to read.
        start_line: First line to return (1-based).
        max_lines: Maximum number of lines to return; default all.
    """
    target, node = read_text(s, path, "path")
    lines = node.content.splitlines(keepends=True)
    end = len(lines) if max_lines is None else min(len(lines), start_line - 1 + max_lines)
    text = "".join(lines[start_line - 1:end])
    return {"path": target, "content": text[:MAX_RETURN_CHARS], "total_lines": len(lines),
            "start_line": start_line, "end_line": end, "truncated": len(text) > MAX_RETURN_CHARS}


@tool(consumes=("file_path",), read_only=True)
def read_file_head(s: FsState, path: str, lines: Lines = 10) -> dict:
    """Show the first lines of a text file (like head -n).

    Args:
        path: The file to read.
        lines: How many lines from the start.
    """
    target, node = read_text(s, path, "path")
    all_lines = node.content.splitlines()
    return {"path": target, "lines": all_lines[:lines], "total_lines": len(all_lines)}


@tool(consumes=("file_path",), read_only=True)
def read_file_tail(s: FsState, path: str, lines: Lines = 10) -> dict:
    """Show the last lines of a text file (like tail -n), e.g. the latest log entries.

    Args:
        path: The file to read.
        lines: How many lines from the end.
    """
    target, node = read_text(s, path, "path")
    all_lines = node.content.splitlines()
    return {"path": target, "lines": all_lines[-lines:], "total_lines": len(all_lines)}


@tool(consumes=("file_path",), read_only=True)
def get_file_word_count(s: FsState, path: str) -> dict:
    """Count lines, words, characters and bytes of a text file (like wc).

    Args:
        path: The file to count.
    """
    target, node = read_text(s, path, "path")
    text = node.content
    return {"path": target, "lines": text.count("\n"), "words": len(text.split()), "characters": len(text),
            "bytes": node.size}


@tool(consumes=("file_path",), read_only=True)
def compute_file_checksum(s: FsState, path: str, algorithm: Literal["md5", "sha1", "sha256"] = "sha256") -> dict:
    """Compute a checksum of a file's content (like sha256sum), e.g. to verify a copy is identical.

    Args:
        path: The file (text or binary).
        algorithm: Hash algorithm.
    """
    target, node = lookup_file(s, path, "path")
    need(s, node, R, "read", "path")
    data = node.content.encode("utf-8") if not node.binary else f"{node.content}\0{node.size}".encode()
    return {"path": target, "algorithm": algorithm, "checksum": hashlib.new(algorithm, data).hexdigest()}


# ---------------------------------------------------------------- writing
@tool(consumes=("path",), produces=("file_path",))
def write_file(s: FsState, path: str, content: Content, overwrite: bool = True) -> dict:
    """Write text to a file, creating it or replacing its whole content. Creating needs write permission
    on the directory, replacing needs write permission on the file; the owner's quota applies.

    Args:
        path: The file to write.
        content: The complete new text.
        overwrite: Allow replacing an existing file; with false an existing file is an error.
    """
    _, node = resolve(s, path, "path", must_exist=False)
    if node is not None and not overwrite and node.kind != DIRECTORY:
        raise ToolError(f"'{node.path}' already exists (overwrite is false)", field="path", code="exists")
    target = _write_output(s, path, content, "path")
    return {"path": target, "size": utf8_len(content, "content"), "created": node is None}


@tool(consumes=("path",), produces=("file_path",))
def append_to_file(s: FsState, path: str, content: Content, add_newline: bool = True) -> dict:
    """Append text to the end of a file (like `echo ... >> file`), creating the file if missing.

    Args:
        path: The file to append to.
        content: Text to add.
        add_newline: End the appended text with a newline if it does not already end with one.
    """
    if add_newline and not content.endswith("\n"):
        content += "\n"
    target, node = resolve(s, path, "path", must_exist=False)
    if node is None:
        _write_output(s, path, content, "path")
        return {"path": target, "size": utf8_len(content, "content"), "created": True}
    if node.kind == DIRECTORY:
        raise ToolError(f"path '{path}' is a directory", field="path", code="is_a_directory")
    need(s, node, W, "write", "path")
    if node.binary:
        raise ToolError(f"path: '{target}' is a binary file; text cannot be appended to it", field="path", code="binary")
    rec = set_text(s, target, node.content + content)
    enforce_quota(s, rec.owner, "content")
    return {"path": target, "size": rec.size, "created": False}


@tool(consumes=("file_path",))
def replace_in_file(s: FsState, path: str, search: Annotated[Text, Field(min_length=1, max_length=1000)],
                    replacement: Text, regex: bool = False,
                    ignore_case: bool = False, max_replacements: Annotated[int, Field(ge=0, le=100_000)] = 0) -> dict:
    """Find and replace text inside a file (like sed -i 's/old/new/g'). Needs read and write permission.
    The file is left untouched when nothing matches.

    Args:
        path: The file to edit.
        search: Text to find (a Python regular expression when regex is true).
        replacement: Replacement text (with regex, \\1 refers to the first group).
        regex: Treat search as a regular expression.
        ignore_case: Match case-insensitively.
        max_replacements: Replace at most this many occurrences; 0 replaces all.
    """
    target, node = read_text(s, path, "path")
    need(s, node, W, "write", "path")
    pattern = compile_pattern(search, "search", regex=regex, ignore_case=ignore_case)
    try:
        new, count = pattern.subn(replacement if regex else lambda _m: replacement, node.content,
                                  count=max_replacements)
    except (re.error, IndexError) as exc:
        raise ToolError(f"invalid replacement: {exc}", field="replacement") from None
    if count:
        set_text(s, target, new)
        enforce_quota(s, node.owner, "replacement")
    return {"path": target, "replacements": count}


# ---------------------------------------------------------------- searching and text processing
@tool(consumes=("path",), produces=("file_path",), read_only=True)
def search_file_contents(s: FsState, pattern: Annotated[str, Field(min_length=1, max_length=1000)],
                         path: str = ".", recursive: bool = False, ignore_case: bool = False,
                         regex: bool = False, max_results: Annotated[int, Field(ge=1, le=500)] = 50) -> dict:
    """Search for lines containing a pattern in a file, or in every text file below a directory with
    recursive=true (like grep -rn). Binary files and symbolic links are skipped; unreadable files and
    directories are reported in permission_denied.

    Args:
        pattern: Text to look for (a Python regular expression when regex is true).
        path: File or directory to search; default the current directory.
        recursive: Search all files below a directory.
        ignore_case: Match case-insensitively.
        regex: Treat pattern as a regular expression.
        max_results: Maximum number of matching lines returned.
    """
    compiled = compile_pattern(pattern, "pattern", regex=regex, ignore_case=ignore_case)
    top, node = lookup(s, path, "path")
    denied: list[str] = []
    if node.kind == DIRECTORY:
        if not recursive:
            raise ToolError(f"'{top}' is a directory (set recursive=true to search inside it)", field="recursive",
                            code="is_a_directory")
        need(s, node, R | X, "search directory", "path")
        nodes, denied = walk(s, top)
        files = [n for n, _ in nodes if n.kind == FILE and not n.binary]
    else:
        read_text(s, path, "path")
        files = [node]
    matches: list[dict] = []
    searched = 0
    total = 0
    for f in files:
        if not allowed(s, f, R):
            denied.append(f.path)
            continue
        searched += 1
        for i, line in enumerate(f.content.splitlines(), 1):
            if compiled.search(line):
                total += 1
                if len(matches) < max_results:
                    matches.append({"path": f.path, "line_number": i, "line": line[:500]})
    return {"pattern": pattern, "matches": matches, "match_count": total, "files_searched": searched,
            "truncated": total > len(matches), "permission_denied": denied}


@tool(consumes=("file_path",), read_only=True)
def compare_files(s: FsState, path_a: str, path_b: str,
                  context_lines: Annotated[int, Field(ge=0, le=20)] = 3) -> dict:
    """Compare two text files line by line and show a unified diff (like diff -u).

    Args:
        path_a: The original file.
        path_b: The changed file.
        context_lines: Unchanged lines shown around each change.
    """
    pa, a = read_text(s, path_a, "path_a")
    pb, b = read_text(s, path_b, "path_b")
    diff = list(difflib.unified_diff(a.content.splitlines(keepends=True), b.content.splitlines(keepends=True),
                                     fromfile=pa, tofile=pb, n=context_lines))
    text = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
    added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
    return {"identical": not diff, "lines_added": added, "lines_removed": removed,
            "diff": text[:MAX_RETURN_CHARS], "truncated": len(text) > MAX_RETURN_CHARS}


_NUMBER = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)")


@tool(consumes=("file_path",), produces=("file_path",))
def sort_file_lines(s: FsState, path: str, reverse: bool = False, numeric: bool = False,
                    ignore_case: bool = False, unique: bool = False,
                    key_field: Annotated[int, Field(ge=1, le=100)] | None = None,
                    delimiter: Delimiter | None = None,
                    output_path: str | None = None) -> dict:
    """Sort the lines of a text file (like sort); returns the sorted lines, or writes them to
    output_path (which may be the input file itself, to sort in place).

    Args:
        path: The file to sort.
        reverse: Descending order.
        numeric: Compare by the leading number of the key (non-numbers count as 0).
        ignore_case: Compare case-insensitively.
        unique: Drop duplicate lines.
        key_field: Sort by this field (1-based) instead of the whole line.
        delimiter: Field separator for key_field (one character, e.g. ','); default whitespace.
        output_path: Write the result to this file (created or replaced) instead of returning it.
    """
    _, node = read_text(s, path, "path")
    lines = node.content.splitlines()

    def key(line: str) -> tuple:
        text = line
        if key_field is not None:
            parts = line.split(delimiter) if delimiter else line.split()
            text = parts[key_field - 1] if key_field <= len(parts) else ""
        if ignore_case:
            text = text.casefold()
        if numeric:
            m = _NUMBER.match(text)
            return (float(m.group(1)) if m else 0.0, line)
        return (text, line)

    result = sorted(dict.fromkeys(lines) if unique else lines, key=key, reverse=reverse)
    if output_path is not None:
        out = _write_output(s, output_path, "".join(line + "\n" for line in result), "output_path")
        return {"written_to": out, "line_count": len(result)}
    shown, cut = _cap(result)
    return {"lines": shown, "line_count": len(result), "truncated": cut}


@tool(consumes=("file_path",), read_only=True)
def unique_file_lines(s: FsState, path: str, count: bool = False, only_duplicates: bool = False,
                      ignore_case: bool = False) -> dict:
    """Collapse runs of identical adjacent lines (like uniq); sort the file first to dedupe globally.

    Args:
        path: The file to read.
        count: Return how many times each line repeated (like uniq -c).
        only_duplicates: Only lines that occurred more than once in a row (like uniq -d).
        ignore_case: Compare lines case-insensitively.
    """
    _, node = read_text(s, path, "path")
    groups: list[list] = []
    for line in node.content.splitlines():
        norm = line.casefold() if ignore_case else line
        if groups and groups[-1][2] == norm:
            groups[-1][1] += 1
        else:
            groups.append([line, 1, norm])
    if only_duplicates:
        groups = [g for g in groups if g[1] > 1]
    rows = [{"line": g[0], "count": g[1]} for g in groups] if count else [g[0] for g in groups]
    return {"lines": rows[:MAX_RETURN_LINES], "line_count": len(rows), "truncated": len(rows) > MAX_RETURN_LINES}


_FIELDS = r"^\d+(-\d+)?(,\d+(-\d+)?)*$"
MAX_COLUMN = 1000


def parse_fields(spec: str) -> list[int]:
    """'1,3-5' -> [1, 3, 4, 5] (cut -f syntax; the schema pattern guarantees the shape)."""
    out: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        first, last = int(lo), int(hi or lo)
        if not 1 <= first <= MAX_COLUMN or not 1 <= last <= MAX_COLUMN:
            raise ToolError(f"fields: column numbers run from 1 to {MAX_COLUMN}, got '{part}'", field="fields")
        if last < first:
            raise ToolError(f"fields: range '{part}' runs backwards", field="fields")
        out.extend(range(first, last + 1))
    if len(out) > 100:
        raise ToolError("fields: at most 100 columns can be selected", field="fields")
    return out


@tool(consumes=("file_path",), read_only=True)
def cut_file_columns(s: FsState, path: str, fields: Annotated[str, Field(pattern=_FIELDS)],
                     delimiter: Delimiter = "\t") -> dict:
    """Extract columns from each line of a delimited text file such as a CSV (like cut -d, -f).
    Lines without the delimiter are returned whole.

    Args:
        path: The file to read.
        fields: 1-based column numbers or ranges to keep, in file order, e.g. '1,3' or '2-4'.
        delimiter: Single-character column separator, e.g. ',' for CSV; default tab.
    """
    wanted = sorted(set(parse_fields(fields)))
    _, node = read_text(s, path, "path")
    out = []
    for line in node.content.splitlines():
        if delimiter not in line:
            out.append(line)
            continue
        parts = line.split(delimiter)
        out.append(delimiter.join(parts[f - 1] for f in wanted if f <= len(parts)))
    shown, cut = _cap(out)
    return {"lines": shown, "line_count": len(out), "truncated": cut}
