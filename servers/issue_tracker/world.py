"""The seeded issue tracker: an engineering org of ~18 people working in four projects, each with a
backlog, a sprint history and (all but one) a sprint in progress.

Archetypes every seed has: the current user leads two projects and is a plain member of the others;
every project has people outside it; one project has no active sprint but a planned sprint with
issues (ready to start), the others have an active sprint ending within five days and a planned
next sprint; every active sprint holds an issue in review that is blocked by an open issue and an
unassigned to-do issue; every backlog holds a done issue and an epic.
"""

from __future__ import annotations

from datetime import date, timedelta

from servers.issue_tracker.state import (
    POINT_SCALE,
    Comment,
    Issue,
    Member,
    Project,
    Session,
    Sprint,
    TrackerState,
    Worklog,
    sprint_dates,
)
from servers.kit import REFERENCE_DATE, Counters, Seeds, iso

NOW = REFERENCE_DATE
TODAY = NOW.date()

PROJECTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("PAY", "Payments Platform", ("api", "checkout", "billing", "fraud", "ledger")),
    ("WEB", "Web Storefront", ("frontend", "search", "cart", "accessibility", "seo")),
    ("MOB", "Mobile App", ("ios", "android", "push", "onboarding", "offline")),
    ("OPS", "Infrastructure", ("ci", "kubernetes", "monitoring", "networking", "security")),
    ("DATA", "Data Platform", ("pipelines", "warehouse", "dashboards", "ml", "quality")),
    ("CORE", "Core Services", ("auth", "accounts", "notifications", "gateway", "storage")),
)
TITLES = ("Backend Engineer", "Frontend Engineer", "Mobile Engineer", "SRE", "QA Engineer", "Product Manager",
          "Engineering Manager", "Data Engineer", "Designer")
LABELS = ("tech-debt", "customer-reported", "regression", "performance", "security", "quick-win", "ux", "flaky-test")
_BUG = ("{c} times out under load", "Crash in {c} after the last release", "{c} shows stale data after refresh",
        "Wrong totals in {c} for multi-currency orders", "{c} returns 500 on empty input",
        "Memory leak in the {c} worker", "Retry storm when {c} is unavailable", "{c} ignores the locale setting")
_STORY = ("As a customer I can save my {c} preferences", "As an admin I can export {c} reports",
          "As a user I get notified when {c} changes", "As a support agent I can search {c} history",
          "As a merchant I can configure {c} limits", "As a new user I see a guided {c} tour")
_TASK = ("Upgrade the {c} dependencies", "Add dashboards for {c}", "Write runbook for {c} incidents",
         "Remove the legacy {c} endpoints", "Add integration tests for {c}", "Migrate {c} config to the new format",
         "Document the {c} API", "Rotate {c} credentials")
_EPIC = ("{c} redesign", "{c} reliability program", "{c} v2", "Self-service {c}")
_COMMENTS = ("I can reproduce this on staging.", "Fix is up for review.", "Blocked until the API change ships.",
             "Let's pair on this tomorrow.", "Moved to the next sprint, not enough capacity.",
             "Added logs, will check again after the deploy.", "Customer confirmed the workaround helps.",
             "Can we split this into two issues?", "Design is attached in the ticket.")


