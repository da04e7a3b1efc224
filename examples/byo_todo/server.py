"""A to-do list as an MCP server, written with the official SDK: the README's worked example of
training on your own server (``python -m prove_jax.byo check examples/byo_todo/todo.yaml``).

Its state is ``tasks.json`` in the working directory, which the pool makes each session's private
copy of ``fixture/tasks.json``.
"""

import json
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

STATE = Path("tasks.json")  # relative: the session directory (the server runs there)
server = MCPServer("todo")


def load() -> list[dict]:
    return json.loads(STATE.read_text())


def save(tasks: list[dict]) -> None:
    STATE.write_text(json.dumps(tasks, indent=1))


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_tasks(only_open: bool = False) -> str:
    """The tasks on the list, with their ids."""
    return json.dumps([t for t in load() if not (only_open and t["done"])])


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def add_task(title: str) -> str:
    """Put a new task on the list."""
    tasks = load()
    task = {"id": f"t{len(tasks) + 1}", "title": title, "done": False}
    save([*tasks, task])
    return json.dumps(task)


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def complete_task(task_id: str) -> str:
    """Mark a task as done."""
    tasks = load()
    for t in tasks:
        if t["id"] == task_id:
            if t["done"]:
                raise ToolError(f"task {task_id} is already done")
            t["done"] = True
            save(tasks)
            return json.dumps(t)
    raise ToolError(f"no task has the id {task_id!r}; list_tasks gives the ids")


if __name__ == "__main__":
    server.run()  # stdio
