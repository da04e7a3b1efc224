"""Issue tracker: an engineering org's projects (keys like PAY), their members and components, issues
(bug, story, task, epic) with priorities, assignees, labels, story points, watchers, comments, logged
work and links (blocks / is blocked by / relates to), and sprints. The API acts as one current user
(the author of comments and worklogs, and the one whose permissions count).

Workflow: todo → in_progress → in_review → done; todo and in_progress ⇄ blocked; in_progress → todo;
in_review → in_progress; done → todo (reopen; reopened issues of a closed sprint go back to the
backlog). Sprints: planned → active → closed, one active sprint per project. Time (the session clock):
an active sprint whose end date has passed closes by itself and its unfinished issues roll over to the
project's next planned sprint, or the backlog when there is none.

Failure rules (each names the argument at fault and leaves the state unchanged):

* unknown project_key / issue_key / sprint_id / username (assignee, username, other_issue_key, ...);
* illegal transition (the message lists the allowed statuses); moving to the status it already has;
  starting work (in_progress) on an unassigned issue; done while blocked by an open issue;
* assigning a non-member of the project; giving both or neither of assignee / unassign; unassigning
  an issue in progress or in review; assigning the current assignee again;
* estimates: off the 0, 1, 2, 3, 5, 8, 13, 21 scale or above 21 (out of range), on an epic, on a done
  issue, or unchanged;
* components not in the project's list; blank labels, titles or comment bodies; nothing to change;
* links: to itself, duplicates, blocking cycles (direct or indirect), blocking an issue that is done;
* watchers: already watching / not watching;
* work logs: on an epic, dated in the future, or more than 24 hours for you on one day;
* adding members: only the project lead may, and not someone already a member;
* sprints: a start date in the past or a duplicate name on create; adding a done issue, an epic, an
  issue of another project, an issue already in that sprint or anything to a closed sprint; removing
  an issue that is in no sprint, in a closed sprint, or done; starting a sprint that is not planned,
  while another sprint of the project is active, or with no issues; closing a sprint that is not
  active, or moving its unfinished issues anywhere but the backlog or a planned sprint of the project.
"""

from servers.issue_tracker import discovery, tools_issues, tools_sprints, tools_workflow
from servers.issue_tracker.state import TrackerState, on_time
from servers.issue_tracker.world import generate
from servers.kit import Domain

domain = Domain(
    "issue_tracker", TrackerState, generate,
    description=(
        "Issue tracker for an engineering org: projects with keys (PAY-123), issues with types, priorities, "
        "assignees, labels, components and story points moving through an explicit workflow (todo, in_progress, "
        "in_review, done, blocked), blocking links, watchers, comments and logged work, and sprints that are "
        "planned, started (one at a time per project) and closed, rolling unfinished work over."
    ),
    modules=(tools_issues, tools_workflow, tools_sprints, discovery),
    on_time=on_time,
)

__all__ = ["TrackerState", "domain", "generate"]
