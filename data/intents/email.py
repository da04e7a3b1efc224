"""Email: how people ask about their mail (format: data/intents/__init__.py).

The mailbox is known from the session, so ``mailbox`` is never a slot: people say "my inbox"."""

from __future__ import annotations

SELF: tuple[str, ...] = ("mailbox",)
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "list_email_drafts": {
        "ask": [
            "show me the emails I started but never sent",
            "tell me what drafts I have lying around",
            "go through my drafts, most recent at the top",
        ],
        "vague": ["find the email I was in the middle of writing", "show me what I left unfinished"],
    },
    "create_email_draft": {
        "ask": [
            "draft an email for {to} about {subject} but don't send it yet",
            "write up a draft titled {subject} saying {body}",
            "start a reply draft for {reply_to_email_id} saying {body}, I'll send it later",
            "prepare a message for {to}, copying in {cc}, that says {body}",
            "put together a draft email I can finish later",
            "start a draft for {to}",
            "write a draft saying {body}",
            "save a draft for {to} that says {body}",
        ],
        "vague": ["help me start an email I'll send later", "start writing something for me"],
    },
    "update_email_draft": {
        "ask": [
            "change the subject of {draft_id} to {subject}",
            "rewrite {draft_id} so it says {body}",
            "put {to} as the recipient of {draft_id}",
            "copy {cc} in on {draft_id}",
            "edit {draft_id}",
            "make some changes to {draft_id}",
        ],
        "vague": ["fix something in my draft", "edit my unsent email"],
    },
    "send_email_draft": {
        "ask": [
            "send {draft_id}",
            "go ahead and send {draft_id} as it is",
            "fire off {draft_id} now",
        ],
        "vague": ["send off the email I was working on", "get my draft out the door"],
    },
    "delete_email_draft": {
        "ask": [
            "delete {draft_id}",
            "throw away {draft_id}, I won't be sending it",
            "get rid of {draft_id}",
        ],
        "vague": ["throw away a draft I don't need", "clean up a draft I abandoned"],
    },
    "search_emails": {
        "ask": [
            "find my emails about {query}",
            "show me what {sender} sent me",
            "look in my {folder} for anything about {query}",
            "pull up the last {limit} messages from {sender}",
            "find mail from {sender} between {since} and {until}",
            "show me everything labelled {label}",
            "look through my mail",
            "show me my latest {limit} emails",
            "find emails about {query} from {sender}",
            "dig through my {folder} for me",
        ],
        "vague": ["help me find an email", "check whether I got anything from them"],
    },
    "read_email": {
        "ask": [
            "open {email_id}",
            "read me {email_id}",
            "show me the full text of {email_id} and what's attached",
        ],
        "vague": ["tell me what that email says", "open that message for me"],
    },
    "get_email_thread": {
        "ask": [
            "show me the whole back-and-forth in {thread_id}",
            "open {thread_id} from the first message on",
            "catch me up on {thread_id}",
        ],
        "vague": ["catch me up on that conversation", "show me the whole discussion"],
    },
    "send_email": {
        "ask": [
            "email {to} about {subject} saying {body}",
            "send {to} a message titled {subject}: {body}",
            "drop {to} a line about {subject} saying {body} and copy in {cc}",
            "send {to} an email titled {subject} that says {body}, blind-copying {bcc}",
        ],
        "vague": ["send an email for me", "write to someone for me"],
    },
    "reply_to_email": {
        "ask": [
            "answer {email_id} with {body}",
            "write back on {email_id} saying {body}",
            "respond to {email_id}: {body}",
            "reply saying {body}",
        ],
        "vague": ["get back to someone for me", "answer that message"],
    },
    "forward_email": {
        "ask": [
            "share {email_id} with {to}",
            "loop {to} in on {email_id}",
            "send {to} a copy of {email_id}, with a line on top saying {note}",
            "forward {email_id} so {to} sees it, copying in {cc}",
            "share that email with {to}",
        ],
        "vague": ["pass a message along", "show someone else an email I got"],
    },
    "list_email_labels": {
        "ask": [
            "show me my folders and labels",
            "tell me how many unread emails I have in each folder",
            "list the labels I've made",
        ],
        "vague": ["show me how my mail is organised", "tell me how much unread mail I have"],
    },
    "create_email_label": {
        "ask": [
            "create a label called {name}",
            "make a {color} label named {name}",
            "set up a new tag {name} for sorting my mail",
        ],
        "vague": ["give me a new way to sort my mail", "add a label"],
    },
    "modify_email_labels": {
        "ask": [
            "tag {email_id} with {add_labels}",
            "take {remove_labels} off {email_id}",
            "label {email_id} as {add_labels} and drop {remove_labels}",
        ],
        "vague": ["fix the labels on that email", "sort this message properly"],
    },
    "move_email_to_folder": {
        "ask": [
            "move {email_id} to my {folder}",
            "put {email_id} in {folder}",
            "send {email_id} over to {folder}",
            "file {email_id} under {folder}",
            "move that message to {folder}",
        ],
        "vague": ["get that email out of my inbox", "put this message where it belongs"],
    },
    "mark_email_read": {
        "ask": [
            "mark {email_id} as read",
            "clear the unread dot on {email_id}",
            "change whether {email_id} shows up as read",
        ],
        "vague": ["update whether that email counts as read", "sort out the unread state of an email"],
    },
    "star_email": {
        "ask": [
            "star {email_id}",
            "put a star on {email_id} so I don't lose it",
            "flag {email_id} as important",
        ],
        "vague": ["help me keep an eye on that email", "mark that one so I find it later"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["search_emails", "reply_to_email"],
     "ask": ["find the latest email from {sender} and reply saying {body}",
             "answer whatever {sender} sent me about {query}, telling them {body}"]},
    {"tools": ["search_emails", "forward_email"],
     "ask": ["send {to} the email I got about {query}",
             "find the message from {sender} and share it with {to}"]},
    {"tools": ["search_emails", "read_email", "star_email"],
     "ask": ["find {sender}'s message about {query}, read it to me and star it",
             "open the newest email about {query} and flag it so I don't forget"]},
    {"tools": ["create_email_draft", "update_email_draft", "send_email_draft"],
     "ask": ["draft a note for {to} about {subject}, add {cc} on copy, then send it",
             "write up an email titled {subject} saying {body}, fix it up and send it off"]},
    {"tools": ["list_email_drafts", "send_email_draft"],
     "ask": ["send {draft_id}, it's somewhere in my drafts",
             "find my unfinished email and send it as it is"]},
    {"tools": ["create_email_label", "search_emails", "modify_email_labels"],
     "ask": ["make a {name} label and put it on the latest email from {sender}",
             "start tagging the receipts from {sender} under a new {color} label called {name}"]},
    {"tools": ["search_emails", "move_email_to_folder"],
     "ask": ["move the latest message from {sender} to {folder}",
             "get the email about {query} out of my inbox and into {folder}"]},
    {"tools": ["search_emails", "get_email_thread", "reply_to_email"],
     "ask": ["catch me up on the conversation about {query} and reply saying {body}",
             "read through the thread with {sender} and answer the last message with {body}"]},
]
