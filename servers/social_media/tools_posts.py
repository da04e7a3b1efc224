"""Social media tools for posts: profiles' posts, the home feed, writing, editing, deleting, liking,
commenting and reposting."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.kit import IsoDateTime, Text, ToolError, iso, new_id, now, parse_datetime, tool
from servers.social_media.state import (
    DUPLICATE_WINDOW,
    EDIT_WINDOW,
    MAX_SCHEDULE_AHEAD,
    MIN_SCHEDULE_AHEAD,
    POST_MAX_CHARS,
    Comment,
    Like,
    Post,
    SocialState,
    announce,
    get_account,
    get_post,
    live_post,
    need_can_see,
    notify,
    pair,
    parse_text,
    post_view,
    profile,
    when,
)

PostText = Annotated[Text, Field(min_length=1, max_length=POST_MAX_CHARS)]
Limit = Annotated[int, Field(ge=1, le=50)]
Offset = Annotated[int, Field(ge=0, le=1000)]


def _page(rows: list[Post], offset: int, limit: int) -> list[Post]:
    rows.sort(key=lambda p: (p.created_at, p.post_id), reverse=True)
    return rows[offset:offset + limit]


def _tag(hashtag: str | None) -> str | None:
    return hashtag.strip().lstrip("#").lower() if hashtag else None


@tool(consumes=("username",), produces=("post_id",), read_only=True)
def list_social_user_posts(s: SocialState, target_username: str, account: str, limit: Limit = 20,
                           offset: Offset = 0, hashtag: str | None = None) -> dict:
    """Show an account's profile and its posts and reposts, newest first. A private account's posts are
    visible only to approved followers, and nothing is visible between blocked accounts. On your own
    profile your scheduled posts are listed too.

    Args:
        target_username: Whose posts to show (username, with or without @).
        account: Your own username (the account looking).
        limit: How many posts to return.
        offset: How many posts to skip (for paging).
        hashtag: Only posts with this hashtag (with or without #).
    """
    me = get_account(s, account, "account").username
    who = get_account(s, target_username, "target_username")
    need_can_see(s, me, who.username, "target_username")
    tag = _tag(hashtag)
    shown = ("published", "scheduled") if me == who.username else ("published",)
    rows = [p for p in s.posts.values() if p.author == who.username and p.status in shown
            and (tag is None or tag in p.hashtags)]
    return {"profile": profile(s, who, me), "total": len(rows),
            "posts": [post_view(s, p, me) for p in _page(rows, offset, limit)]}


@tool(consumes=("username",), produces=("post_id", "username"), read_only=True)
def get_social_home_feed(s: SocialState, account: str, limit: Limit = 20, offset: Offset = 0,
                         hashtag: str | None = None) -> dict:
    """Your home feed: posts and reposts by the accounts you follow (approved follows only) and your own,
    newest first, leaving out anything involving blocked accounts.

    Args:
        account: Your username.
        limit: How many posts to return.
        offset: How many posts to skip (for paging).
        hashtag: Only posts with this hashtag (with or without #).
    """
    me = get_account(s, account, "account").username
    authors = {f.followee for f in s.follows.values() if f.follower == me and f.status == "active"} | {me}
    blocked = {b.blocked for b in s.blocks.values() if b.blocker == me} | {
        b.blocker for b in s.blocks.values() if b.blocked == me}
    tag = _tag(hashtag)
    rows = []
    for p in s.posts.values():
        if p.status != "published" or p.author not in authors or p.author in blocked:
            continue
        if tag is not None and tag not in p.hashtags and not (
                p.repost_of and tag in s.posts[p.repost_of].hashtags):
            continue
        if p.repost_of:
            orig = s.posts[p.repost_of]
            if orig.author in blocked or (orig.status == "deleted" and not p.text) or (
                    s.accounts[orig.author].is_private and orig.author not in authors):
                continue
        rows.append(p)
    return {"account": me, "total": len(rows), "posts": [post_view(s, p, me) for p in _page(rows, offset, limit)]}


@tool(consumes=("username",), produces=("post_id",), establishes=("post_published",))
def create_social_post(s: SocialState, account: str, text: PostText, schedule_at: IsoDateTime | None = None,
                       comments_enabled: bool = True) -> dict:
    """Publish a post (at most 280 characters; #hashtags and @mentions are picked up, and mentioned
    accounts are notified), or schedule it for later. Posting the same text twice within a day is
    refused.

    Args:
        account: Your username (the author).
        text: The post's text.
        schedule_at: Publish later at this date-time (UTC unless an offset is given), 5 minutes to 30 days
            from now; omit to publish now.
        comments_enabled: Whether others may comment on the post.
    """
    me = get_account(s, account, "account").username
    body = text.strip()
    tags, mentions = parse_text(s, body, "text")
    at = now(s)
    status, publish = "published", at
    if schedule_at is not None:
        publish = parse_datetime(schedule_at, "schedule_at")
        if publish < at + MIN_SCHEDULE_AHEAD or publish > at + MAX_SCHEDULE_AHEAD:
            raise ToolError(f"schedule_at must be between 5 minutes and 30 days from now ({iso(at)}), got "
                            f"{iso(publish)}", field="schedule_at")
        status = "scheduled"
    for p in s.posts.values():
        if p.author == me and p.status != "deleted" and p.text == body and abs(when(p.created_at) - publish) \
                < DUPLICATE_WINDOW:
            raise ToolError(f"duplicate post: you already posted this exact text ({p.post_id}, {p.created_at}); "
                            "change the wording", field="text", code="duplicate")
    pid = new_id(s.counters, "PST")
    post = s.posts.put(pid, Post(pid, me, body, tags, [m for m in mentions if m != me], iso(publish), status,
                                 comments_enabled=comments_enabled))
    if status == "published":
        announce(s, post, post.mentions, at)
    return post_view(s, post, me)


@tool(consumes=("post_id", "username"), requires=("post_published",))
def edit_social_post(s: SocialState, post_id: str, account: str, text: PostText) -> dict:
    """Change the text of your own post: published posts within 60 minutes of publishing, scheduled posts
    any time before they go out. Plain reposts have no text to edit. Newly mentioned accounts are notified.

    Args:
        post_id: The post to edit, e.g. PST-0123.
        account: Your username; only the author can edit a post.
        text: The new text (at most 280 characters).
    """
    me = get_account(s, account, "account").username
    p = get_post(s, post_id, me)
    if p.author != me:
        raise ToolError(f"only its author @{p.author} can edit {p.post_id}", field="account", code="forbidden")
    if p.status == "deleted":
        raise ToolError(f"cannot edit {p.post_id}: the post was deleted", field="post_id", code="deleted")
    if p.repost_of and not p.text:
        raise ToolError(f"{p.post_id} is a plain repost and has no text to edit", field="post_id",
                        code="illegal_state")
    at = now(s)
    if p.status == "published" and at - when(p.created_at) > EDIT_WINDOW:
        raise ToolError(f"edit window closed: {p.post_id} was published at {p.created_at} and posts can only be "
                        "edited within 60 minutes; delete it and post again instead", field="post_id",
                        code="expired")
    body = text.strip()
    if body == p.text:
        raise ToolError(f"{p.post_id} already has exactly this text", field="text")
    tags, mentions = parse_text(s, body, "text")
    rec = s.posts.edit(p.post_id)
    new_mentions = [m for m in mentions if m not in rec.mentions and m != me]
    rec.text, rec.hashtags, rec.mentions, rec.edited_at = body, tags, [m for m in mentions if m != me], iso(at)
    if rec.status == "published":
        announce(s, rec, new_mentions, at)
    return post_view(s, rec, me)


@tool(consumes=("post_id", "username"), requires=("post_published",), establishes=("post_deleted",))
def delete_social_post(s: SocialState, post_id: str, account: str) -> dict:
    """Delete one of your own posts or reposts (a scheduled post is cancelled). Deleted posts can no longer
    be liked, commented on or reposted.

    Args:
        post_id: The post to delete.
        account: Your username; only the author can delete a post.
    """
    me = get_account(s, account, "account").username
    p = get_post(s, post_id, me)
    if p.author != me:
        raise ToolError(f"only its author @{p.author} can delete {p.post_id}", field="account", code="forbidden")
    if p.status == "deleted":
        raise ToolError(f"{p.post_id} was already deleted at {p.deleted_at}", field="post_id", code="deleted")
    rec = s.posts.edit(p.post_id)
    was = rec.status
    rec.status, rec.deleted_at = "deleted", iso(now(s))
    if rec.repost_of and was == "published":
        orig = s.posts.edit(rec.repost_of)
        orig.repost_count = max(0, orig.repost_count - 1)
    return {"post_id": rec.post_id, "status": "deleted", "was": was, "deleted_at": rec.deleted_at}


@tool(consumes=("post_id", "username"), requires=("post_published",), establishes=("post_liked",))
def like_social_post(s: SocialState, post_id: str, account: str, unlike: bool = False) -> dict:
    """Like a post you can see (liking a repost likes the original), or take your like back. A post can be
    liked once per account.

    Args:
        post_id: The post to like.
        account: Your username.
        unlike: True to remove your like instead.
    """
    me = get_account(s, account, "account").username
    p = live_post(s, post_id, me, "unlike" if unlike else "like")
    key = pair(p.post_id, me)
    if unlike and key not in s.likes:
        raise ToolError(f"you have not liked {p.post_id}", field="post_id", code="illegal_state")
    if not unlike and key in s.likes:
        raise ToolError(f"you already liked {p.post_id} (at {s.likes[key].liked_at}); a post can be liked "
                        "only once", field="post_id", code="duplicate")
    rec = s.posts.edit(p.post_id)
    if unlike:
        s.likes.delete(key)
        rec.like_count -= 1
    else:
        s.likes.put(key, Like(p.post_id, me, iso(now(s))))
        rec.like_count += 1
        notify(s, p.author, "like", me, p.post_id, now(s))
    return {"post_id": p.post_id, "liked_by_you": not unlike, "like_count": rec.like_count}


@tool(consumes=("post_id", "username"), requires=("post_published",), produces=("comment_id",))
def comment_on_social_post(s: SocialState, post_id: str, account: str, text: PostText) -> dict:
    """Comment on a post you can see, unless its author turned comments off; the author is notified.

    Args:
        post_id: The post to comment on.
        account: Your username.
        text: The comment (at most 280 characters).
    """
    me = get_account(s, account, "account").username
    p = live_post(s, post_id, me, "comment on")
    if not p.comments_enabled:
        raise ToolError(f"@{p.author} turned comments off for {p.post_id}", field="post_id", code="forbidden")
    parse_text(s, text, "text")
    at = now(s)
    cid = new_id(s.counters, "CMT")
    s.comments.put(cid, Comment(cid, p.post_id, me, text.strip(), iso(at)))
    s.posts.edit(p.post_id).comment_count += 1
    notify(s, p.author, "comment", me, p.post_id, at)
    return {"comment_id": cid, "post_id": p.post_id, "author": me, "text": text.strip(), "created_at": iso(at),
            "comment_count": s.posts[p.post_id].comment_count}


@tool(consumes=("post_id", "username"), requires=("post_published",), produces=("post_id",))
def repost_social_post(s: SocialState, post_id: str, account: str, quote: PostText | None = None) -> dict:
    """Share a public post with your followers, optionally with your own comment on top (a quote post).
    Posts of private accounts cannot be reposted, and a post can be plainly reposted once per account.

    Args:
        post_id: The post to share.
        account: Your username.
        quote: Your own text shown above the shared post; omit for a plain repost.
    """
    me = get_account(s, account, "account").username
    p = live_post(s, post_id, me, "repost")
    if s.accounts[p.author].is_private:
        raise ToolError(f"@{p.author}'s account is private: their posts cannot be reposted", field="post_id",
                        code="private")
    body = (quote or "").strip()
    if not body and any(q.author == me and q.repost_of == p.post_id and not q.text and q.status == "published"
                        for q in s.posts.values()):
        raise ToolError(f"you already reposted {p.post_id}", field="post_id", code="duplicate")
    tags, mentions = parse_text(s, body, "quote")
    at = now(s)
    pid = new_id(s.counters, "PST")
    post = s.posts.put(pid, Post(pid, me, body, tags, [m for m in mentions if m != me], iso(at), "published",
                                 repost_of=p.post_id))
    s.posts.edit(p.post_id).repost_count += 1
    notify(s, p.author, "repost", me, pid, at)
    announce(s, post, post.mentions, at)
    return post_view(s, post, me)
