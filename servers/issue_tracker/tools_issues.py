"""Issue-tracker tools for projects and issues: browse, search, read, create, edit, and project
membership."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.issue_tracker.state import (
    PRIORITIES,
    Issue,
    IssueType,
    Priority,
    TrackerState,
    active_sprint,
    check_components,
    check_points,
    clean_labels,
    get_issue,
    get_member,
    get_project,
    get_sprint,
    issue_row,
    issue_view,
    me,
    need_project_member,
)
from servers.kit import Name, Text, ToolError, iso, now, tool

Limit = Annotated[int, Field(ge=1, le=100)]
Offset = Annotated[int, Field(ge=0, le=10_000)]
Points = Annotated[int, Field(ge=0, le=100)]
Labels = Annotated[list[str], Field(max_length=10)]


@tool(produces=("project_key", "sprint_id"), read_only=True)
def list_tracker_projects(s: TrackerState) -> list:
    """List the projects in the issue tracker with their key (the prefix of issue keys, e.g. PAY), lead,
    members, components, open issue count and current sprint, and whether you lead them."""
    user = me(s)
    out = []
    for p in s.projects.values():
        issues = [i for i in s.issues.values() if i.project_key == p.key]
        sprint = active_sprint(s, p.key)
        out.append({
            "project_key": p.key, "name": p.name, "description": p.description, "lead": p.lead,
            "you_are_lead": p.lead == user, "members": list(p.members), "components": list(p.components),
            "open_issues": sum(1 for i in issues if i.status != "done"),
            "backlog_issues": sum(1 for i in issues if i.sprint_id is None and i.status != "done"),
            "active_sprint": None if sprint is None else {"sprint_id": sprint.sprint_id, "name": sprint.name,
                                                          "end_date": sprint.end_date},
        })
    return out


@tool(produces=("issue_key",), consumes=("project_key", "sprint_id"), read_only=True)
def search_project_issues(s: TrackerState, project_key: str | None = None,
                          status: Literal["todo", "in_progress", "in_review", "done", "blocked", "open"] | None = None,
                          assignee: str | None = None, unassigned_only: bool = False,
                          issue_type: IssueType | None = None, priority: Priority | None = None,
                          label: str | None = None, component: str | None = None, sprint_id: str | None = None,
                          backlog_only: bool = False, query: str | None = None,
                          sort_by: Literal["priority", "updated_at", "created_at", "key"] = "priority",
                          limit: Limit = 20, offset: Offset = 0) -> dict:
    """Search issues across projects by status, assignee, type, priority, label, component, sprint or
    text in the title, and sort and page through them.

    Args:
        project_key: Only issues of this project (e.g. PAY).
        status: Only issues in this status; "open" means anything not done.
        assignee: Only issues assigned to this username ("me" for yourself).
        unassigned_only: Only issues nobody is assigned to.
        issue_type: Only issues of this type.
        priority: Only issues with this priority.
        label: Only issues carrying this label.
        component: Only issues in this component.
        sprint_id: Only issues in this sprint (SPR-…).
        backlog_only: Only issues in the backlog (not in any sprint).
        query: Case-insensitive text in the title or the issue key.
        sort_by: priority (highest first), updated_at or created_at (newest first) or key (by number).
        limit: How many issues to return.
        offset: How many matching issues to skip (for the next page).
    """
    project = get_project(s, project_key) if project_key is not None else None
    who = None
    if assignee is not None:
        who = me(s) if assignee.strip().lower() == "me" else get_member(s, assignee, "assignee").username
        if unassigned_only:
            raise ToolError("give either assignee or unassigned_only, not both", field="unassigned_only")
    sprint = get_sprint(s, sprint_id) if sprint_id is not None else None
    if sprint is not None and backlog_only:
        raise ToolError("give either sprint_id or backlog_only, not both", field="backlog_only")
    needle = (query or "").strip().lower()
    tag = "-".join((label or "").strip().lower().split())
    rows: list[Issue] = []
    for i in s.issues.values():
        if project is not None and i.project_key != project.key:
            continue
        if (status == "open" and i.status == "done") or (status not in (None, "open") and i.status != status):
            continue
        if (who is not None and i.assignee != who) or (unassigned_only and i.assignee is not None):
            continue
        if (issue_type is not None and i.issue_type != issue_type) or (priority is not None and i.priority != priority):
            continue
        if label is not None and tag not in i.labels:
            continue
        if component is not None and component.strip().lower() not in i.components:
            continue
        if (sprint is not None and i.sprint_id != sprint.sprint_id) or (backlog_only and i.sprint_id is not None):
            continue
        if needle and needle not in i.title.lower() and needle != i.key.lower():
            continue
        rows.append(i)
    if sort_by == "priority":
        rows.sort(key=lambda i: (-PRIORITIES.index(i.priority), i.project_key, i.number))
    elif sort_by in ("updated_at", "created_at"):
        rows.sort(key=lambda i: (getattr(i, sort_by), i.key), reverse=True)
    else:
        rows.sort(key=lambda i: (i.project_key, i.number))
    page = rows[offset:offset + limit]
    return {"total": len(rows), "offset": offset, "returned": len(page), "issues": [issue_row(s, i) for i in page]}


@tool(consumes=("issue_key",), read_only=True)
def get_issue_details(s: TrackerState, issue_key: str) -> dict:
    """Get everything about one issue: description, status and the statuses it may move to next,
    assignee, reporter, estimate, sprint, links (blocks / is blocked by / relates to), watchers, comments
    and logged work.

    Args:
        issue_key: The issue key, e.g. PAY-12.
    """
    return issue_view(s, get_issue(s, issue_key))


@tool(produces=("issue_key",), consumes=("project_key", "username"))
def create_project_issue(s: TrackerState, project_key: str, issue_type: IssueType, title: Name,
                         priority: Priority = "medium", description: Text | None = None,
                         assignee: str | None = None, labels: Labels | None = None,
                         components: Labels | None = None, story_points: Points | None = None) -> dict:
    """File a new issue in a project's backlog (status todo), reported by you. The assignee must be a
    member of the project, components must be the project's own, and estimates use the team's
    story-point scale (0, 1, 2, 3, 5, 8, 13, 21; epics are not estimated).

    Args:
        project_key: The project (e.g. PAY).
        issue_type: bug, story, task or epic.
        title: A one-line summary.
        priority: How urgent it is.
        description: Details, steps to reproduce, acceptance criteria.
        assignee: Username of the project member who should work on it ("me" for yourself).
        labels: Free-form tags, e.g. ["regression"].
        components: Parts of the project it touches, from the project's component list.
        story_points: Estimate in story points.
    """
    project = get_project(s, project_key)
    user = me(s)
    who = None
    if assignee is not None:
        who = need_project_member(s, project, user if assignee.strip().lower() == "me" else assignee,
                                  "assignee").username
    comps = check_components(project, components or [])
    if story_points is not None:
        check_points(issue_type, story_points)
    clean = " ".join(title.split())
    if not clean:
        raise ToolError("title must not be blank", field="title")
    number = project.next_number
    s.projects.edit(project.key).next_number = number + 1
    key, stamp = f"{project.key}-{number}", iso(now(s))
    rec = s.issues.put(key, Issue(key, project.key, number, issue_type, clean, description, "todo", priority, who,
                                  user, clean_labels(labels or []), comps, story_points, None, stamp, stamp,
                                  watchers=sorted({user, *([who] if who else [])})))
    return issue_view(s, rec)


@tool(consumes=("issue_key",))
def update_issue_fields(s: TrackerState, issue_key: str, title: Name | None = None, description: Text | None = None,
                        priority: Priority | None = None, labels: Labels | None = None,
                        components: Labels | None = None) -> dict:
    """Edit an issue's title, description, priority, labels or components (labels and components
    replace the current lists; components must be the project's own). Status, assignee, estimate and
    sprint have their own tools.

    Args:
        issue_key: The issue key, e.g. PAY-12.
        title: New one-line summary.
        description: New description.
        priority: New priority.
        labels: The new full list of labels (an empty list removes them all).
        components: The new full list of components.
    """
    issue = get_issue(s, issue_key)
    if title is None and description is None and priority is None and labels is None and components is None:
        raise ToolError("nothing to change: give a title, description, priority, labels or components",
                        field="issue_key")
    comps = check_components(s.projects[issue.project_key], components) if components is not None else None
    changed: list[str] = []
    rec = s.issues.edit(issue.key)
    if title is not None and " ".join(title.split()) != rec.title:
        rec.title = " ".join(title.split())
        changed.append("title")
    if description is not None and description != rec.description:
        rec.description = description
        changed.append("description")
    if priority is not None and priority != rec.priority:
        rec.priority = priority
        changed.append("priority")
    if labels is not None and clean_labels(labels) != rec.labels:
        rec.labels = clean_labels(labels)
        changed.append("labels")
    if comps is not None and comps != rec.components:
        rec.components = comps
        changed.append("components")
    if not changed:
        raise ToolError(f"{issue.key} already has those values; nothing changed", field="issue_key",
                        code="no_change")
    rec.updated_at = iso(now(s))
    return {**issue_row(s, rec), "changed": changed}


@tool(consumes=("project_key", "username"), establishes=("project_member",))
def add_project_member(s: TrackerState, project_key: str, username: str) -> dict:
    """Add a person to a project's team so issues can be assigned to them. Only the project's lead may
    add members.

    Args:
        project_key: The project (e.g. PAY).
        username: The person's username, e.g. maria.lopez.
    """
    project = get_project(s, project_key)
    user = get_member(s, username, "username")
    if project.lead != me(s):
        lead = s.members[project.lead]
        raise ToolError(f"only the project lead {lead.name} ({lead.username}) can add members to {project.key}",
                        field="project_key", code="permission")
    if user.username in project.members:
        raise ToolError(f"{user.username} is already a member of {project.key}", field="username", code="no_change")
    rec = s.projects.edit(project.key)
    rec.members = sorted([*rec.members, user.username])
    return {"project_key": project.key, "added": user.username, "name": user.name, "members": list(rec.members)}

