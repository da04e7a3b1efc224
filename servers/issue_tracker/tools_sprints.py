"""Issue-tracker tools for sprints: plan them, fill them from the backlog, start them, read the board
and close them (unfinished work rolls over)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.issue_tracker.state import (
    STATUSES,
    Sprint,
    TrackerState,
    active_sprint,
    close_sprint,
    get_issue,
    get_project,
    get_sprint,
    issue_row,
    me,
    open_blockers,
    points,
    sprint_dates,
    sprint_issues,
    sprint_view,
)
from servers.kit import IsoDate, Name, Text, ToolError, iso, new_id, now, parse_date, today, tool

Weeks = Annotated[int, Field(ge=1, le=4)]
IssueKeys = Annotated[list[str], Field(min_length=1, max_length=25)]


@tool(produces=("sprint_id",), consumes=("project_key",), read_only=True)
def list_project_sprints(s: TrackerState, project_key: str,
                         state: Literal["planned", "active", "closed"] | None = None) -> list:
    """List a project's sprints, oldest first, with dates, state, days left, issue count and points
    (committed and completed for closed sprints).

    Args:
        project_key: The project (e.g. PAY).
        state: Only sprints in this state.
    """
    project = get_project(s, project_key)
    rows = [sp for sp in s.sprints.values() if sp.project_key == project.key and (state is None or sp.state == state)]
    rows.sort(key=lambda sp: (sp.start_date, sp.sprint_id))
    return [sprint_view(s, sp) for sp in rows]


@tool(produces=("sprint_id",), consumes=("project_key",), establishes=("sprint_planned",))
def create_project_sprint(s: TrackerState, project_key: str, name: Name, start_date: IsoDate,
                          duration_weeks: Weeks = 2, goal: Text | None = None) -> dict:
    """Plan a new sprint for a project. It starts today or later, lasts 1–4 weeks, and its name must be
    new in the project. Fill it with add_issues_to_sprint and start it with start_project_sprint.

    Args:
        project_key: The project (e.g. PAY).
        name: The sprint's name, e.g. "PAY Sprint 9".
        start_date: Planned first day (YYYY-MM-DD).
        duration_weeks: Length in weeks.
        goal: What the sprint should achieve.
    """
    project = get_project(s, project_key)
    clean = " ".join(name.split())
    if any(sp.project_key == project.key and sp.name.lower() == clean.lower() for sp in s.sprints.values()):
        raise ToolError(f"project {project.key} already has a sprint named '{clean}'", field="name", code="duplicate")
    start = parse_date(start_date, "start_date")
    if start < today(s):
        raise ToolError(f"start_date {start_date} is in the past (today is {iso(today(s))})", field="start_date",
                        code="date_in_past")
    a, b = sprint_dates(start, 7 * duration_weeks)
    sid = new_id(s.counters, "SPR")
    sp = s.sprints.put(sid, Sprint(sid, project.key, clean, goal, "planned", a, b, 7 * duration_weeks))
    return sprint_view(s, sp)


@tool(consumes=("sprint_id", "issue_key"), requires=("sprint_planned",), establishes=("sprint_has_issues",))
def add_issues_to_sprint(s: TrackerState, sprint_id: str, issue_keys: IssueKeys) -> dict:
    """Move issues of the sprint's project into a planned or active sprint (from the backlog or another
    sprint). Done issues, epics and issues of other projects cannot be added, nor anything to a closed
    sprint.

    Args:
        sprint_id: The sprint (SPR-…).
        issue_keys: The issues to add, e.g. ["PAY-12", "PAY-15"].
    """
    sp = get_sprint(s, sprint_id)
    if sp.state == "closed":
        raise ToolError(f"sprint {sp.name} ({sp.sprint_id}) is closed; add the issues to a planned or active sprint",
                        field="sprint_id", code="sprint_closed")
    issues = []
    for key in issue_keys:
        issue = get_issue(s, key, "issue_keys")
        if issue.project_key != sp.project_key:
            raise ToolError(f"{issue.key} belongs to project {issue.project_key}, not {sp.project_key}",
                            field="issue_keys", code="mismatch")
        if issue.status == "done":
            raise ToolError(f"{issue.key} is already done; only unfinished issues can be added to a sprint",
                            field="issue_keys", code="illegal_state")
        if issue.issue_type == "epic":
            raise ToolError(f"{issue.key} is an epic; epics span sprints — add its stories instead",
                            field="issue_keys", code="illegal_state")
        if issue.sprint_id == sp.sprint_id:
            raise ToolError(f"{issue.key} is already in {sp.name}", field="issue_keys", code="no_change")
        if issue in issues:
            raise ToolError(f"{issue.key} is listed twice", field="issue_keys")
        issues.append(issue)
    stamp = iso(now(s))
    moved = []
    for issue in issues:
        moved.append({"issue_key": issue.key, "from": issue.sprint_id or "backlog"})
        rec = s.issues.edit(issue.key)
        rec.sprint_id, rec.updated_at = sp.sprint_id, stamp
    return {**sprint_view(s, sp), "added": moved}


@tool(consumes=("issue_key",))
def remove_issue_from_sprint(s: TrackerState, issue_key: str) -> dict:
    """Take an unfinished issue out of its planned or active sprint and put it back in the backlog.

    Args:
        issue_key: The issue key, e.g. PAY-12.
    """
    issue = get_issue(s, issue_key)
    if issue.sprint_id is None:
        raise ToolError(f"{issue.key} is not in a sprint (it is in the backlog)", field="issue_key", code="no_change")
    sp = s.sprints[issue.sprint_id]
    if sp.state == "closed":
        raise ToolError(f"{issue.key} belongs to closed sprint {sp.name}; closed sprints keep their history",
                        field="issue_key", code="sprint_closed")
    if issue.status == "done":
        raise ToolError(f"{issue.key} is done and counts toward {sp.name}; it stays in the sprint",
                        field="issue_key", code="illegal_state")
    rec = s.issues.edit(issue.key)
    rec.sprint_id, rec.updated_at = None, iso(now(s))
    return {**issue_row(s, rec), "removed_from": sp.sprint_id}


@tool(consumes=("sprint_id",), requires=("sprint_has_issues",), establishes=("sprint_active",))
def start_project_sprint(s: TrackerState, sprint_id: str) -> dict:
    """Start a planned sprint today; it ends after its planned length. A project runs one sprint at a
    time (close the active one first), and an empty sprint cannot start.

    Args:
        sprint_id: The planned sprint (SPR-…).
    """
    sp = get_sprint(s, sprint_id)
    if sp.state != "planned":
        raise ToolError(f"sprint {sp.name} is {sp.state}; only planned sprints can be started", field="sprint_id",
                        code="illegal_transition")
    current = active_sprint(s, sp.project_key)
    if current is not None:
        raise ToolError(f"project {sp.project_key} already has an active sprint, {current.name} "
                        f"({current.sprint_id}, ends {current.end_date}); close it before starting another",
                        field="sprint_id", code="sprint_already_active")
    issues = sprint_issues(s, sp.sprint_id)
    if not issues:
        raise ToolError(f"sprint {sp.name} has no issues; add some first (add_issues_to_sprint)", field="sprint_id",
                        code="empty_sprint")
    rec = s.sprints.edit(sp.sprint_id)
    rec.start_date, rec.end_date = sprint_dates(today(s), rec.duration_days)
    rec.state, rec.started_at, rec.committed_points = "active", iso(now(s)), points(issues)
    view = sprint_view(s, rec)
    view["unestimated_issues"] = [i.key for i in issues if i.story_points is None]
    return view


@tool(consumes=("sprint_id",), requires=("sprint_active",))
def close_project_sprint(s: TrackerState, sprint_id: str, move_unfinished_to: str = "backlog") -> dict:
    """Close the active sprint. Done issues stay with it; unfinished ones move to the backlog or to a
    planned sprint of the same project.

    Args:
        sprint_id: The active sprint (SPR-…).
        move_unfinished_to: "backlog", or the id of a planned sprint of the same project.
    """
    sp = get_sprint(s, sprint_id)
    if sp.state != "active":
        raise ToolError(f"sprint {sp.name} is {sp.state}; only the active sprint can be closed", field="sprint_id",
                        code="illegal_transition")
    target = move_unfinished_to.strip()
    if target.lower() != "backlog":
        nxt = get_sprint(s, target, "move_unfinished_to")
        if nxt.sprint_id == sp.sprint_id or nxt.project_key != sp.project_key or nxt.state != "planned":
            raise ToolError(f"unfinished issues can move only to the backlog or a planned sprint of {sp.project_key}; "
                            f"{nxt.sprint_id} is {nxt.state} in {nxt.project_key}", field="move_unfinished_to",
                            code="illegal_state")
        target = nxt.sprint_id
    else:
        target = "backlog"
    result = close_sprint(s, sp.sprint_id, target, iso(now(s)), me(s))
    return {**sprint_view(s, s.sprints[sp.sprint_id]), **result}


@tool(consumes=("sprint_id",), read_only=True)
def get_sprint_board(s: TrackerState, sprint_id: str) -> dict:
    """Show a sprint's board: its issues in a column per status, points done and remaining, each
    assignee's load, days left and which issues are blocked by open work.

    Args:
        sprint_id: The sprint (SPR-…).
    """
    sp = get_sprint(s, sprint_id)
    issues = sorted(sprint_issues(s, sp.sprint_id), key=lambda i: i.number)
    if sp.state == "closed":  # the closed sprint's record: done issues stayed, the rest rolled over
        issues = [i for k in sp.completed_issues if (i := s.issues.get(k)) is not None]
    columns = {st: [issue_row(s, i) for i in issues if i.status == st] for st in STATUSES}
    load: dict[str, dict[str, int]] = {}
    for i in issues:
        who = i.assignee or "unassigned"
        row = load.setdefault(who, {"issues": 0, "points": 0, "open_points": 0})
        row["issues"] += 1
        row["points"] += i.story_points or 0
        row["open_points"] += 0 if i.status == "done" else i.story_points or 0
    remaining = points([i for i in issues if i.status != "done"])
    return {**sprint_view(s, sp), "columns": columns, "remaining_points": remaining,
            "assignees": dict(sorted(load.items())),
            "blocked_by_open_work": [i.key for i in issues if i.status != "done" and open_blockers(s, i)]}
