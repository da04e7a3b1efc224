"""Issue-tracker records, the session state and the shared rules (workflow, membership, estimates,
sprints).

The workflow and the sprint lifecycle live here so every tool enforces them the same way and each
refusal names the rule and the allowed alternatives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal

from servers.kit import Cell, Counters, State, Table, ToolError, iso, require, today

IssueType = Literal["bug", "story", "task", "epic"]
Priority = Literal["lowest", "low", "medium", "high", "highest"]
Status = Literal["todo", "in_progress", "in_review", "done", "blocked"]
LinkType = Literal["blocks", "is_blocked_by", "relates_to"]

STATUSES: tuple[str, ...] = ("todo", "in_progress", "in_review", "blocked", "done")
WORKFLOW: dict[str, tuple[str, ...]] = {
    "todo": ("in_progress", "blocked"),
    "in_progress": ("in_review", "todo", "blocked"),
    "in_review": ("done", "in_progress"),
    "blocked": ("todo", "in_progress"),
    "done": ("todo",),
}
"""The project workflow: the statuses each status may move to (done → todo reopens)."""
PRIORITIES: tuple[str, ...] = ("lowest", "low", "medium", "high", "highest")
POINT_SCALE: tuple[int, ...] = (0, 1, 2, 3, 5, 8, 13, 21)
"""The teams' story-point scale (modified Fibonacci); anything bigger must be split."""
MAX_DAILY_MINUTES = 24 * 60


@dataclass
class Member:
    username: str
    name: str
    email: str
    title: str


@dataclass
class Project:
    key: str
    name: str
    description: str
    lead: str
    members: list[str]
    components: list[str]
    next_number: int
    created_at: str


@dataclass
class Issue:
    key: str
    project_key: str
    number: int
    issue_type: str
    title: str
    description: str | None
    status: str
    priority: str
    assignee: str | None
    reporter: str
    labels: list[str]
    components: list[str]
    story_points: int | None
    sprint_id: str | None  # None: in the backlog
    created_at: str
    updated_at: str
    resolved_at: str | None = None
    watchers: list[str] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    blocked_by: list[str] = field(default_factory=list)
    relates_to: list[str] = field(default_factory=list)


@dataclass
class Sprint:
    sprint_id: str
    project_key: str
    name: str
    goal: str | None
    state: str  # planned | active | closed
    start_date: str
    end_date: str
    duration_days: int
    started_at: str | None = None
    closed_at: str | None = None
    closed_by: str | None = None  # a username, or "schedule" when the end date passed
    committed_points: int | None = None
    completed_points: int | None = None
    completed_issues: list[str] = field(default_factory=list)
    carried_over: list[str] = field(default_factory=list)
    carried_to: str | None = None  # a sprint id or "backlog"


@dataclass
class Comment:
    comment_id: str
    issue_key: str
    author: str
    body: str
    created_at: str


@dataclass
class Worklog:
    worklog_id: str
    issue_key: str
    author: str
    minutes: int
    work_date: str
    note: str | None
    created_at: str


@dataclass
class Session:
    current_user: str  # whom the API acts as (comments, worklogs, permission checks)


class TrackerState(State):
    members: Table[Member]
    projects: Table[Project]
    issues: Table[Issue]
    sprints: Table[Sprint]
    comments: Table[Comment]
    worklogs: Table[Worklog]
    session: Cell[Session]
    counters: Cell[Counters]


# ---------------------------------------------------------------- lookups
def me(s: TrackerState) -> str:
    return s.session.get().current_user


def get_project(s: TrackerState, key: str, field: str = "project_key") -> Project:
    return require(s.projects, key.strip().upper(), field, what="project_key", shown=key,
                   hint=f"; projects: {', '.join(s.projects.keys())}")


def get_issue(s: TrackerState, key: str, field: str = "issue_key") -> Issue:
    return require(s.issues, key.strip().upper(), field, what="issue_key", shown=key)


def get_sprint(s: TrackerState, sprint_id: str, field: str = "sprint_id") -> Sprint:
    return require(s.sprints, sprint_id.strip().upper(), field, what="sprint_id", shown=sprint_id)


def get_member(s: TrackerState, username: str, field: str) -> Member:
    return require(s.members, username.strip().lower(), field, what="user", shown=username)


def need_project_member(s: TrackerState, project: Project, username: str, field: str) -> Member:
    user = get_member(s, username, field)
    if user.username not in project.members:
        raise ToolError(f"{user.name} ({user.username}) is not a member of project {project.key}; assign a member "
                        f"or have the project lead add them first (members: {', '.join(project.members)})",
                        field=field, code="not_a_member")
    return user


def check_points(issue_type: str, points: int, field: str = "story_points") -> None:
    if issue_type == "epic":
        raise ToolError("epics are not estimated; estimate their stories instead", field=field, code="estimate")
    if points > POINT_SCALE[-1]:
        raise ToolError(f"estimate {points} is out of range: the largest estimate is {POINT_SCALE[-1]} points; split "
                        "the work into smaller issues", field=field, code="estimate_out_of_range")
    if points not in POINT_SCALE:
        raise ToolError(f"estimate {points} is not on the story-point scale {', '.join(map(str, POINT_SCALE))}",
                        field=field, code="estimate_out_of_range")


def check_components(project: Project, components: list[str], field: str = "components") -> list[str]:
    out: list[str] = []
    for c in components:
        name = c.strip().lower()
        if name not in project.components:
            raise ToolError(f"unknown component '{c}' in project {project.key}; components: "
                            f"{', '.join(project.components)}", field=field, code="not_found")
        if name not in out:
            out.append(name)
    return out


