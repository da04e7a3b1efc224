"""Issue tracker: how engineers and leads ask (format: data/intents/__init__.py)."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ("issue_key", "project_key")

BANK: dict[str, dict[str, list[str]]] = {
    "list_tracker_projects": {
        "ask": [
            "which projects am I on?",
            "what teams are there and who runs each one?",
            "which of our projects have a sprint going right now?",
        ],
        "vague": [
            "give me the lay of the land",
            "what are we working on across the org?",
        ],
    },
    "search_project_issues": {
        "ask": [
            "what's {assignee} working on in {project_key}?",
            "show me the {priority} priority {issue_type}s that are still open",
            "anything tagged {label} in {project_key}?",
            "what's sitting in the {project_key} backlog?",
            "find the ticket about {query}",
        ],
        "vague": [
            "what's on my plate?",
            "show me some tickets",
        ],
    },
    "get_issue_details": {
        "ask": [
            "what's going on with {issue_key}?",
            "open {issue_key} for me",
            "who's on {issue_key} and what's it waiting for?",
        ],
        "vague": [
            "tell me about that ticket",
            "I need the full story on an issue",
        ],
    },
    "create_project_issue": {
        "ask": [
            "file a {issue_type} in {project_key}: {title}",
            "open a {priority} {issue_type} for {project_key} called {title} and give it to {assignee}",
            "log a ticket in {project_key} - {title}, {story_points} points",
        ],
        "vague": [
            "I found a bug and want to report it",
            "can you make a ticket for me?",
        ],
    },
    "update_issue_fields": {
        "ask": [
            "bump {issue_key} to {priority}",
            "rename {issue_key} to {title}",
            "tag {issue_key} with {labels}",
            "{issue_key} touches {components} too",
        ],
        "vague": [
            "that ticket needs some cleanup",
            "fix up the details on an issue",
        ],
    },
    "add_project_member": {
        "ask": [
            "put {username} on the {project_key} team",
            "{username} is joining {project_key}, give them access",
            "add {username} to {project_key} so we can hand them work",
        ],
        "vague": [
            "we have someone new on the team",
            "bring a teammate into a project",
        ],
    },
    "transition_issue_status": {
        "ask": [
            "I'm starting on {issue_key}",
            "{issue_key} is ready for review",
            "ship it - {issue_key} is finished",
            "{issue_key} is stuck: {comment}",
            "move {issue_key} to {status}",
        ],
        "vague": [
            "update where my ticket is at",
            "that issue moved along, reflect it",
        ],
    },
    "assign_issue": {
        "ask": [
            "give {issue_key} to {assignee}",
            "I'll take {issue_key}",
            "nobody should own {issue_key} for now",
        ],
        "vague": [
            "someone needs to pick up that ticket",
            "change who is on an issue",
        ],
    },
    "estimate_issue_story_points": {
        "ask": [
            "{issue_key} is a {story_points}",
            "size {issue_key} at {story_points} points",
            "we re-pointed {issue_key} to {story_points}",
        ],
        "vague": [
            "let's put a size on that ticket",
            "the estimate on an issue is off",
        ],
    },
    "add_issue_comment": {
        "ask": [
            "reply on {issue_key}: {body}",
            "leave a note on {issue_key} saying {body}",
            "tell everyone on {issue_key} that {body}",
        ],
        "vague": [
            "I want to say something on a ticket",
            "drop a note on an issue",
        ],
    },
    "link_issues": {
        "ask": [
            "{issue_key} can't ship until {other_issue_key} is done",
            "{issue_key} is holding up {other_issue_key}",
            "connect {issue_key} with {other_issue_key}, they're about the same thing",
        ],
        "vague": [
            "these two tickets depend on each other",
            "record a dependency between issues",
        ],
    },
    "update_issue_watchers": {
        "ask": [
            "keep me posted on {issue_key}",
            "I don't need updates on {issue_key} anymore",
            "make sure {username} hears about changes to {issue_key}",
        ],
        "vague": [
            "I want notifications for a ticket",
            "stop the emails about an issue",
        ],
    },
    "log_issue_work": {
        "ask": [
            "I spent {minutes} minutes on {issue_key}",
            "put {minutes} minutes against {issue_key} for {work_date}",
            "record {minutes} minutes on {issue_key}: {note}",
        ],
        "vague": [
            "I need to fill in my timesheet",
            "track the time I put in today",
        ],
    },
    "list_project_sprints": {
        "ask": [
            "what sprints does {project_key} have?",
            "show me the {state} sprints in {project_key}",
            "how did the last few {project_key} iterations go?",
        ],
        "vague": [
            "how are our iterations looking?",
            "what's the sprint schedule?",
        ],
    },
    "create_project_sprint": {
        "ask": [
            "plan {name} for {project_key} starting {start_date}",
            "set up a {duration_weeks}-week iteration in {project_key} called {name} from {start_date}",
            "{project_key} needs a new sprint {name} beginning {start_date}, aiming to {goal}",
        ],
        "vague": [
            "let's plan the next iteration",
            "we need another sprint on the calendar",
        ],
    },
    "add_issues_to_sprint": {
        "ask": [
            "pull {issue_keys} into {sprint_id}",
            "we're committing to {issue_keys} in {sprint_id}",
            "put {issue_keys} on the {sprint_id} plan",
        ],
        "vague": [
            "fill up the next sprint",
            "bring some tickets into the iteration",
        ],
    },
    "remove_issue_from_sprint": {
        "ask": [
            "kick {issue_key} out of the sprint",
            "we won't get to {issue_key} this time, put it back",
            "descope {issue_key}",
        ],
        "vague": [
            "the sprint is overloaded, drop something",
            "take a ticket off the plan",
        ],
    },
    "start_project_sprint": {
        "ask": [
            "kick off {sprint_id}",
            "let's go - begin {sprint_id} today",
            "{sprint_id} is planned, get it running",
        ],
        "vague": [
            "time to start the next iteration",
            "the team is ready, let's get going",
        ],
    },
    "close_project_sprint": {
        "ask": [
            "wrap up {sprint_id} and push leftovers to {move_unfinished_to}",
            "end {sprint_id}, anything unfinished goes back to the backlog",
            "we're done with {sprint_id}, close it out",
        ],
        "vague": [
            "the iteration is over",
            "finish off the current sprint",
        ],
    },
    "get_sprint_board": {
        "ask": [
            "how is {sprint_id} going?",
            "show me the board for {sprint_id}",
            "who's overloaded in {sprint_id} and what's stuck?",
        ],
        "vague": [
            "are we on track this sprint?",
            "where do we stand this iteration?",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["create_project_issue", "assign_issue", "estimate_issue_story_points"],
     "ask": ["report a {priority} bug in {project_key} called {title}, give it to {assignee} and size it at "
             "{story_points}",
             "we need a ticket for {title} in {project_key}; {assignee} owns it, it's a {story_points}"]},
    {"tools": ["assign_issue", "transition_issue_status", "log_issue_work"],
     "ask": ["I'm picking up {issue_key} now and already put {minutes} minutes in",
             "take {issue_key}, start it and record my first {minutes} minutes"]},
    {"tools": ["get_issue_details", "transition_issue_status"],
     "ask": ["finish {issue_key} if nothing is holding it up anymore",
             "check whether {issue_key} is still waiting on anything and close it if not"]},
    {"tools": ["add_project_member", "assign_issue"],
     "ask": ["{username} joined {project_key}; hand them {issue_key}",
             "bring {username} onto {project_key} and put them on {issue_key}"]},
    {"tools": ["create_project_sprint", "add_issues_to_sprint", "start_project_sprint"],
     "ask": ["plan {name} in {project_key} from {start_date} with {issue_keys} and kick it off",
             "set up the next iteration for {project_key} with {issue_keys} and get it going"]},
    {"tools": ["get_sprint_board", "close_project_sprint", "start_project_sprint"],
     "ask": ["close {sprint_id}, roll the leftovers into {move_unfinished_to} and start that one",
             "check how {sprint_id} ended up, wrap it and begin the next one"]},
    {"tools": ["link_issues", "add_issue_comment"],
     "ask": ["{issue_key} waits on {other_issue_key}; note it on the ticket so people know why",
             "mark {issue_key} as held up by {other_issue_key} and explain: {body}"]},
    {"tools": ["search_project_issues", "add_issues_to_sprint"],
     "ask": ["pull the top {priority} backlog items of {project_key} into {sprint_id}",
             "grab the open {label} tickets in {project_key} and put them in {sprint_id}"]},
]
