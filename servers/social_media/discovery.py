"""Social media discovery tools (hidden from the model): accounts with what their owner knows (password,
who they follow, requests waiting, blocks) and every post with its state, for grounding requests."""

from __future__ import annotations

from typing import Literal

from servers.kit import discovery, value_counts
from servers.social_media.state import SocialState, counts


@discovery(produces=("username",))
def social_media_list_accounts(s: SocialState, is_private: bool | None = None) -> list:
    """Every account with display name, city, privacy, password, counts, who it follows, its followers,
    follow requests in and out, blocks set and unread notifications.

    Args:
        is_private: Only private (True) or only public (False) accounts.
    """
    out = []
    follows = list(s.follows.values())
    for a in s.accounts.values():
        if is_private is not None and a.is_private != is_private:
            continue
        out.append({
            "username": a.username, "display_name": a.display_name, "city": a.city, "email": a.email,
            "password": a.password, "is_private": a.is_private, "verified": a.verified, **counts(s, a.username),
            "following": sorted(f.followee for f in follows if f.follower == a.username and f.status == "active"),
            "followers": sorted(f.follower for f in follows if f.followee == a.username and f.status == "active"),
            "requests_sent": sorted(f.followee for f in follows if f.follower == a.username and f.status == "pending"),
            "requests_received": sorted(f.follower for f in follows
                                        if f.followee == a.username and f.status == "pending"),
            "blocked": sorted(b.blocked for b in s.blocks.values() if b.blocker == a.username),
            "blocked_by": sorted(b.blocker for b in s.blocks.values() if b.blocked == a.username),
            "unread_notifications": sum(1 for n in s.notifications.values()
                                        if n.recipient == a.username and not n.read),
        })
    return out


@discovery(produces=("post_id",))
def social_media_list_posts(s: SocialState, author: str | None = None,
                            status: Literal["published", "scheduled", "deleted"] | None = None) -> list:
    """Every post (published, scheduled or deleted) with author privacy, hashtags, mentions, counts, who
    liked it, whether comments are on, and what it reposts.

    Args:
        author: Only posts by this username.
        status: Only posts in this state.
    """
    likers: dict[str, list[str]] = {}
    for like in s.likes.values():
        likers.setdefault(like.post_id, []).append(like.username)
    return [{"post_id": p.post_id, "author": p.author, "author_private": s.accounts[p.author].is_private,
             "text": p.text, "hashtags": p.hashtags, "mentions": p.mentions, "created_at": p.created_at,
             "status": p.status, "repost_of": p.repost_of, "comments_enabled": p.comments_enabled,
             "like_count": p.like_count, "comment_count": p.comment_count, "repost_count": p.repost_count,
             "liked_by": sorted(likers.get(p.post_id, []))}
            for p in s.posts.values()
            if (author is None or p.author == author) and (status is None or p.status == status)]


@discovery
def social_media_get_unique_values(
    s: SocialState, field: Literal["hashtag", "city", "post_status", "notification_kind", "account_privacy"],
) -> list:
    """Distinct values of a categorical field with their counts.

    Args:
        field: Which field to enumerate.
    """
    if field == "hashtag":
        values = [t for p in s.posts.values() if p.status == "published" for t in p.hashtags]
    elif field == "city":
        values = [a.city for a in s.accounts.values()]
    elif field == "post_status":
        values = [p.status for p in s.posts.values()]
    elif field == "notification_kind":
        values = [n.kind for n in s.notifications.values()]
    else:
        values = ["private" if a.is_private else "public" for a in s.accounts.values()]
    return value_counts(values)
