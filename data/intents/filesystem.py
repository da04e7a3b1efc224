"""Filesystem: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

BANK: dict[str, dict[str, list[str]]] = {
    "list_directory": {
        "ask": [
            "list the contents of {path}",
            "show me what's in {path}",
            "ls {path}",
        ],
        "vague": [
            "look inside a folder",
        ],
    },
    "read_file": {
        "ask": [
            "show me the contents of {path}",
            "read {path}",
            "open {path} and show it",
        ],
        "vague": [
            "read a file",
        ],
    },
    "make_directory": {
        "ask": [
            "create the directory {path}",
            "make a new folder {path}",
        ],
        "vague": [
            "make a new folder",
        ],
    },
    "copy_path": {
        "ask": [
            "copy {source} to {destination}",
            "make a copy of {source} at {destination}",
        ],
        "vague": [
            "copy a file",
        ],
    },
    "move_path": {
        "ask": [
            "move {source} to {destination}",
            "relocate {source} into {destination}",
        ],
        "vague": [
            "move a file",
        ],
    },
    "delete_path": {
        "ask": [
            "delete {path}",
            "remove {path}",
        ],
        "vague": [
            "delete something",
        ],
    },
    "touch_file": {
        "ask": [
            "create an empty file {path}",
            "touch {path}",
        ],
        "vague": [
            "create a file",
        ],
    },
    "write_file": {
        "ask": [
            "write {content} into {path}",
            "save {content} to {path}",
        ],
        "vague": [
            "write a file",
        ],
    },
    "rename_path": {
        "ask": [
            "rename {path} to {new_name}",
        ],
        "vague": [
            "rename a file",
        ],
    },
    "change_directory": {
        "ask": [
            "cd into {path}",
            "switch to the directory {path}",
        ],
        "vague": [
            "change folder",
        ],
    },
    "find_files": {
        "ask": [
            "find files under {path}",
            "search {path} for files",
        ],
        "vague": [
            "find some files",
        ],
    },
    "get_file_info": {
        "ask": [
            "give me the details of {path}",
            "show the metadata of {path}",
        ],
        "vague": [
            "inspect a file",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = []
