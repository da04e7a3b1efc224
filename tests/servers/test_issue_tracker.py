"""Issue-tracker domain: tool count, workflow and sprint rules (state unchanged on
failure), the sprint cadence on the session clock."""

from __future__ import annotations

from typing import Any

from servers import PAPER_TOOL_COUNTS
from servers.issue_tracker import domain
from servers.kit import DomainRuntime
from tests.servers.harness import assert_replays_alike, fails, new_sid, ok


class World:
    """Live lookups of the guaranteed archetypes of a session."""

    def __init__(self, rt: DomainRuntime, sid: str, seed: int) -> None:
        self.rt, self.sid, self.seed = rt, sid, seed
        people = ok(rt, sid, seed, "issue_tracker_list_people", {})
        self.me = people["current_user"]
        self.people = people["people"]
        self.projects = ok(rt, sid, seed, "list_tracker_projects", {})
        self.issues = ok(rt, sid, seed, "issue_tracker_list_issues", {})
        self.sprints = ok(rt, sid, seed, "issue_tracker_list_sprints", {})

    def project(self, pred: Any) -> dict[str, Any]:
        return next(p for p in self.projects if pred(p))

    def issue(self, pred: Any) -> dict[str, Any]:
        return next(i for i in self.issues if pred(i))

    def sprint(self, pred: Any) -> dict[str, Any]:
        return next(sp for sp in self.sprints if pred(sp))

    def outsider(self, project: dict[str, Any]) -> str:
        return next(p["username"] for p in self.people if project["project_key"] not in p["projects"])


# ---------------------------------------------------------------- (1) tool count, (2) smoke coverage
def test_exactly_twenty_user_tools_and_named_discovery(rt: DomainRuntime) -> None:
    assert len(domain.user_tools) == PAPER_TOOL_COUNTS["issue_tracker"] == 20
    assert len(rt.table.openai_tools()) == 20
    discovery = [s.name for s in domain.tools.values() if s.kind == "discovery"]
    assert 2 <= len(discovery) <= 4 and all(n.startswith("issue_tracker_") for n in discovery)
    assert all(s.consumes or s.produces or s.requires for s in domain.user_tools)
    assert not any(rt.table.sensitive_params(t.name) for t in domain.user_tools)  # no secrets in this domain


def test_world_archetypes_exist_for_many_seeds() -> None:
    for seed in range(12):
        snap = domain.new_world(seed).snapshot()
        me = snap["session"]["current_user"]
        projects, issues, sprints = snap["projects"], snap["issues"], snap["sprints"]
        assert sum(p["lead"] == me for p in projects.values()) == 2 and all(me in p["members"]
                                                                           for p in projects.values())
        active = {sp["project_key"]: sp for sp in sprints.values() if sp["state"] == "active"}
        assert len(active) == 3
        idle = next(k for k in projects if k not in active)
        assert any(sp["project_key"] == idle and sp["state"] == "planned"
                   and any(i["sprint_id"] == sp["sprint_id"] for i in issues.values()) for sp in sprints.values())
        for key, sp in active.items():
            assert "2026-06-01" <= sp["end_date"] <= "2026-06-05"
            assert any(x["project_key"] == key and x["state"] == "planned" for x in sprints.values())
            mine = [i for i in issues.values() if i["sprint_id"] == sp["sprint_id"]]
            assert any(i["status"] == "in_review" and any(issues[b]["status"] != "done" for b in i["blocked_by"])
                       for i in mine)
            assert any(i["status"] == "todo" and i["assignee"] is None for i in mine)
        for key in projects:
            backlog = [i for i in issues.values() if i["project_key"] == key and i["sprint_id"] is None]
            assert any(i["status"] == "done" for i in backlog) and any(i["issue_type"] == "epic" for i in backlog)
        assert len(issues) >= 150 and len(snap["members"]) >= 16