def clean_labels(labels: list[str]) -> list[str]:
    out: list[str] = []
    for label in labels:
        tag = "-".join(label.strip().lower().split())
        if not tag:
            raise ToolError("labels must not be blank", field="labels")
        if tag not in out:
            out.append(tag)
    return out


def open_blockers(s: TrackerState, issue: Issue) -> list[Issue]:
    return [b for k in issue.blocked_by if (b := s.issues.get(k)) is not None and b.status != "done"]


def active_sprint(s: TrackerState, project_key: str) -> Sprint | None:
    return next((sp for sp in s.sprints.values() if sp.project_key == project_key and sp.state == "active"), None)


def sprint_issues(s: TrackerState, sprint_id: str) -> list[Issue]:
    return [i for i in s.issues.values() if i.sprint_id == sprint_id]


def points(issues: list[Issue]) -> int:
    return sum(i.story_points or 0 for i in issues)


# ---------------------------------------------------------------- sprint lifecycle
def close_sprint(s: TrackerState, sprint_id: str, target: str, stamp: str, by: str) -> dict[str, Any]:
    """Close an active sprint: done issues stay in it, the rest move to ``target`` (a planned sprint id or
    "backlog"). Used by close_project_sprint and by the clock when an end date passes."""
    issues = sprint_issues(s, sprint_id)
    done = [i.key for i in issues if i.status == "done"]
    carried = [i.key for i in issues if i.status != "done"]
    for key in carried:
        rec = s.issues.edit(key)
        rec.sprint_id = None if target == "backlog" else target
        rec.updated_at = stamp
    sp = s.sprints.edit(sprint_id)
    sp.state, sp.closed_at, sp.closed_by = "closed", stamp, by
    sp.completed_issues, sp.carried_over, sp.carried_to = done, carried, target
    sp.completed_points = points([i for i in issues if i.status == "done"])
    return {"completed_issues": done, "carried_over": carried, "carried_to": target,
            "completed_points": sp.completed_points}


def next_planned(s: TrackerState, project_key: str, exclude: str | None = None) -> Sprint | None:
    planned = [sp for sp in s.sprints.values() if sp.project_key == project_key and sp.state == "planned"
               and sp.sprint_id != exclude]
    return min(planned, key=lambda sp: (sp.start_date, sp.sprint_id), default=None)


def on_time(s: TrackerState, before: datetime, after: datetime) -> None:
    """Sprints run on a cadence: an active sprint whose end date has passed closes by itself, its
    unfinished issues rolling over to the project's next planned sprint (else the backlog)."""
    day = after.date().isoformat()
    due = [sp.sprint_id for sp in s.sprints.values() if sp.state == "active" and sp.end_date < day]
    for sprint_id in due:
        sp = s.sprints[sprint_id]
        nxt = next_planned(s, sp.project_key)
        end = datetime.fromisoformat(sp.end_date).replace(hour=23, minute=59, tzinfo=after.tzinfo)
        close_sprint(s, sprint_id, nxt.sprint_id if nxt else "backlog", iso(min(end, after)), "schedule")


# ---------------------------------------------------------------- views
def days_left(s: TrackerState, sp: Sprint) -> int | None:
    if sp.state != "active":
        return None
    return (date.fromisoformat(sp.end_date) - today(s)).days


def issue_row(s: TrackerState, i: Issue) -> dict[str, Any]:
    return {
        "key": i.key, "type": i.issue_type, "title": i.title, "status": i.status, "priority": i.priority,
        "assignee": i.assignee, "story_points": i.story_points, "sprint_id": i.sprint_id,
        "labels": list(i.labels), "components": list(i.components), "blocked_by_open": [b.key for b in open_blockers(s, i)],
        "updated_at": i.updated_at,
    }


def issue_view(s: TrackerState, i: Issue) -> dict[str, Any]:
    sprint = s.sprints.get(i.sprint_id) if i.sprint_id else None
    logs = [w for w in s.worklogs.values() if w.issue_key == i.key]
    return {
        **issue_row(s, i), "project_key": i.project_key, "description": i.description, "reporter": i.reporter,
        "sprint_name": sprint.name if sprint else None, "created_at": i.created_at, "resolved_at": i.resolved_at,
        "allowed_transitions": list(WORKFLOW[i.status]), "watchers": list(i.watchers),
        "links": {"blocks": list(i.blocks), "is_blocked_by": list(i.blocked_by), "relates_to": list(i.relates_to)},
        "time_spent_minutes": sum(w.minutes for w in logs),
        "comments": [{"comment_id": c.comment_id, "author": c.author, "body": c.body, "created_at": c.created_at}
                     for c in s.comments.values() if c.issue_key == i.key],
        "worklogs": [{"worklog_id": w.worklog_id, "author": w.author, "minutes": w.minutes, "work_date": w.work_date,
                      "note": w.note} for w in logs],
    }


def sprint_view(s: TrackerState, sp: Sprint) -> dict[str, Any]:
    issues = sprint_issues(s, sp.sprint_id)
    return {
        "sprint_id": sp.sprint_id, "project_key": sp.project_key, "name": sp.name, "goal": sp.goal,
        "state": sp.state, "start_date": sp.start_date, "end_date": sp.end_date, "days_left": days_left(s, sp),
        "issue_count": len(issues), "points": points(issues),
        "done_points": points([i for i in issues if i.status == "done"]),
        "started_at": sp.started_at, "closed_at": sp.closed_at, "closed_by": sp.closed_by,
        "committed_points": sp.committed_points, "completed_points": sp.completed_points,
        "carried_over": list(sp.carried_over), "carried_to": sp.carried_to,
    }


def sprint_dates(start: date, days: int) -> tuple[str, str]:
    return iso(start), iso(start + timedelta(days=days - 1))
