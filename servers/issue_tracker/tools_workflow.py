"""Issue-tracker tools for working an issue: workflow transitions, assignment, estimates, comments,
links, watchers and logged work."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field

from servers.issue_tracker.state import (
    MAX_DAILY_MINUTES,
    WORKFLOW,
    Comment,
    LinkType,
    Status,
    TrackerState,
    Worklog,
    check_points,
    get_issue,
    get_member,
    issue_row,
    me,
    need_project_member,
    open_blockers,
)
from servers.kit import IsoDate, Text, ToolError, iso, new_id, now, parse_date, today, tool

Points = Annotated[int, Field(ge=0, le=100)]
Minutes = Annotated[int, Field(ge=1, le=MAX_DAILY_MINUTES)]
_MENTION = re.compile(r"@([a-z0-9]+(?:[._-][a-z0-9]+)*)")


def _touch(s: TrackerState, key: str) -> None:
    s.issues.edit(key).updated_at = iso(now(s))


@tool(consumes=("issue_key",), requires=("issue_assigned",), establishes=("issue_done",))
def transition_issue_status(s: TrackerState, issue_key: str, status: Status, comment: Text | None = None) -> dict:
    """Move an issue through the workflow: todo → in_progress → in_review → done, with blocked reachable
    from todo and in_progress (and back), in_review back to in_progress, and done back to todo (reopen).
    Work can start only on an assigned issue, and an issue cannot be done while an issue blocking it is
    still open. Illegal moves are refused with the allowed ones.

    Args:
        issue_key: The issue key, e.g. PAY-12.
        status: The status to move to.
        comment: A comment to add with the change (e.g. why it is blocked).
    """
    issue = get_issue(s, issue_key)
    if issue.status == status:
        raise ToolError(f"{issue.key} is already {status}", field="status", code="illegal_transition")
    allowed = WORKFLOW[issue.status]
    if status not in allowed:
        raise ToolError(f"illegal transition {issue.status} → {status} for {issue.key}; from {issue.status} the "
                        f"allowed statuses are: {', '.join(allowed)}", field="status", code="illegal_transition")
    if status == "in_progress" and issue.assignee is None:
        raise ToolError(f"{issue.key} is unassigned: assign it before starting work (assign_issue)", field="status",
                        code="unassigned")
    if status == "done":
        blockers = open_blockers(s, issue)
        if blockers:
            what = ", ".join(f"{b.key} ({b.status})" for b in blockers)
            raise ToolError(f"{issue.key} cannot be done: it is blocked by open issue(s) {what}; finish those or "
                            "remove the link first", field="status", code="blocked")
    stamp = iso(now(s))
    rec = s.issues.edit(issue.key)
    previous = rec.status
    rec.status, rec.updated_at = status, stamp
    moved_to_backlog = False
    if status == "done":
        rec.resolved_at = stamp
    elif previous == "done":
        rec.resolved_at = None
        sprint = s.sprints.get(rec.sprint_id) if rec.sprint_id else None
        if sprint is not None and sprint.state == "closed":  # reopened work goes back to the backlog
            rec.sprint_id, moved_to_backlog = None, True
    out = {**issue_row(s, rec), "previous_status": previous, "allowed_transitions": list(WORKFLOW[status])}
    if moved_to_backlog:
        out["moved_to_backlog"] = True
    if comment is not None and comment.strip():
        cid = new_id(s.counters, "CMT", 5)
        s.comments.put(cid, Comment(cid, rec.key, me(s), comment.strip(), stamp))
        out["comment_id"] = cid
    return out


@tool(consumes=("issue_key", "username"), establishes=("issue_assigned",))
def assign_issue(s: TrackerState, issue_key: str, assignee: str | None = None, unassign: bool = False) -> dict:
    """Assign an issue to a member of its project (or to yourself with "me"), or take the assignee off it.
    Non-members cannot be assigned; an issue that is in progress or in review cannot be left unassigned.

    Args:
        issue_key: The issue key, e.g. PAY-12.
        assignee: Username of the project member to assign, or "me".
        unassign: true to remove the current assignee instead.
    """
    issue = get_issue(s, issue_key)
    if (assignee is None) == (not unassign):
        raise ToolError("give either an assignee or unassign=true", field="assignee")
    rec_before = issue.assignee
    if unassign:
        if issue.assignee is None:
            raise ToolError(f"{issue.key} is not assigned to anyone", field="unassign", code="no_change")
        if issue.status in ("in_progress", "in_review"):
            raise ToolError(f"{issue.key} is {issue.status}: it needs an assignee; move it back to todo first",
                            field="unassign", code="illegal_state")
        who = None
    else:
        name = me(s) if (assignee or "").strip().lower() == "me" else assignee or ""
        who = need_project_member(s, s.projects[issue.project_key], name, "assignee").username
        if issue.assignee == who:
            raise ToolError(f"{issue.key} is already assigned to {who}", field="assignee", code="no_change")
    rec = s.issues.edit(issue.key)
    rec.assignee, rec.updated_at = who, iso(now(s))
    if who is not None and who not in rec.watchers:
        rec.watchers = sorted([*rec.watchers, who])
    return {**issue_row(s, rec), "previous_assignee": rec_before}


@tool(consumes=("issue_key",), establishes=("issue_estimated",))
def estimate_issue_story_points(s: TrackerState, issue_key: str, story_points: Points) -> dict:
    """Set or change an issue's estimate in story points, on the team's scale 0, 1, 2, 3, 5, 8, 13, 21
    (bigger work must be split). Epics are not estimated, and done issues keep their estimate.

    Args:
        issue_key: The issue key, e.g. PAY-12.
        story_points: The estimate.
    """
    issue = get_issue(s, issue_key)
    check_points(issue.issue_type, story_points)
    if issue.status == "done":
        raise ToolError(f"{issue.key} is done; reopen it before changing its estimate", field="issue_key",
                        code="illegal_state")
    if issue.story_points == story_points:
        raise ToolError(f"{issue.key} is already estimated at {story_points} points", field="story_points",
                        code="no_change")
    rec = s.issues.edit(issue.key)
    previous, rec.story_points, rec.updated_at = rec.story_points, story_points, iso(now(s))
    return {**issue_row(s, rec), "previous_story_points": previous}


@tool(consumes=("issue_key",), produces=("comment_id",))
def add_issue_comment(s: TrackerState, issue_key: str, body: Text) -> dict:
    """Comment on an issue as yourself. People @-mentioned by username (e.g. @maria.lopez) start watching
    the issue.

    Args:
        issue_key: The issue key, e.g. PAY-12.
        body: The comment text.
    """
    issue = get_issue(s, issue_key)
    text = body.strip()
    if not text:
        raise ToolError("the comment body is empty", field="body")
    mentioned = [u for u in dict.fromkeys(_MENTION.findall(text.lower())) if u in s.members]
    stamp = iso(now(s))
    cid = new_id(s.counters, "CMT", 5)
    s.comments.put(cid, Comment(cid, issue.key, me(s), text, stamp))
    rec = s.issues.edit(issue.key)
    rec.updated_at = stamp
    added = [u for u in mentioned if u not in rec.watchers]
    rec.watchers = sorted({*rec.watchers, *mentioned})
    return {"comment_id": cid, "issue_key": issue.key, "author": me(s), "body": text, "created_at": stamp,
            "mentioned": mentioned, "new_watchers": added}


def _blocks_transitively(s: TrackerState, start: str, target: str) -> bool:
    """Whether ``start`` (directly or through other issues) blocks ``target``."""
    seen, stack = set(), [start]
    while stack:
        key = stack.pop()
        if key == target:
            return True
        if key in seen:
            continue
        seen.add(key)
        rec = s.issues.get(key)
        if rec is not None:
            stack.extend(rec.blocks)
    return False


@tool(consumes=("issue_key",), establishes=("issues_linked",))
def link_issues(s: TrackerState, issue_key: str, link_type: LinkType, other_issue_key: str) -> dict:
    """Link two issues: issue_key blocks other_issue_key, is blocked by it, or relates to it. A blocked
    issue cannot be done until its blockers are. Self-links, duplicate links, blocking cycles and
    blocking an issue that is already done are refused.

    Args:
        issue_key: The issue key, e.g. PAY-12.
        link_type: How issue_key relates to other_issue_key.
        other_issue_key: The other issue's key, e.g. PAY-15.
    """
    a, b = get_issue(s, issue_key), get_issue(s, other_issue_key, "other_issue_key")
    if a.key == b.key:
        raise ToolError("an issue cannot be linked to itself", field="other_issue_key")
    if link_type == "relates_to":
        if b.key in a.relates_to:
            raise ToolError(f"{a.key} already relates to {b.key}", field="other_issue_key", code="duplicate")
        ra, rb = s.issues.edit(a.key), s.issues.edit(b.key)
        ra.relates_to.append(b.key)
        rb.relates_to.append(a.key)
    else:
        blocker, blocked = (a, b) if link_type == "blocks" else (b, a)
        if blocked.key in blocker.blocks:
            raise ToolError(f"{blocker.key} already blocks {blocked.key}", field="other_issue_key", code="duplicate")
        if _blocks_transitively(s, blocked.key, blocker.key):
            raise ToolError(f"circular dependency: {blocked.key} already (directly or indirectly) blocks "
                            f"{blocker.key}", field="link_type", code="cycle")
        if blocked.status == "done":
            raise ToolError(f"{blocked.key} is already done and cannot become blocked; reopen it first",
                            field="link_type", code="illegal_state")
        rb, rd = s.issues.edit(blocker.key), s.issues.edit(blocked.key)
        rb.blocks.append(blocked.key)
        rd.blocked_by.append(blocker.key)
    stamp = iso(now(s))
    s.issues.edit(a.key).updated_at = stamp
    s.issues.edit(b.key).updated_at = stamp
    ra = s.issues[a.key]
    return {"issue_key": a.key, "link_type": link_type, "other_issue_key": b.key,
            "links": {"blocks": list(ra.blocks), "is_blocked_by": list(ra.blocked_by),
                      "relates_to": list(ra.relates_to)},
            "blocked_by_open": [x.key for x in open_blockers(s, ra)]}


@tool(consumes=("issue_key", "username"))
def update_issue_watchers(s: TrackerState, issue_key: str, action: Literal["watch", "unwatch"],
                          username: str | None = None) -> dict:
    """Start or stop watching an issue (get notified of its changes), for yourself or a teammate.

    Args:
        issue_key: The issue key, e.g. PAY-12.
        action: watch or unwatch.
        username: Whose watch to change; defaults to you.
    """
    issue = get_issue(s, issue_key)
    who = me(s) if username is None or username.strip().lower() == "me" else get_member(s, username,
                                                                                        "username").username
    if action == "watch" and who in issue.watchers:
        raise ToolError(f"{who} is already watching {issue.key}", field="username", code="no_change")
    if action == "unwatch" and who not in issue.watchers:
        raise ToolError(f"{who} is not watching {issue.key}", field="username", code="no_change")
    rec = s.issues.edit(issue.key)
    rec.watchers = sorted({*rec.watchers, who}) if action == "watch" else [w for w in rec.watchers if w != who]
    return {"issue_key": issue.key, "action": action, "username": who, "watchers": list(rec.watchers)}


@tool(consumes=("issue_key",), produces=("worklog_id",))
def log_issue_work(s: TrackerState, issue_key: str, minutes: Minutes, work_date: IsoDate | None = None,
                   note: Text | None = None) -> dict:
    """Log time you spent on an issue (not on an epic: log it on its stories). The day defaults to
    today, cannot be in the future, and you cannot log more than 24 hours on one day.

    Args:
        issue_key: The issue key, e.g. PAY-12.
        minutes: Time spent, in minutes.
        work_date: The day the work was done (YYYY-MM-DD).
        note: What was done.
    """
    issue = get_issue(s, issue_key)
    if issue.issue_type == "epic":
        raise ToolError(f"{issue.key} is an epic; log work on its stories instead", field="issue_key",
                        code="illegal_state")
    day = parse_date(work_date, "work_date") if work_date is not None else today(s)
    if day > today(s):
        raise ToolError(f"work_date {iso(day)} is in the future (today is {iso(today(s))})", field="work_date",
                        code="date_in_future")
    user = me(s)
    logged = sum(w.minutes for w in s.worklogs.values() if w.author == user and w.work_date == iso(day))
    if logged + minutes > MAX_DAILY_MINUTES:
        raise ToolError(f"you already logged {logged} minutes on {iso(day)}; {minutes} more would exceed 24 hours",
                        field="minutes", code="limit_exceeded")
    wid = new_id(s.counters, "WL", 5)
    stamp = iso(now(s))
    s.worklogs.put(wid, Worklog(wid, issue.key, user, minutes, iso(day), note, stamp))
    _touch(s, issue.key)
    total = sum(w.minutes for w in s.worklogs.values() if w.issue_key == issue.key)
    return {"worklog_id": wid, "issue_key": issue.key, "author": user, "minutes": minutes, "work_date": iso(day),
            "note": note, "issue_time_spent_minutes": total}