# ---------------------------------------------------------------- (3) failure rules leave state alone
def test_unknown_ids_are_named(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    fails(rt, sid, seed, "get_issue_details", {"issue_key": "NOPE-1"}, "unknown issue_key")
    fails(rt, sid, seed, "search_project_issues", {"project_key": "ZZZ"}, "unknown project_key")
    fails(rt, sid, seed, "get_sprint_board", {"sprint_id": "SPR-9999"}, "unknown sprint_id")
    fails(rt, sid, seed, "search_project_issues", {"assignee": "nobody.here"}, "unknown user", "assignee")
    w = World(rt, sid, seed)
    i = w.issue(lambda x: x["status"] == "todo")
    fails(rt, sid, seed, "link_issues", {"issue_key": i["key"], "link_type": "blocks", "other_issue_key": "PAY-999"},
          "unknown issue_key", "other_issue_key")
    fails(rt, sid, seed, "close_project_sprint", {"sprint_id": w.sprint(lambda s: s["state"] == "active")["sprint_id"],
                                                  "move_unfinished_to": "SPR-9999"}, "unknown sprint_id",
          "move_unfinished_to")


def test_workflow_transitions(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = World(rt, sid, seed)
    todo = w.issue(lambda i: i["status"] == "todo" and i["assignee"] and i["type"] != "epic" and not i["open_blockers"])
    text = fails(rt, sid, seed, "transition_issue_status", {"issue_key": todo["key"], "status": "done"},
                 "illegal transition todo → done", "status")
    assert "allowed statuses are: in_progress, blocked" in text
    fails(rt, sid, seed, "transition_issue_status", {"issue_key": todo["key"], "status": "in_review"},
          "illegal transition todo → in_review")
    fails(rt, sid, seed, "transition_issue_status", {"issue_key": todo["key"], "status": "todo"}, "already todo")
    done = w.issue(lambda i: i["status"] == "done")
    fails(rt, sid, seed, "transition_issue_status", {"issue_key": done["key"], "status": "in_progress"},
          "allowed statuses are: todo")
    blocked = w.issue(lambda i: i["status"] == "blocked")
    fails(rt, sid, seed, "transition_issue_status", {"issue_key": blocked["key"], "status": "done"},
          "illegal transition blocked → done")
    unassigned = w.issue(lambda i: i["status"] == "todo" and i["assignee"] is None)
    fails(rt, sid, seed, "transition_issue_status", {"issue_key": unassigned["key"], "status": "in_progress"},
          "unassigned", "assign it")
    # the full happy path, with a comment on the way
    key = todo["key"]
    for st in ("in_progress", "blocked", "in_progress", "in_review", "done"):
        out = ok(rt, sid, seed, "transition_issue_status", {"issue_key": key, "status": st})
        assert out["status"] == st
    details = ok(rt, sid, seed, "get_issue_details", {"issue_key": key})
    assert details["resolved_at"] and details["allowed_transitions"] == ["todo"]
    out = ok(rt, sid, seed, "transition_issue_status", {"issue_key": key, "status": "todo",
                                                        "comment": "Reopened: fails on Safari"})
    assert out["comment_id"]
    details = ok(rt, sid, seed, "get_issue_details", {"issue_key": key})
    assert details["resolved_at"] is None and details["comments"][-1]["body"] == "Reopened: fails on Safari"


def test_blocked_issue_cannot_be_done_until_its_blocker_is(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = World(rt, sid, seed)
    review = w.issue(lambda i: i["status"] == "in_review" and i["open_blockers"])
    fails(rt, sid, seed, "transition_issue_status", {"issue_key": review["key"], "status": "done"},
          "blocked by open issue", review["open_blockers"][0])
    for key in review["open_blockers"]:
        blocker = next(i for i in w.issues if i["key"] == key)
        path = {"todo": ["in_progress", "in_review", "done"], "in_progress": ["in_review", "done"],
                "in_review": ["done"], "blocked": ["in_progress", "in_review", "done"]}[blocker["status"]]
        if blocker["assignee"] is None:
            ok(rt, sid, seed, "assign_issue", {"issue_key": key, "assignee": "me"})
        for st in path:
            ok(rt, sid, seed, "transition_issue_status", {"issue_key": key, "status": st})
    assert ok(rt, sid, seed, "transition_issue_status", {"issue_key": review["key"], "status": "done"})["status"] == "done"


def test_assignment_rules_and_membership(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    w = World(rt, sid, seed)
    led = w.project(lambda p: p["you_are_lead"])
    other = w.project(lambda p: not p["you_are_lead"])
    issue = w.issue(lambda i: i["project_key"] == led["project_key"] and i["status"] == "todo" and i["assignee"])
    stranger = w.outsider(led)
    fails(rt, sid, seed, "assign_issue", {"issue_key": issue["key"], "assignee": stranger},
          "is not a member of project", "assignee")
    fails(rt, sid, seed, "assign_issue", {"issue_key": issue["key"]}, "either an assignee or unassign")
    fails(rt, sid, seed, "assign_issue", {"issue_key": issue["key"], "assignee": "me", "unassign": True},
          "either an assignee or unassign")
    fails(rt, sid, seed, "assign_issue", {"issue_key": issue["key"], "assignee": issue["assignee"]}, "already assigned")
    busy = w.issue(lambda i: i["status"] in ("in_progress", "in_review") and i["assignee"])
    fails(rt, sid, seed, "assign_issue", {"issue_key": busy["key"], "unassign": True}, "needs an assignee")
    fails(rt, sid, seed, "create_project_issue", {"project_key": led["project_key"], "issue_type": "bug",
                                                  "title": "Broken", "assignee": stranger}, "not a member")
    # only the lead adds members; once added, the newcomer can be assigned
    fails(rt, sid, seed, "add_project_member", {"project_key": other["project_key"],
                                                "username": w.outsider(other)}, "only the project lead")
    fails(rt, sid, seed, "add_project_member", {"project_key": led["project_key"], "username": w.me},
          "already a member")
    fails(rt, sid, seed, "add_project_member", {"project_key": led["project_key"], "username": "ghost.user"},
          "unknown user", "username")
    ok(rt, sid, seed, "add_project_member", {"project_key": led["project_key"], "username": stranger})
    out = ok(rt, sid, seed, "assign_issue", {"issue_key": issue["key"], "assignee": stranger})
    assert out["assignee"] == stranger and out["previous_assignee"] == issue["assignee"]
    assert stranger in ok(rt, sid, seed, "get_issue_details", {"issue_key": issue["key"]})["watchers"]
    ok(rt, sid, seed, "assign_issue", {"issue_key": issue["key"], "unassign": True})
    fails(rt, sid, seed, "assign_issue", {"issue_key": issue["key"], "unassign": True}, "not assigned")


def test_estimate_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    w = World(rt, sid, seed)
    todo = w.issue(lambda i: i["status"] == "todo" and i["type"] != "epic" and i["story_points"] != 8)
    epic = w.issue(lambda i: i["type"] == "epic")
    done = w.issue(lambda i: i["status"] == "done")
    fails(rt, sid, seed, "estimate_issue_story_points", {"issue_key": todo["key"], "story_points": 40},
          "out of range", "split")
    fails(rt, sid, seed, "estimate_issue_story_points", {"issue_key": todo["key"], "story_points": 4},
          "not on the story-point scale")
    fails(rt, sid, seed, "estimate_issue_story_points", {"issue_key": epic["key"], "story_points": 5},
          "epics are not estimated")
    fails(rt, sid, seed, "estimate_issue_story_points", {"issue_key": done["key"], "story_points": 5}, "is done")
    fails(rt, sid, seed, "create_project_issue", {"project_key": todo["project_key"], "issue_type": "story",
                                                  "title": "Big thing", "story_points": 34}, "out of range")
    out = ok(rt, sid, seed, "estimate_issue_story_points", {"issue_key": todo["key"], "story_points": 8})
    assert out["story_points"] == 8 and out["previous_story_points"] == todo["story_points"]
    fails(rt, sid, seed, "estimate_issue_story_points", {"issue_key": todo["key"], "story_points": 8},
          "already estimated")


def test_fields_comments_and_components(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 5
    w = World(rt, sid, seed)
    issue = w.issue(lambda i: i["status"] == "todo")
    project = w.project(lambda p: p["project_key"] == issue["project_key"])
    fails(rt, sid, seed, "update_issue_fields", {"issue_key": issue["key"], "components": ["warp-drive"]},
          "unknown component", "components")
    fails(rt, sid, seed, "create_project_issue", {"project_key": project["project_key"], "issue_type": "task",
                                                  "title": "x", "components": ["warp-drive"]}, "unknown component")
    fails(rt, sid, seed, "update_issue_fields", {"issue_key": issue["key"]}, "nothing to change")
    fails(rt, sid, seed, "update_issue_fields", {"issue_key": issue["key"], "priority": issue["priority"]},
          "already has those values")
    fails(rt, sid, seed, "update_issue_fields", {"issue_key": issue["key"], "labels": ["  "]}, "labels must not be blank")
    fails(rt, sid, seed, "add_issue_comment", {"issue_key": issue["key"], "body": "   \n "}, "empty", "body")
    fails(rt, sid, seed, "create_project_issue", {"project_key": project["project_key"], "issue_type": "task",
                                                  "title": "   "}, "title must not be blank")
    out = ok(rt, sid, seed, "update_issue_fields", {"issue_key": issue["key"], "labels": ["Needs Design", "ux"],
                                                    "components": [project["components"][-1].upper()]})
    assert out["labels"] == ["needs-design", "ux"] and out["components"] == [project["components"][-1]]
    mate = next(m for m in project["members"] if m != w.me)
    c = ok(rt, sid, seed, "add_issue_comment", {"issue_key": issue["key"], "body": f"cc @{mate} and @nobody.x"})
    assert c["mentioned"] == [mate] and c["author"] == w.me
    assert mate in ok(rt, sid, seed, "get_issue_details", {"issue_key": issue["key"]})["watchers"]


def test_link_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    w = World(rt, sid, seed)
    a, b, c = [i for i in w.issues if i["status"] == "todo" and not i["links"]["blocks"]
               and not i["links"]["is_blocked_by"] and not i["links"]["relates_to"]][:3]
    done = w.issue(lambda i: i["status"] == "done")
    fails(rt, sid, seed, "link_issues", {"issue_key": a["key"], "link_type": "blocks", "other_issue_key": a["key"]},
          "linked to itself")
    ok(rt, sid, seed, "link_issues", {"issue_key": a["key"], "link_type": "blocks", "other_issue_key": b["key"]})
    fails(rt, sid, seed, "link_issues", {"issue_key": b["key"], "link_type": "is_blocked_by",
                                         "other_issue_key": a["key"]}, "already blocks")
    fails(rt, sid, seed, "link_issues", {"issue_key": b["key"], "link_type": "blocks", "other_issue_key": a["key"]},
          "circular dependency", "link_type")
    ok(rt, sid, seed, "link_issues", {"issue_key": c["key"], "link_type": "is_blocked_by", "other_issue_key": b["key"]})
    fails(rt, sid, seed, "link_issues", {"issue_key": c["key"], "link_type": "blocks", "other_issue_key": a["key"]},
          "circular dependency", "indirectly")
    fails(rt, sid, seed, "link_issues", {"issue_key": a["key"], "link_type": "blocks", "other_issue_key": done["key"]},
          "already done and cannot become blocked")
    ok(rt, sid, seed, "link_issues", {"issue_key": a["key"], "link_type": "relates_to", "other_issue_key": done["key"]})
    fails(rt, sid, seed, "link_issues", {"issue_key": done["key"], "link_type": "relates_to",
                                         "other_issue_key": a["key"]}, "already relates")
    details = ok(rt, sid, seed, "get_issue_details", {"issue_key": c["key"]})
    assert details["links"]["is_blocked_by"] == [b["key"]] and details["blocked_by_open"] == [b["key"]]


def test_watchers_and_worklogs(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 1
    w = World(rt, sid, seed)
    issue = w.issue(lambda i: i["type"] != "epic" and w.me not in i["watchers"])
    epic = w.issue(lambda i: i["type"] == "epic")
    fails(rt, sid, seed, "update_issue_watchers", {"issue_key": issue["key"], "action": "unwatch"}, "is not watching")
    ok(rt, sid, seed, "update_issue_watchers", {"issue_key": issue["key"], "action": "watch"})
    fails(rt, sid, seed, "update_issue_watchers", {"issue_key": issue["key"], "action": "watch"}, "already watching")
    fails(rt, sid, seed, "update_issue_watchers", {"issue_key": issue["key"], "action": "watch",
                                                   "username": "ghost.user"}, "unknown user")
    fails(rt, sid, seed, "log_issue_work", {"issue_key": epic["key"], "minutes": 30}, "is an epic")
    fails(rt, sid, seed, "log_issue_work", {"issue_key": issue["key"], "minutes": 30, "work_date": "2026-06-02"},
          "in the future", "work_date")
    ok(rt, sid, seed, "log_issue_work", {"issue_key": issue["key"], "minutes": 1000, "work_date": "2026-05-20"})
    fails(rt, sid, seed, "log_issue_work", {"issue_key": issue["key"], "minutes": 480, "work_date": "2026-05-20"},
          "exceed 24 hours", "minutes")
    out = ok(rt, sid, seed, "log_issue_work", {"issue_key": issue["key"], "minutes": 440, "work_date": "2026-05-20"})
    assert out["issue_time_spent_minutes"] >= 1440


def test_sprint_rules(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 2
    w = World(rt, sid, seed)
    active = w.sprint(lambda s: s["state"] == "active")
    key = active["project_key"]
    planned = w.sprint(lambda s: s["state"] == "planned" and s["project_key"] == key)
    closed = w.sprint(lambda s: s["state"] == "closed" and s["project_key"] == key)
    idle_planned = w.sprint(lambda s: s["state"] == "planned" and not any(
        x["state"] == "active" and x["project_key"] == s["project_key"] for x in w.sprints))
    done_backlog = w.issue(lambda i: i["project_key"] == key and i["status"] == "done" and i["sprint_id"] is None)
    epic = w.issue(lambda i: i["project_key"] == key and i["type"] == "epic")
    foreign = w.issue(lambda i: i["project_key"] != key and i["status"] == "todo")
    todo = w.issue(lambda i: i["project_key"] == key and i["status"] == "todo" and i["sprint_id"] is None
                   and i["type"] != "epic")
    in_active = w.issue(lambda i: i["sprint_id"] == active["sprint_id"] and i["status"] != "done")
    done_in_active = next((i for i in w.issues if i["sprint_id"] == active["sprint_id"] and i["status"] == "done"), None)
    in_closed = w.issue(lambda i: i["sprint_id"] == closed["sprint_id"])
    fails(rt, sid, seed, "create_project_sprint", {"project_key": key, "name": "Late", "start_date": "2026-05-30"},
          "in the past", "start_date")
    fails(rt, sid, seed, "create_project_sprint", {"project_key": key, "name": active["name"].lower(),
                                                   "start_date": "2026-07-01"}, "already has a sprint named")
    fails(rt, sid, seed, "add_issues_to_sprint", {"sprint_id": planned["sprint_id"],
                                                  "issue_keys": [todo["key"], done_backlog["key"]]},
          "already done", "issue_keys")
    fails(rt, sid, seed, "add_issues_to_sprint", {"sprint_id": planned["sprint_id"], "issue_keys": [epic["key"]]},
          "is an epic")
    fails(rt, sid, seed, "add_issues_to_sprint", {"sprint_id": planned["sprint_id"], "issue_keys": [foreign["key"]]},
          "belongs to project")
    fails(rt, sid, seed, "add_issues_to_sprint", {"sprint_id": active["sprint_id"], "issue_keys": [in_active["key"]]},
          "already in")
    fails(rt, sid, seed, "add_issues_to_sprint", {"sprint_id": closed["sprint_id"], "issue_keys": [todo["key"]]},
          "is closed")
    fails(rt, sid, seed, "add_issues_to_sprint", {"sprint_id": planned["sprint_id"],
                                                  "issue_keys": [todo["key"], todo["key"]]}, "listed twice")
    fails(rt, sid, seed, "remove_issue_from_sprint", {"issue_key": todo["key"]}, "not in a sprint")
    fails(rt, sid, seed, "remove_issue_from_sprint", {"issue_key": in_closed["key"]}, "closed sprint")
    if done_in_active is not None:
        fails(rt, sid, seed, "remove_issue_from_sprint", {"issue_key": done_in_active["key"]}, "stays in the sprint")
    fails(rt, sid, seed, "start_project_sprint", {"sprint_id": planned["sprint_id"]}, "already has an active sprint",
          active["sprint_id"])
    fails(rt, sid, seed, "start_project_sprint", {"sprint_id": active["sprint_id"]}, "only planned sprints")
    fails(rt, sid, seed, "start_project_sprint", {"sprint_id": closed["sprint_id"]}, "only planned sprints")
    fails(rt, sid, seed, "close_project_sprint", {"sprint_id": planned["sprint_id"]}, "only the active sprint")
    fails(rt, sid, seed, "close_project_sprint", {"sprint_id": active["sprint_id"],
                                                  "move_unfinished_to": closed["sprint_id"]},
          "backlog or a planned sprint", "move_unfinished_to")
    fails(rt, sid, seed, "close_project_sprint", {"sprint_id": active["sprint_id"],
                                                  "move_unfinished_to": idle_planned["sprint_id"]},
          "backlog or a planned sprint")
    empty = ok(rt, sid, seed, "create_project_sprint", {"project_key": idle_planned["project_key"], "name": "Empty",
                                                        "start_date": "2026-07-01", "duration_weeks": 1})
    ok(rt, sid, seed, "start_project_sprint", {"sprint_id": idle_planned["sprint_id"]})
    ok(rt, sid, seed, "close_project_sprint", {"sprint_id": idle_planned["sprint_id"]})
    fails(rt, sid, seed, "start_project_sprint", {"sprint_id": empty["sprint_id"]}, "has no issues")


def test_closing_a_sprint_rolls_unfinished_work_over(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 3
    w = World(rt, sid, seed)
    active = w.sprint(lambda s: s["state"] == "active")
    nxt = w.sprint(lambda s: s["state"] == "planned" and s["project_key"] == active["project_key"])
    board = ok(rt, sid, seed, "get_sprint_board", {"sprint_id": active["sprint_id"]})
    unfinished = sorted(i["key"] for st, col in board["columns"].items() if st != "done" for i in col)
    finished = sorted(i["key"] for i in board["columns"]["done"])
    out = ok(rt, sid, seed, "close_project_sprint", {"sprint_id": active["sprint_id"],
                                                     "move_unfinished_to": nxt["sprint_id"]})
    assert out["state"] == "closed" and sorted(out["carried_over"]) == unfinished
    assert sorted(out["completed_issues"]) == finished and out["closed_by"] == w.me
    moved = ok(rt, sid, seed, "search_project_issues", {"sprint_id": nxt["sprint_id"], "limit": 100})["issues"]
    assert set(unfinished) <= {i["key"] for i in moved}
    started = ok(rt, sid, seed, "start_project_sprint", {"sprint_id": nxt["sprint_id"]})
    assert started["state"] == "active" and started["start_date"] == "2026-06-01" and started["end_date"] == "2026-06-14"
    # a done issue of the closed sprint that is reopened goes back to the backlog
    if finished:
        ok(rt, sid, seed, "transition_issue_status", {"issue_key": finished[0], "status": "todo"})
        assert ok(rt, sid, seed, "get_issue_details", {"issue_key": finished[0]})["sprint_id"] is None


# ---------------------------------------------------------------- (4) the sprint cadence on the clock
def test_clock_closes_sprints_at_their_end_date(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 4
    w = World(rt, sid, seed)
    active = [s for s in w.sprints if s["state"] == "active"]
    first = min(active, key=lambda s: s["end_date"])
    nxt = w.sprint(lambda s: s["state"] == "planned" and s["project_key"] == first["project_key"])
    open_keys = sorted(i["key"] for i in w.issues if i["sprint_id"] == first["sprint_id"] and i["status"] != "done")
    board = ok(rt, sid, seed, "get_sprint_board", {"sprint_id": first["sprint_id"]})
    assert board["days_left"] == (int(first["end_date"][-2:]) - 1)
    ok(rt, sid, seed, "issue_tracker_session_advance_clock", {"minutes": 5 * 24 * 60})
    sprints = {s["sprint_id"]: s for s in ok(rt, sid, seed, "list_project_sprints",
                                             {"project_key": first["project_key"]})}
    closed = sprints[first["sprint_id"]]
    assert closed["state"] == "closed" and closed["closed_by"] == "schedule"
    assert closed["carried_to"] == nxt["sprint_id"] and sorted(closed["carried_over"]) == open_keys
    assert closed["closed_at"].startswith(first["end_date"])
    assert all(s["state"] != "active" for s in ok(rt, sid, seed, "issue_tracker_list_sprints", {}))
    # the project can start its next sprint now
    out = ok(rt, sid, seed, "start_project_sprint", {"sprint_id": nxt["sprint_id"]})
    assert out["start_date"] == "2026-06-06" and out["issue_count"] >= len(open_keys)


def test_replaying_the_same_calls_gives_the_same_state(rt: DomainRuntime) -> None:
    assert_replays_alike(rt, 2, [("issue_tracker_session_advance_clock", {"minutes": 20 * 24 * 60}),
                                        ("list_tracker_projects", {})])


def test_search_filters_sort_and_paginate(rt: DomainRuntime) -> None:
    sid, seed = new_sid(), 0
    first = ok(rt, sid, seed, "search_project_issues", {"status": "open", "limit": 10})
    second = ok(rt, sid, seed, "search_project_issues", {"status": "open", "limit": 10, "offset": 10})
    order = ["lowest", "low", "medium", "high", "highest"]
    ranks = [order.index(i["priority"]) for i in first["issues"] + second["issues"]]
    assert ranks == sorted(ranks, reverse=True) and first["total"] == second["total"] > 20
    assert all(i["status"] != "done" for i in first["issues"])
    mine = ok(rt, sid, seed, "search_project_issues", {"assignee": "me", "limit": 100})["issues"]
    me = ok(rt, sid, seed, "issue_tracker_list_people", {})["current_user"]
    assert all(i["assignee"] == me for i in mine)
    nobody = ok(rt, sid, seed, "search_project_issues", {"unassigned_only": True, "limit": 100})["issues"]
    assert nobody and all(i["assignee"] is None for i in nobody)
    fails(rt, sid, seed, "search_project_issues", {"assignee": "me", "unassigned_only": True}, "not both")
    sprint = ok(rt, sid, seed, "issue_tracker_list_sprints", {})[0]["sprint_id"]
    fails(rt, sid, seed, "search_project_issues", {"sprint_id": sprint, "backlog_only": True}, "not both",
          "backlog_only")


# ---------------------------------------------------------------- (5) determinism
def test_unique_values(rt: DomainRuntime) -> None:
    statuses = {r["value"] for r in ok(rt, new_sid(), 0, "issue_tracker_get_unique_values", {"field": "status"})}
    assert statuses == {"todo", "in_progress", "in_review", "done", "blocked"}
    states = {r["value"] for r in ok(rt, new_sid(), 0, "issue_tracker_get_unique_values", {"field": "sprint_state"})}
    assert states == {"planned", "active", "closed"}
