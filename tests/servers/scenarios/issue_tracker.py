"""Issue-tracker smoke scenario: a team lead onboards a new teammate, files and refines a story,
starts work on it and logs time, then plans the next sprint around it and rolls the sprint cadence on
(closing the current sprint and starting the new one) — succeeding once with every user tool.

``call(name, args)`` performs a tool call on one session and returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    people = await call("issue_tracker_list_people", {})
    me = people["current_user"]
    projects = await call("list_tracker_projects", {})
    project = next(p for p in projects if p["you_are_lead"])
    key = project["project_key"]
    newcomer = next(p["username"] for p in people["people"] if key not in p["projects"])

    # Onboard a teammate and file a story for them.
    await call("add_project_member", {"project_key": key, "username": newcomer})
    story = await call("create_project_issue", {
        "project_key": key, "issue_type": "story", "title": "As a user I can download my invoices as PDF",
        "assignee": newcomer, "components": [project["components"][0]], "labels": ["customer-reported"],
        "story_points": 3})
    issue = story["key"]
    await call("update_issue_fields", {"issue_key": issue, "priority": "high",
                                       "description": "Acceptance:\n- PDF per invoice\n- totals match the ledger"})
    await call("estimate_issue_story_points", {"issue_key": issue, "story_points": 5})
    await call("add_issue_comment", {"issue_key": issue, "body": f"@{newcomer} I'll pair with you on this one."})
    await call("assign_issue", {"issue_key": issue, "assignee": "me"})
    watcher = next(m for m in project["members"] if m not in (me, newcomer))
    await call("update_issue_watchers", {"issue_key": issue, "action": "watch", "username": watcher})
    backlog = await call("search_project_issues", {"project_key": key, "backlog_only": True, "status": "todo",
                                                   "sort_by": "key", "limit": 100})
    other = next(i for i in backlog["issues"] if i["key"] != issue and i["type"] != "epic")
    await call("link_issues", {"issue_key": issue, "link_type": "relates_to", "other_issue_key": other["key"]})

    # Start work and log time.
    await call("transition_issue_status", {"issue_key": issue, "status": "in_progress"})
    await call("log_issue_work", {"issue_key": issue, "minutes": 90, "note": "Spike on PDF rendering"})
    details = await call("get_issue_details", {"issue_key": issue})
    assert details["status"] == "in_progress" and details["time_spent_minutes"] == 90

    # Plan the next sprint around the story and roll the cadence on.
    sprint = await call("create_project_sprint", {"project_key": key, "name": "Invoices polish",
                                                  "start_date": "2026-06-20", "goal": "PDF invoices"})
    await call("add_issues_to_sprint", {"sprint_id": sprint["sprint_id"], "issue_keys": [issue, other["key"]]})
    await call("remove_issue_from_sprint", {"issue_key": other["key"]})
    sprints = await call("list_project_sprints", {"project_key": key})
    active = next((sp for sp in sprints if sp["state"] == "active"), None)
    if active is not None:
        board = await call("get_sprint_board", {"sprint_id": active["sprint_id"]})
        assert board["issue_count"] >= 3
        await call("close_project_sprint", {"sprint_id": active["sprint_id"],
                                            "move_unfinished_to": sprint["sprint_id"]})
        await call("start_project_sprint", {"sprint_id": sprint["sprint_id"]})
    else:
        await call("start_project_sprint", {"sprint_id": sprint["sprint_id"]})
        await call("get_sprint_board", {"sprint_id": sprint["sprint_id"]})
        await call("close_project_sprint", {"sprint_id": sprint["sprint_id"]})
