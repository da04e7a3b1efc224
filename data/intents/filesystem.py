"""Filesystem: how people ask for shell work on their files (format: data/intents/__init__.py)."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "print_working_directory": {
        "ask": [
            "tell me which folder I'm in",
            "show me where I am in the shell right now",
            "print the folder the terminal is sitting in",
        ],
        "vague": ["tell me where I am", "remind me which folder I'm in"],
    },
    "change_directory": {
        "ask": [
            "go into {path}",
            "cd into {path}",
            "make {path} the folder I'm working in",
        ],
        "vague": ["take me to another folder", "switch to a different folder"],
    },
    "get_current_shell_user": {
        "ask": [
            "tell me who I'm logged in as",
            "show me which user and groups this shell has",
            "check what account I'm using on this machine",
        ],
        "vague": ["tell me whose account this is", "check that I'm logged in as the right person"],
    },
    "switch_shell_user": {
        "ask": [
            "log in as {username} — the password is {password}",
            "switch the shell over to {username}, their password is {password}",
            "become {username} for a while",
        ],
        "vague": ["let me work as somebody else", "change which account I'm using"],
    },
    "list_directory": {
        "ask": [
            "show me what's in {path}",
            "ls {path}",
            "list {path} in {sort_by} order",
            "tell me what files are sitting in {path}",
            "list the files for me",
            "list the files in {sort_by} order",
        ],
        "vague": ["show me what's in this folder", "look inside a folder for me"],
    },
    "show_directory_tree": {
        "ask": [
            "draw me the folder layout under {path}",
            "show how {path} is laid out, {max_depth} levels deep",
            "give me a tree view of {path}",
            "draw me the folder tree",
            "show me how the folders are laid out, {max_depth} levels deep",
        ],
        "vague": ["show me how this project is organised", "give me the big picture of the folders"],
    },
    "get_file_info": {
        "ask": [
            "tell me who owns {path} and how big it is",
            "show me the permissions and size of {path}",
            "check when {path} was last changed",
        ],
        "vague": ["tell me about this file", "check whether I can edit that file"],
    },
    "resolve_real_path": {
        "ask": [
            "tell me where {path} really points",
            "give me the full absolute location of {path}",
            "work out the real place behind {path}",
        ],
        "vague": ["find out where this shortcut actually goes", "spell out the full location for me"],
    },
    "find_files": {
        "ask": [
            "find everything matching {name_pattern} under {path}",
            "look for files owned by {owner} in {path}",
            "find files bigger than {min_size} bytes in {path}",
            "find every {kind} in {path} whose name matches {name_pattern}",
            "search the folder tree for files",
            "find files matching {name_pattern}",
            "look for every {kind} under {path}",
            "list up to {limit} matching files",
        ],
        "vague": ["help me find a file", "track down something I saved and lost"],
    },
    "count_directory_entries": {
        "ask": [
            "tell me how many files are in {path}",
            "count what's inside {path}, broken down by file type",
            "give me a tally of files and folders in {path}",
            "tell me how many files there are",
            "count the files and folders",
        ],
        "vague": ["tell me how many files I have", "check how full that folder is"],
    },
    "get_disk_usage": {
        "ask": [
            "tell me how much space {path} takes up",
            "find what's eating the space in {path}",
            "show me the size of {path} and the biggest things in it",
            "tell me how much disk space is being used",
            "find out what's using the disk",
        ],
        "vague": ["find out what's using up the disk", "see what's taking up space"],
    },
    "get_disk_quota": {
        "ask": [
            "tell me how much of my storage allowance is left",
            "check {username}'s disk quota",
            "see how close {username} is to their storage limit",
        ],
        "vague": ["check whether I'm out of space", "tell me how much room I have left"],
    },
    "create_file_archive": {
        "ask": [
            "zip up {sources} into {archive_path}",
            "pack {sources} into a {format} archive at {archive_path}",
            "bundle {sources} together as {archive_path}",
        ],
        "vague": ["bundle a bunch of files into one", "back these files up into a single bundle"],
    },
    "list_file_archive": {
        "ask": [
            "show me what's inside {archive_path} without unpacking it",
            "peek into {archive_path}",
            "tell me which files {archive_path} holds",
        ],
        "vague": ["show me what's in this zip", "check what's in an archive"],
    },
    "extract_file_archive": {
        "ask": [
            "unzip {archive_path} into {destination}",
            "unpack {archive_path} here",
            "open up {archive_path} and put the contents in {destination}",
        ],
        "vague": ["get the files out of this zip", "unpack something I downloaded"],
    },
    "make_directory": {
        "ask": [
            "create a folder at {path}",
            "mkdir {path}",
            "set up a new folder {path} with {mode} permissions",
        ],
        "vague": ["make me a new folder", "make somewhere to put these files"],
    },
    "remove_directory": {
        "ask": [
            "remove the empty folder {path}",
            "rmdir {path}",
            "get rid of {path}, there's nothing left in it",
        ],
        "vague": ["clean up an empty folder", "get rid of a folder I don't need"],
    },
    "touch_file": {
        "ask": [
            "create a blank file at {path}",
            "touch {path}",
            "bump the modified time on {path} to now",
        ],
        "vague": ["make me a placeholder file", "make a new blank file"],
    },
    "delete_path": {
        "ask": [
            "delete {path}",
            "remove {path} for good",
            "get rid of {path}",
        ],
        "vague": ["throw something away for me", "clean out some junk"],
    },
    "create_symlink": {
        "ask": [
            "make {link_path} a shortcut to {target}",
            "create a symlink at {link_path} pointing at {target}",
            "link {target} in as {link_path}",
        ],
        "vague": ["make me a shortcut to a file", "make that folder reachable from here"],
    },
    "copy_path": {
        "ask": [
            "copy {source} to {destination}",
            "make a copy of {source} at {destination}",
            "duplicate {source} into {destination}",
        ],
        "vague": ["make a backup of a file", "make a second copy of something"],
    },
    "move_path": {
        "ask": [
            "move {source} to {destination}",
            "relocate {source} into {destination}",
            "shift {source} over to {destination}",
        ],
        "vague": ["put a file where it belongs", "move something for me"],
    },
    "rename_path": {
        "ask": [
            "rename {path} to {new_name}",
            "change the name of {path} to {new_name}",
            "call {path} {new_name} instead",
        ],
        "vague": ["fix a file's name", "rename something for me"],
    },
    "move_files_by_pattern": {
        "ask": [
            "move every {pattern} file out of {source_directory} into {destination_directory}",
            "shift all the files matching {pattern} from {source_directory} over to {destination_directory}",
            "sweep the {pattern} files in {source_directory} into {destination_directory}",
        ],
        "vague": ["tidy up all those log files", "sort a pile of files into another folder"],
    },
    "copy_directory_structure": {
        "ask": [
            "recreate the folder layout of {source} at {destination} without the files",
            "copy just the folders from {source} over to {destination}",
            "set up an empty skeleton of {source} in {destination}",
        ],
        "vague": ["give me the same folders for a new project", "copy the folder setup but nothing in it"],
    },
    "change_file_permissions": {
        "ask": [
            "chmod {path} to {mode}",
            "set the permissions on {path} to {mode}",
            "change who can read and write {path}, make it {mode}",
        ],
        "vague": ["stop other people seeing a file they shouldn't", "make my script runnable"],
    },
    "change_file_owner": {
        "ask": [
            "give {path} to {owner}",
            "hand {path} over to {owner}",
            "put {path} in the {group} group",
        ],
        "vague": ["give a file to the right person", "make someone else the owner of this"],
    },
    "read_file": {
        "ask": [
            "show me {path}",
            "cat {path}",
            "open {path} and show me what it says",
            "show me {max_lines} lines of {path}",
        ],
        "vague": ["show me what's in that file", "let me see a file"],
    },
    "read_file_head": {
        "ask": [
            "show me the top of {path}",
            "give me the first {lines} lines of {path}",
            "peek at the beginning of {path}",
        ],
        "vague": ["show me how that file starts", "just show me the beginning"],
    },
    "read_file_tail": {
        "ask": [
            "show me the last {lines} lines of {path}",
            "check the end of {path}",
            "tail {path}",
        ],
        "vague": ["show me what happened most recently in the log", "show me the bottom of the file"],
    },
    "get_file_word_count": {
        "ask": [
            "count the words in {path}",
            "tell me how many lines {path} has",
            "give me a word and line count for {path}",
        ],
        "vague": ["tell me how long that file is", "count how many words I wrote"],
    },
    "compute_file_checksum": {
        "ask": [
            "get me the {algorithm} hash of {path}",
            "checksum {path}",
            "fingerprint {path} so I can compare it later",
        ],
        "vague": ["make sure a file didn't get corrupted", "help me verify a download"],
    },
    "write_file": {
        "ask": [
            "write {content} into {path}",
            "save {content} to {path}",
            "replace what's in {path} with {content}",
        ],
        "vague": ["save some text for me", "put something in a file"],
    },
    "append_to_file": {
        "ask": [
            "add {content} to the end of {path}",
            "append {content} to {path}",
            "tack {content} onto {path}",
        ],
        "vague": ["add a line to my notes", "add to a file without losing what's there"],
    },
    "replace_in_file": {
        "ask": [
            "replace {search} with {replacement} in {path}",
            "swap every {search} in {path} for {replacement}",
            "change {search} to {replacement} throughout {path}",
        ],
        "vague": ["fix a typo that's all over a file", "update a value in a config"],
    },
    "search_file_contents": {
        "ask": [
            "grep for {pattern} in {path}",
            "find the lines mentioning {pattern} in {path}",
            "show me where {pattern} shows up in {path}",
            "grep for {pattern}",
            "find every line that mentions {pattern}",
        ],
        "vague": ["find which file mentions this", "look for where something is written"],
    },
    "compare_files": {
        "ask": [
            "diff {path_a} against {path_b}",
            "show me what changed between {path_a} and {path_b}",
            "tell me how {path_a} differs from {path_b}",
        ],
        "vague": ["check whether these two files are the same", "show me what's different between the versions"],
    },
    "sort_file_lines": {
        "ask": [
            "sort {path}",
            "sort the lines of {path} and save the result as {output_path}",
            "put {path} in order by column {key_field}",
        ],
        "vague": ["put this list in order", "sort out a jumbled file"],
    },
    "unique_file_lines": {
        "ask": [
            "collapse repeated lines in {path}",
            "show me {path} without the back-to-back duplicates",
            "dedupe {path}",
        ],
        "vague": ["clean the repeats out of my list", "get rid of duplicate lines"],
    },
    "cut_file_columns": {
        "ask": [
            "pull columns {fields} out of {path}",
            "extract columns {fields} from {path}, using {delimiter} as the separator",
            "give me only columns {fields} of {path}",
        ],
        "vague": ["pull a couple of columns from a CSV", "give me just part of this spreadsheet"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["list_directory", "move_files_by_pattern"],
     "ask": ["tidy up {source_directory} by moving all the {pattern} files into {destination_directory}",
             "see what's cluttering {source_directory} and sweep the {pattern} files into {destination_directory}"]},
    {"tools": ["create_file_archive", "list_file_archive"],
     "ask": ["zip up {sources} into {archive_path} and show me what ended up inside",
             "pack {sources} into {archive_path} and check nothing was left out"]},
    {"tools": ["copy_path", "compute_file_checksum"],
     "ask": ["back up {source} to {destination} and make sure the copy is identical",
             "copy {source} over to {destination} and confirm nothing got corrupted on the way"]},
    {"tools": ["get_disk_usage", "delete_path"],
     "ask": ["find whatever is hogging the space in {path} and delete it",
             "free up room in {path} by removing the biggest thing in it"]},
    {"tools": ["search_file_contents", "replace_in_file"],
     "ask": ["find where {search} is used under {path} and change it to {replacement}",
             "track down the file that still says {search} and swap it for {replacement}"]},
    {"tools": ["make_directory", "extract_file_archive"],
     "ask": ["make a new folder at {destination} and unpack {archive_path} into it",
             "unzip {archive_path} into a fresh folder of its own"]},
    {"tools": ["find_files", "read_file_tail"],
     "ask": ["find the log matching {name_pattern} under {path} and show me its last lines",
             "track down the {name_pattern} file somewhere in {path} and show me how it ends"]},
    {"tools": ["switch_shell_user", "change_file_permissions"],
     "ask": ["log in as {username} — their password is {password} — and set {path} to {mode}",
             "become {username} and change the permissions on {path} to {mode}"]},
    {"tools": ["sort_file_lines", "unique_file_lines"],
     "ask": ["sort {path} and show me which lines appear more than once",
             "put {path} in order and collapse the duplicates"]},
]
