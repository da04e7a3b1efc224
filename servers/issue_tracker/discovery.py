"""Issue-tracker discovery tools (hidden from the model): the people (and who "you" are), every
issue and sprint with the attributes people refer to them by, and the values of categorical fields."""

from __future__ import annotations

from typing import Literal

from servers.issue_tracker.state import TrackerState, issue_view, me, open_blockers, sprint_view
from servers.kit import discovery, value_counts


@discovery(produces=("username", "project_key"))
def issue_tracker_list_people(s: TrackerState) -> dict:
    """The current user (whom the API acts as) and every person with title, projects they belong to and
    projects they lead."""
    people = []
    for m in s.members.values():
        people.append({
            "username": m.username, "name": m.name, "email": m.email, "title": m.title,
            "projects": [p.key for p in s.projects.values() if m.username in p.members],
            "leads": [p.key for p in s.projects.values() if p.lead == m.username],
            "open_assigned": sum(1 for i in s.issues.values() if i.assignee == m.username and i.status != "done"),
        })
    return {"current_user": me(s), "people": people}


@discovery(produces=("issue_key",))
def issue_tracker_list_issues(s: TrackerState, project_key: str | None = None) -> list:
    """Every issue in full (type, title, status, allowed transitions, assignee, estimate, sprint, links
    and open blockers, watchers), optionally of one project.

    Args:
        project_key: Only issues of this project.
    """
    rows = []
    for i in s.issues.values():
        if project_key is not None and i.project_key != project_key.upper():
            continue
        view = issue_view(s, i)
        view.pop("comments")
        view.pop("worklogs")
        view["open_blockers"] = [b.key for b in open_blockers(s, i)]
        rows.append(view)
    return rows


@discovery(produces=("sprint_id",))
def issue_tracker_list_sprints(s: TrackerState) -> list:
    """Every sprint of every project with state, dates and points."""
    return [sprint_view(s, sp) for sp in s.sprints.values()]


@discovery
def issue_tracker_get_unique_values(s: TrackerState, field: Literal["status", "issue_type", "priority", "label",
                                                                    "component", "assignee", "sprint_state",
                                                                    "title"]) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    issues = list(s.issues.values())
    values = {
        "status": lambda: [i.status for i in issues],
        "issue_type": lambda: [i.issue_type for i in issues],
        "priority": lambda: [i.priority for i in issues],
        "label": lambda: [lb for i in issues for lb in i.labels],
        "component": lambda: [c for i in issues for c in i.components],
        "assignee": lambda: [i.assignee or "unassigned" for i in issues],
        "sprint_state": lambda: [sp.state for sp in s.sprints.values()],
        "title": lambda: [m.title for m in s.members.values()],
    }[field]()
    return value_counts(values)
