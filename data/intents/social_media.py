"""How people ask the social media server for things: per-tool phrasings and multi-tool goals."""

from __future__ import annotations

SELF: tuple[str, ...] = ("account",)
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "list_social_user_posts": {
        "ask": [
            "what has @{target_username} been posting lately?",
            "show me {target_username}'s page, I'm {account}",
            "pull up everything @{target_username} wrote about #{hashtag}",
        ],
        "vague": [
            "what's my friend been up to?",
            "I want to check out someone's profile",
        ],
    },
    "get_social_home_feed": {
        "ask": [
            "what's new from the people I follow? I'm {account}",
            "catch me up on my timeline",
            "anything on my feed tagged #{hashtag}?",
        ],
        "vague": [
            "what did I miss?",
            "show me what's going on",
        ],
    },
    "create_social_post": {
        "ask": [
            "post '{text}' from my account {account}",
            "tweet this for me: {text}",
            "share '{text}' but hold it until {schedule_at}",
            "put up '{text}' and don't let anyone reply",
        ],
        "vague": [
            "I want to share something",
            "help me put something out there",
        ],
    },
    "edit_social_post": {
        "ask": [
            "fix the typo in {post_id}, it should say '{text}'",
            "change my post {post_id} to read: {text}",
            "I'm {account}; reword {post_id} as '{text}'",
        ],
        "vague": [
            "I messed up something I just posted",
            "can I change what I wrote?",
        ],
    },
    "delete_social_post": {
        "ask": [
            "take down {post_id}",
            "I'm {account}; get rid of post {post_id}",
            "remove {post_id} from my profile, I regret it",
        ],
        "vague": [
            "I want something I posted gone",
            "please remove one of my posts",
        ],
    },
    "like_social_post": {
        "ask": [
            "heart {post_id} for me",
            "I'm {account}; give {post_id} a like",
            "take my like off {post_id}",
        ],
        "vague": [
            "I loved that post, show some love",
            "like that one",
        ],
    },
    "comment_on_social_post": {
        "ask": [
            "reply '{text}' under {post_id}",
            "I'm {account}; tell them '{text}' on {post_id}",
            "drop a comment on {post_id}: {text}",
        ],
        "vague": [
            "I want to say something on that post",
            "can I respond to what they wrote?",
        ],
    },
    "repost_social_post": {
        "ask": [
            "share {post_id} to my followers",
            "retweet {post_id} with '{quote}' on top",
            "I'm {account}; boost {post_id}",
        ],
        "vague": [
            "my followers need to see this",
            "pass that post along",
        ],
    },
    "search_social_users": {
        "ask": [
            "find {query} on here",
            "is there anyone called {query}?",
            "look up people in {query}, I'm {account}",
        ],
        "vague": [
            "I'm trying to find a friend's account",
            "who should I look for?",
        ],
    },
    "follow_social_user": {
        "ask": [
            "follow @{target_username}",
            "I'm {account}; start following {target_username}",
            "I want to see @{target_username}'s stuff, add them",
        ],
        "vague": [
            "I want to keep up with someone",
            "add that person for me",
        ],
    },
    "unfollow_social_user": {
        "ask": [
            "stop following @{target_username}",
            "I'm {account}; drop {target_username} from who I follow",
            "cancel my request to follow @{target_username}",
        ],
        "vague": [
            "I'm tired of seeing someone's posts",
            "I don't want to follow them anymore",
        ],
    },
    "respond_to_social_follow_request": {
        "ask": [
            "let @{requester_username} follow me",
            "I'm {account}; say no to {requester_username}'s request",
            "{decision} the follow request from @{requester_username}",
        ],
        "vague": [
            "someone wants to follow me",
            "I have people waiting to follow me",
        ],
    },
    "block_social_user": {
        "ask": [
            "block @{target_username}, they keep bothering me",
            "I'm {account}; I never want to hear from {target_username} again",
            "unblock @{target_username}, we made up",
        ],
        "vague": [
            "someone is harassing me",
            "I want to cut someone off",
        ],
    },
    "list_social_notifications": {
        "ask": [
            "anything new for me? I'm {account}",
            "show my unread alerts and clear them",
            "who's been interacting with my posts?",
        ],
        "vague": [
            "did anyone reply to me?",
            "what's been happening on my account?",
        ],
    },
    "update_social_account_settings": {
        "ask": [
            "make my account private, my password is {password}",
            "I'm {account}; change my bio to '{bio}', password {password}",
            "switch my name to {display_name}; password is {password}",
        ],
        "vague": [
            "I want to change my profile",
            "I'd like more privacy on my account",
        ],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["search_social_users", "follow_social_user"],
     "ask": ["find {query} and follow them",
             "my coworker {query} just joined, add them for me"]},
    {"tools": ["get_social_home_feed", "like_social_post"],
     "ask": ["like the newest thing on my timeline",
             "show some love to whatever my friends posted most recently"]},
    {"tools": ["list_social_user_posts", "comment_on_social_post"],
     "ask": ["say congrats on @{target_username}'s latest post",
             "reply '{text}' to the last thing @{target_username} shared"]},
    {"tools": ["list_social_user_posts", "repost_social_post"],
     "ask": ["share @{target_username}'s latest post with my followers",
             "boost whatever @{target_username} posted about #{hashtag}"]},
    {"tools": ["create_social_post", "edit_social_post"],
     "ask": ["post '{text}', then fix it to say it properly",
             "put up my announcement and correct the date in it right after"]},
    {"tools": ["list_social_notifications", "respond_to_social_follow_request"],
     "ask": ["approve everyone who asked to follow me today",
             "check who wants to follow me and let them in"]},
    {"tools": ["update_social_account_settings", "block_social_user"],
     "ask": ["lock down my account and block @{target_username}; password is {password}",
             "go private and get rid of @{target_username} for good, password {password}"]},
    {"tools": ["list_social_user_posts", "delete_social_post"],
     "ask": ["delete my most recent post",
             "get rid of everything I posted about #{hashtag}"]},
]
