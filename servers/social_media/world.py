"""The seeded social world: 40 accounts in the shared cities (about a quarter private), a follow graph
with pending requests, a few blocks, ~300 posts over the last month with hashtags, mentions, reposts and
quote posts, likes and comments from followers, and recent notifications.

Archetypes in every seed: a public account that does not follow a private one; a private account with
posts, approved followers and a pending request; a block between two accounts; a deleted post; a post
with comments turned off; a post published minutes ago (still editable); a post scheduled to go out
within the hour (it mentions someone) and later scheduled posts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from servers.kit import Counters, Seeds, iso, new_id
from servers.kit.fake import REFERENCE_DATE
from servers.kit.geo import CITIES
from servers.social_media.data import BIO_PARTS, COMMENTS, POST_TEMPLATES, SCHEDULED_TEMPLATES
from servers.social_media.state import (
    HASHTAG,
    MENTION,
    Account,
    Block,
    Comment,
    Follow,
    Like,
    Notification,
    Post,
    SocialState,
    pair,
)

REF = REFERENCE_DATE
N_ACCOUNTS = 40
_CLEAN = re.compile(r"[^a-z0-9_]")


@dataclass
class _Draft:
    at: datetime
    author: str
    text: str
    status: str = "published"
    repost_of: int | None = None  # index of the original draft


class _World:
    def __init__(self, s: SocialState, seeds: Seeds) -> None:
        self.s, self.seeds, self.rng, self.fake = s, seeds, seeds.rng, seeds.fake
        self.names: list[str] = []
        self.followees: dict[str, list[str]] = {}
        self.events: list[tuple[datetime, str, str, str, str | None]] = []  # (at, recipient, kind, actor, post)

    # -- accounts -----------------------------------------------------------------------------
    def accounts(self) -> None:
        rng, fake = self.rng, self.fake
        for i in range(N_ACCOUNTS):
            name = fake.name()
            base = _CLEAN.sub("", fake.user_name().lower())[:24] or f"user{i}"
            username = base if base not in self.s.accounts else f"{base}_{i}"
            city = CITIES[i % len(CITIES)].name if i < len(CITIES) else self.seeds.choice(CITIES).name
            bio = " ".join(self.seeds.sample(BIO_PARTS, rng.randint(1, 3)))
            self.s.accounts.put(username, Account(
                username=username, display_name=name, bio=f"{bio} {city}.", city=city,
                email=f"{username}@{self.seeds.choice(('gmail.com', 'outlook.com', 'proton.me'))}",
                password=fake.password(length=12, special_chars=False), is_private=rng.random() < 0.22,
                verified=rng.random() < 0.1, joined_at=iso(REF - timedelta(days=rng.randint(100, 3000)))))
            self.names.append(username)
        a, p, r = (self.s.accounts[n] for n in self.names[:3])
        a.is_private, p.is_private, r.is_private = False, True, False
        for n in self.names[3:9]:  # the blocker, the blocked and the scheduled / comments-off authors
            self.s.accounts[n].is_private = False

    # -- the graph ----------------------------------------------------------------------------
    def graph(self) -> None:
        rng, s, names = self.rng, self.s, self.names
        viewer, private, requester = names[:3]
        blocks = [(names[3], names[4])]
        while len(blocks) < 4:
            x, y = self.seeds.sample(names[9:], 2)
            if (x, y) not in blocks and (y, x) not in blocks:
                blocks.append((x, y))
        for x, y in blocks:
            s.blocks.put(pair(x, y), Block(x, y, iso(REF - timedelta(days=rng.randint(1, 200)))))
        forced = {(viewer, n): "active" for n in names[3:9]} | {(requester, private): "pending"}
        forced |= {(n, private): "active" for n in names[5:9]}
        for f in names:
            for t in self.seeds.sample(names, rng.randint(5, 14)):
                if t != f and (f, t) not in forced and (f, t) != (viewer, private):
                    forced[(f, t)] = "active" if not s.accounts[t].is_private or rng.random() < 0.75 else "pending"
        for (f, t), status in sorted(forced.items()):
            if pair(f, t) in s.blocks or pair(t, f) in s.blocks:
                continue
            at = REF - timedelta(days=rng.randint(0, 400), minutes=rng.randint(0, 1439))
            s.follows.put(pair(f, t), Follow(f, t, status, iso(at)))
            if at > REF - timedelta(days=3) or status == "pending":
                self.events.append((at, t, "follow_request" if status == "pending" else "follow", f, None))

    def friend_of(self, author: str) -> str:
        if not self.followees:
            for f in self.s.follows.values():
                if f.status == "active":
                    self.followees.setdefault(f.follower, []).append(f.followee)
        mine = self.followees.get(author, [])
        return self.seeds.choice(mine) if mine else author

    def fill(self, template: str, author: str) -> str:
        city = self.s.accounts[author].city
        return template.format(n=self.rng.randint(2, 30), city=city.replace(" ", "").lower(), city_name=city,
                               friend=self.friend_of(author))

    # -- posts --------------------------------------------------------------------------------
    def posts(self) -> None:
        rng, names = self.rng, self.names
        drafts: list[_Draft] = []
        for author in names:
            for _ in range(rng.randint(3, 10)):
                at = REF - timedelta(minutes=rng.randint(90, 30 * 1440))
                drafts.append(_Draft(at, author, self.fill(self.seeds.choice(POST_TEMPLATES), author)))
        viewer = names[0]
        drafts.append(_Draft(REF - timedelta(minutes=rng.randint(8, 15)), viewer,
                             self.fill(self.seeds.choice(POST_TEMPLATES), viewer)))  # still editable
        drafts.append(_Draft(REF + timedelta(minutes=rng.randint(30, 50)), names[8],
                             self.fill(self.seeds.choice(SCHEDULED_TEMPLATES), names[8]), "scheduled"))
        for n in self.seeds.sample(names[9:], 3):
            drafts.append(_Draft(REF + timedelta(hours=rng.randint(5, 240)), n,
                                 self.fill(self.seeds.choice(SCHEDULED_TEMPLATES), n), "scheduled"))
        public = [i for i, d in enumerate(drafts) if d.status == "published" and not self.s.accounts[d.author].is_private]
        for _ in range(28):  # reposts and quote posts of public posts by followers
            i = self.seeds.choice(public)
            fans = self.fans.get(drafts[i].author, [])
            if not fans:
                continue
            at = drafts[i].at + timedelta(minutes=rng.randint(5, 3000))
            if at < REF:
                quote = self.seeds.choice(("", "", "This!", "Couldn't agree more.", "Worth a read."))
                drafts.append(_Draft(at, self.seeds.choice(fans), quote, repost_of=i))
        order = sorted(range(len(drafts)), key=lambda i: (drafts[i].at, drafts[i].author, drafts[i].text))
        ids: dict[int, str] = {}
        for i in order:
            d = drafts[i]
            pid = new_id(self.s.counters, "PST")
            ids[i] = pid
            p = Post(pid, d.author, d.text, list(dict.fromkeys(t.lower() for t in HASHTAG.findall(d.text))),
                     list(dict.fromkeys(m.lower() for m in MENTION.findall(d.text) if m.lower() != d.author)),
                     iso(d.at), d.status, repost_of=ids[d.repost_of] if d.repost_of is not None else None)
            self.s.posts.put(pid, p)
            if p.repost_of:
                self.s.posts[p.repost_of].repost_count += 1
                self.events.append((d.at, self.s.posts[p.repost_of].author, "repost", d.author, pid))
            if d.status == "published":
                self.events += [(d.at, m, "mention", d.author, pid) for m in p.mentions]
        originals = [p for p in self.s.posts.values() if p.status == "published" and not p.repost_of
                     and p.author not in names[:3] and not self.s.accounts[p.author].is_private]
        gone, closed = self.seeds.sample(originals, 2)
        gone.status, gone.deleted_at = "deleted", iso(datetime.fromisoformat(gone.created_at) + timedelta(hours=2))
        closed.comments_enabled = False
        for p in originals:
            if p is not closed and p is not gone and self.rng.random() < 0.08:
                p.comments_enabled = False

    # -- reactions ----------------------------------------------------------------------------
    def reactions(self) -> None:
        rng, s, fans = self.rng, self.s, self.fans
        for p in list(s.posts.values()):
            if p.status == "scheduled" or (p.repost_of and not p.text):
                continue
            start = datetime.fromisoformat(p.created_at)
            audience = fans.get(p.author, [])
            for who in self.seeds.sample(audience, min(len(audience), rng.randint(0, 8))):
                at = min(REF - timedelta(minutes=1), start + timedelta(minutes=rng.randint(1, 2000)))
                s.likes.put(pair(p.post_id, who), Like(p.post_id, who, iso(at)))
                p.like_count += 1
                self.events.append((at, p.author, "like", who, p.post_id))
            if p.comments_enabled and audience and rng.random() < 0.4:
                for _ in range(rng.randint(1, 4)):
                    who = self.seeds.choice(audience)
                    at = min(REF - timedelta(minutes=1), start + timedelta(minutes=rng.randint(1, 3000)))
                    cid = new_id(s.counters, "CMT")
                    s.comments.put(cid, Comment(cid, p.post_id, who, self.seeds.choice(COMMENTS), iso(at)))
                    p.comment_count += 1
                    self.events.append((at, p.author, "comment", who, p.post_id))

    def notifications(self) -> None:
        recent = sorted(e for e in self.events if e[0] > REF - timedelta(days=4) or e[2] == "follow_request")
        for at, recipient, kind, actor, post_id in recent:
            if recipient == actor:
                continue
            nid = new_id(self.s.counters, "NTF", 5)
            self.s.notifications.put(nid, Notification(nid, recipient, kind, actor, post_id, iso(at),
                                                       read=at < REF - timedelta(days=1) and kind != "follow_request"))

    def build(self) -> None:
        self.accounts()
        self.graph()
        self.fans: dict[str, list[str]] = {}  # followee -> approved followers
        for f in self.s.follows.values():
            if f.status == "active":
                self.fans.setdefault(f.followee, []).append(f.follower)
        self.posts()
        self.reactions()
        self.notifications()


def generate(s: SocialState, seeds: Seeds) -> None:
    s.counters.set(Counters())
    _World(s, seeds).build()