def generate(s: TrackerState, seeds: Seeds) -> None:
    rng, fake = seeds.rng, seeds.fake
    # -- people
    users: list[str] = []
    for _ in range(rng.randint(16, 20)):
        first, last = fake.first_name(), fake.last_name()
        username = f"{first}.{last}".lower().replace("'", "")
        if username in users:
            continue
        users.append(username)
        s.members.put(username, Member(username, f"{first} {last}", f"{username}@acme-eng.example",
                                       seeds.choice(TITLES)))
    current = users[0]
    s.session.set(Session(current))
    # -- projects: the current user leads the first two and is a member of all
    plan = seeds.sample(PROJECTS, 4)
    no_active = rng.randrange(4)
    n_sprint = n_comment = n_worklog = 0
    for p_idx, (key, name, components) in enumerate(plan):
        others = [u for u in users if u != current]
        members = [current, *seeds.sample(others, rng.randint(5, 8))]
        lead = current if p_idx < 2 else members[1]
        s.projects.put(key, Project(key, name, f"{name}: everything the {name.lower()} team ships.", lead,
                                    sorted(members), list(components), 1, iso(NOW - timedelta(days=400))))
        # -- sprints: 2-3 closed, then one active (except one project), then 1-2 planned
        n_closed = rng.randint(2, 3)
        has_active = p_idx != no_active
        active_start = TODAY - timedelta(days=rng.randint(9, 13)) if has_active else None
        anchor = active_start or (TODAY - timedelta(days=rng.randint(1, 3)) + timedelta(days=1))
        sprints: list[Sprint] = []
        for j in range(n_closed):
            start = anchor - timedelta(days=14 * (n_closed - j))
            n_sprint += 1
            a, b = sprint_dates(start, 14)
            sprints.append(Sprint(seeds.ident("SPR", n_sprint), key, f"{key} Sprint {j + 1}", None, "closed", a, b, 14,
                                  started_at=iso(NOW.replace(hour=9) - (NOW.date() - start)),
                                  closed_at=f"{b}T17:00:00+00:00", closed_by=lead, carried_to="backlog"))
        number = n_closed
        if has_active:
            n_sprint += 1
            number += 1
            a, b = sprint_dates(active_start, 14)  # type: ignore[arg-type]
            sprints.append(Sprint(seeds.ident("SPR", n_sprint), key, f"{key} Sprint {number}",
                                  seeds.choice(["Ship the checkout beta", "Stabilise releases", "Close top bugs",
                                                "Finish the migration", None]), "active", a, b, 14,
                                  started_at=f"{a}T09:30:00+00:00"))
        next_start = (active_start + timedelta(days=14)) if active_start else TODAY + timedelta(days=rng.randint(0, 2))
        for k in range(rng.randint(1, 2)):
            n_sprint += 1
            number += 1
            a, b = sprint_dates(next_start + timedelta(days=14 * k), 14)
            sprints.append(Sprint(seeds.ident("SPR", n_sprint), key, f"{key} Sprint {number}", None, "planned",
                                  a, b, 14))
        for sp in sprints:
            s.sprints.put(sp.sprint_id, sp)
        # -- issues
        closed = [sp for sp in sprints if sp.state == "closed"]
        act = next((sp for sp in sprints if sp.state == "active"), None)
        planned = [sp for sp in sprints if sp.state == "planned"]
        specs: list[tuple[str | None, str]] = []  # (sprint id, status)
        for sp in closed:
            specs += [(sp.sprint_id, "done")] * rng.randint(5, 8)
        if act is not None:
            specs += [(act.sprint_id, "in_review"), (act.sprint_id, "in_progress"), (act.sprint_id, "todo")]
            specs += [(act.sprint_id, seeds.choice(["todo", "in_progress", "in_review", "done", "done", "blocked"]))
                      for _ in range(rng.randint(6, 10))]
        specs += [(planned[0].sprint_id, "todo") for _ in range(rng.randint(3, 6))]
        specs += [(None, "done"), (None, "epic")]
        specs += [(None, seeds.choice(["todo", "todo", "todo", "blocked", "done", "in_progress"]))
                  for _ in range(rng.randint(12, 20))]
        issues: list[Issue] = []
        for n, (sprint_id, status) in enumerate(specs, start=1):
            issues.append(_make_issue(seeds, key, n, sprint_id, status, members, list(components)))
        # archetypes inside the active sprint: a review blocked by open work, an unassigned to-do
        if act is not None:  # the first three specs of the active sprint: in_review, in_progress, todo
            review, blocker, todo = [i for i in issues if i.sprint_id == act.sprint_id][:3]
            _link_blocks(blocker, review)
            todo.assignee = None
        for i in issues:
            if i.status == "blocked" and not i.blocked_by:
                cands = [o for o in issues if o is not i and o.status in ("todo", "in_progress") and not o.blocked_by]
                if cands:
                    _link_blocks(seeds.choice(cands), i)
        for _ in range(rng.randint(2, 4)):
            a, b = seeds.sample(issues, 2)
            if b.key not in a.relates_to:
                a.relates_to.append(b.key)
                b.relates_to.append(a.key)
        for sp in sprints:
            mine = [i for i in issues if i.sprint_id == sp.sprint_id]
            if sp.state == "closed":
                sp.committed_points = sum(i.story_points or 0 for i in mine) + rng.choice([0, 3, 5])
                sp.completed_points = sum(i.story_points or 0 for i in mine)
                sp.completed_issues = [i.key for i in mine]
            elif sp.state == "active":
                sp.committed_points = sum(i.story_points or 0 for i in mine)
        s.projects.edit(key).next_number = len(issues) + 1
        for i in issues:
            s.issues.put(i.key, i)
            if rng.random() < 0.45:
                for _ in range(rng.randint(1, 3)):
                    n_comment += 1
                    cid = seeds.ident("CMT", n_comment, 5)
                    s.comments.put(cid, Comment(cid, i.key, seeds.choice(members), seeds.choice(_COMMENTS),
                                                iso(NOW - timedelta(days=rng.randint(0, 20), hours=rng.randint(1, 8)))))
            if i.status in ("in_progress", "in_review", "done") and i.issue_type != "epic" and i.assignee:
                for _ in range(rng.randint(0, 3)):
                    n_worklog += 1
                    wid = seeds.ident("WL", n_worklog, 5)
                    first = date.fromisoformat(i.created_at[:10])
                    last = date.fromisoformat((i.resolved_at or iso(TODAY - timedelta(days=1)))[:10])
                    day = first + timedelta(days=rng.randint(0, max(0, (last - first).days)))
                    s.worklogs.put(wid, Worklog(wid, i.key, i.assignee, seeds.choice([30, 60, 90, 120, 180, 240]),
                                                iso(day), None, f"{iso(day)}T17:30:00+00:00"))
    s.counters.set(Counters({"SPR": n_sprint + 1, "CMT": n_comment + 1, "WL": n_worklog + 1}))


