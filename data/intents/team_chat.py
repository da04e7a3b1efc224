"""Team chat: how users ask (format: data/intents/__init__.py)."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "list_chat_channels": {
        "ask": [
            "which channels am I in",
            "show me the channels I haven't joined yet",
            "is there a channel about {query}",
            "do I have any pending channel invites",
            "include the archived ones and show me every channel with {query} in the name",
        ],
        "vague": ["what channels are there", "where do people talk about stuff here"],
    },
    "get_chat_channel_messages": {
        "ask": [
            "catch me up on {channel}",
            "what's been said in {channel} since {since}",
            "show me the whole thread under message {thread_parent_id} in {channel}",
            "pull up the last {limit} messages in {channel}",
            "what did that message in {channel} say before it was edited",
        ],
        "vague": ["what did I miss", "show me the conversation"],
    },
    "search_chat_messages": {
        "ask": [
            "find the message where someone talked about {query}",
            "what has {author} been posting lately",
            "look for {query} in {channel}",
            "did anyone mention me today",
            "show me everything pinned in {channel}",
        ],
        "vague": ["I'm looking for an old message", "someone said something about this, can you find it"],
    },
    "find_chat_members": {
        "ask": [
            "who is {query} on chat",
            "what's the handle for {query}",
            "who's in {channel}",
            "is {query} around or are they out today",
        ],
        "vague": ["who should I ask", "find a colleague for me"],
    },
    "join_chat_channel": {
        "ask": [
            "add me to {channel}",
            "I want to be in {channel}",
            "accept the invite to {channel}",
            "sign me up for {channel}",
        ],
        "vague": ["get me into that channel", "I'd like to follow that team's chatter"],
    },
    "post_chat_message": {
        "ask": [
            "say \"{text}\" in {channel}",
            "post {text} to {channel}",
            "reply \"{text}\" under message {thread_parent_id} in {channel}",
            "send \"{text}\" to {channel} at {send_at}",
            "tell {channel} that {text}",
        ],
        "vague": ["I want to let the team know something", "can you write something in the channel for me"],
    },
    "send_chat_direct_message": {
        "ask": [
            "DM {member}: {text}",
            "privately tell {member} that {text}",
            "ping {member} directly and say \"{text}\"",
            "message {member} one on one: {text}",
        ],
        "vague": ["I need to reach someone privately", "send a quick note to a colleague"],
    },
    "edit_chat_message": {
        "ask": [
            "fix my message {message_id} so it reads \"{text}\"",
            "change what I wrote in {message_id} to {text}",
            "I made a typo in {message_id}, it should say \"{text}\"",
        ],
        "vague": ["I need to correct something I wrote", "my last message has a mistake"],
    },
    "delete_chat_message": {
        "ask": [
            "take down my message {message_id}",
            "remove {message_id}, I posted it by mistake",
            "don't send {message_id} after all, cancel it",
        ],
        "vague": ["get rid of what I just posted", "I regret that message"],
    },
    "react_to_chat_message": {
        "ask": [
            "put a :{emoji}: on {message_id}",
            "react with {emoji} to {message_id}",
            "take my {emoji} off {message_id}",
        ],
        "vague": ["give that message a thumbs up", "acknowledge that post"],
    },
    "pin_chat_message": {
        "ask": [
            "pin {message_id} so nobody loses it",
            "keep {message_id} at the top of the channel",
            "unpin {message_id}, it's outdated",
        ],
        "vague": ["make that message easy to find", "that announcement should stay visible"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["list_chat_channels", "join_chat_channel", "post_chat_message"],
     "ask": ["accept my invite to {channel} and say hi to everyone there",
             "join {channel} and let them know {text}"]},
    {"tools": ["get_chat_channel_messages", "post_chat_message"],
     "ask": ["catch me up on {channel} and answer the latest question in its thread",
             "see what people asked in {channel} this morning and reply that I'm on it"]},
    {"tools": ["find_chat_members", "send_chat_direct_message"],
     "ask": ["find {query} and privately ask them to review my doc",
             "look up who handles IT and DM them that my VPN is broken"]},
    {"tools": ["search_chat_messages", "edit_chat_message"],
     "ask": ["find my message about {query} and correct the date in it",
             "I wrote the wrong time in my standup note, find it and fix it"]},
    {"tools": ["search_chat_messages", "react_to_chat_message", "pin_chat_message"],
     "ask": ["find the wifi password message, thumbs it up and pin it",
             "look up the release announcement, celebrate it with a tada and keep it pinned"]},
    {"tools": ["post_chat_message", "delete_chat_message"],
     "ask": ["schedule a reminder in {channel} for tomorrow morning, actually no, cancel the one I set earlier",
             "replace my scheduled reminder in {channel} with one that goes out at {send_at}"]},
    {"tools": ["get_chat_channel_messages", "delete_chat_message", "post_chat_message"],
     "ask": ["take back what I said in {channel} and post a corrected version",
             "my last post in {channel} was wrong, remove it and write {text} instead"]},
]