def _link_blocks(blocker: Issue, blocked: Issue) -> None:
    if blocked.key not in blocker.blocks:
        blocker.blocks.append(blocked.key)
        blocked.blocked_by.append(blocker.key)


def _make_issue(seeds: Seeds, project: str, n: int, sprint_id: str | None, status: str, members: list[str],
                components: list[str]) -> Issue:
    rng = seeds.rng
    if status == "epic":
        kind, status = "epic", seeds.choice(["todo", "in_progress"])
    else:
        kind = seeds.choice(["bug", "bug", "story", "story", "story", "task", "task"])
    comp = seeds.choice(components)
    template = {"bug": _BUG, "story": _STORY, "task": _TASK, "epic": _EPIC}[kind]
    title = seeds.choice(template).format(c=comp)
    title = title[0].upper() + title[1:]
    created = NOW - timedelta(days=rng.randint(2, 120), hours=rng.randint(0, 8))
    assignee = None if status == "todo" and rng.random() < 0.4 else seeds.choice(members)
    reporter = seeds.choice(members)
    points = None if kind == "epic" else (seeds.choice(POINT_SCALE[1:7]) if rng.random() < 0.8 else None)
    updated = created + timedelta(days=rng.randint(0, max(0, (NOW - created).days)))
    watchers = sorted({reporter, *([assignee] if assignee else []), *seeds.sample(members, rng.randint(0, 2))})
    return Issue(
        key=f"{project}-{n}", project_key=project, number=n, issue_type=kind, title=title,
        description=f"{title}. Reported in the {comp} area; see linked issues for context." if rng.random() < 0.8
        else None,
        status=status, priority=seeds.choice(["lowest", "low", "medium", "medium", "medium", "high", "high",
                                              "highest"]),
        assignee=assignee, reporter=reporter,
        labels=sorted(set(seeds.sample(LABELS, rng.randint(0, 2)))), components=[comp], story_points=points,
        sprint_id=sprint_id, created_at=iso(created), updated_at=iso(min(updated, NOW)),
        resolved_at=iso(min(updated, NOW)) if status == "done" else None, watchers=watchers,
    )
