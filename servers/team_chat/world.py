"""The seeded team-chat world: ~30 members, ~20 channels and direct messages, ~350 messages.

Every seed has the archetypes the failure rules need: an admins-only #announcements, an archived
channel you belong to, a private channel you are in, one you are invited to, one you are not in, a
public channel you have not joined, your own messages (one with a thread, one edited), other
people's messages with replies and reactions (one you already reacted to), pinned and deleted
messages, a deactivated member, members with statuses that expire, and scheduled messages of yours
that come due later today and tomorrow (and a colleague's).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from servers.kit import Counters, Seeds, iso
from servers.kit.fake import REFERENCE_DATE
from servers.team_chat import data
from servers.team_chat.state import (
    Channel,
    Member,
    Message,
    Revision,
    ScheduledMessage,
    TeamChatState,
    Workspace,
    mentions_in,
)

NOW = REFERENCE_DATE


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _members(s: TeamChatState, seeds: Seeds, company_domain: str) -> list[Member]:
    rng, fake = seeds.rng, seeds.fake
    taken: set[str] = set()
    out: list[Member] = []
    n = rng.randint(26, 34)
    for i in range(1, n + 1):
        first, last = fake.first_name(), fake.last_name()
        handle = f"{_slug(first)}.{_slug(last)}"
        while handle in taken:
            handle = f"{_slug(first)}.{_slug(last)}{rng.randint(2, 99)}"
        taken.add(handle)
        mid = seeds.ident("USR", i)
        out.append(Member(mid, handle, f"{first} {last}", seeds.choice(data.TITLES), f"{handle}@{company_domain}",
                          is_admin=False, active=True))
    # roles: index 0 is "you", 1-3 admins, the last one or two deactivated
    order = list(range(1, n))
    rng.shuffle(order)
    for i in order[:rng.randint(2, 3)]:
        out[i].is_admin = True
    for i in [j for j in order if not out[j].is_admin][:rng.randint(1, 2)]:
        out[i].active = False
    statused = [m for m in out[1:] if m.active]
    for k, m in enumerate(seeds.sample(statused, rng.randint(4, 6))):
        text, emoji, minutes = data.STATUSES[k % len(data.STATUSES)]
        m.status_text, m.status_emoji = text, emoji
        m.status_until = iso(NOW + timedelta(minutes=minutes + rng.randrange(0, 60, 15)))
    for m in out:
        s.members.put(m.member_id, m)
    return out


class _Builder:
    """Collects messages with temporary keys, then assigns ids in posting-time order."""

    def __init__(self, s: TeamChatState, seeds: Seeds, members: list[Member]) -> None:
        self.s, self.seeds, self.rng = s, seeds, seeds.rng
        self.members = members
        self.active = [m for m in members if m.active]
        self.rows: list[dict[str, Any]] = []
        self.project = seeds.choice(data.PROJECTS)

    def fill(self, template: str, author_id: str) -> str:
        rng = self.rng
        others = [m for m in self.active if m.member_id != author_id]
        return template.format(
            person=f"@{self.seeds.choice(others).handle}", day=self.seeds.choice(data.DAYS),
            time=self.seeds.choice(data.TIMES), num=rng.randint(2, 98), project=self.project,
            ticket=f"{self.project[:3].upper()}-{rng.randint(100, 999)}", title=self.seeds.choice(data.TITLES),
        )

    def add(self, channel: Channel, author_id: str, template: str, minutes_ago: int, parent: int | None = None,
            **extra: Any) -> int:
        self.rows.append({"channel": channel, "author": author_id, "template": template,
                          "text": self.fill(template, author_id), "minutes_ago": minutes_ago, "parent": parent,
                          **extra})
        return len(self.rows) - 1

    def thread(self, channel: Channel, parent: int, count: int) -> None:
        ago = self.rows[parent]["minutes_ago"]
        authors = [m for m in channel.members if channel.posting == "everyone" or self.s.members[m].is_admin]
        for _ in range(count):
            ago = max(1, ago - self.rng.randint(3, 240))
            self.add(channel, self.seeds.choice(authors), self.seeds.choice(data.REPLIES), ago, parent)

    def channel(self, c: Channel, n_top: int, span_days: int, end_ago: int = 10) -> list[int]:
        rng = self.rng
        authors = [m for m in c.members if c.posting == "everyone" or self.s.members[m].is_admin]
        templates = data.THEMES[c.theme] + data.COMMON
        tops = []
        for _ in range(n_top):
            idx = self.add(c, self.seeds.choice(authors), self.seeds.choice(templates),
                           rng.randint(end_ago, span_days * 1440))
            tops.append(idx)
            if rng.random() < 0.25:
                self.thread(c, idx, rng.randint(1, 5))
        return tops

    def commit(self, me_id: str) -> dict[int, str]:
        """Write every message; returns temp key -> message id."""
        s, rng = self.s, self.rng
        order = sorted(range(len(self.rows)), key=lambda i: (-self.rows[i]["minutes_ago"], i))
        ids: dict[int, str] = {}
        for n, i in enumerate(order, start=1):
            row = self.rows[i]
            c: Channel = row["channel"]
            at = NOW - timedelta(minutes=row["minutes_ago"])
            mid = self.seeds.ident("MSG", n, 5)
            ids[i] = mid
            parent_id = ids.get(row["parent"]) if row["parent"] is not None else None
            msg = Message(mid, c.channel_id, row["author"], row["text"], iso(at), thread_parent_id=parent_id,
                          mentions=mentions_in(s, row["text"]))
            if row.get("edited"):
                old = self.fill(row["template"], row["author"])
                if old == row["text"]:
                    old = row["text"].rstrip(".!") + " (will confirm later)"
                edited = min(NOW, at + timedelta(minutes=rng.randint(1, 9)))
                msg.revisions.append(Revision(old, iso(edited)))
                msg.edited_at = iso(edited)
            if rng.random() < 0.35 or row.get("my_reaction"):
                for emoji in self.seeds.sample(data.REACTION_POOL, rng.randint(1, 3)):
                    who = self.seeds.sample(c.members, min(len(c.members), rng.randint(1, 5)))
                    msg.reactions[emoji] = [w for w in who if w != me_id]
                if row.get("my_reaction"):
                    first = next(iter(msg.reactions))
                    msg.reactions[first].append(me_id)
                msg.reactions = {e: w for e, w in msg.reactions.items() if w}
            if row.get("deleted"):
                msg.deleted, msg.deleted_at = True, iso(min(NOW, at + timedelta(minutes=rng.randint(2, 30))))
            elif row.get("pinned"):
                msg.pinned_by, msg.pinned_at = self.seeds.choice(c.members), iso(min(NOW, at + timedelta(minutes=5)))
            if parent_id is not None:
                parent = s.messages[parent_id]
                parent.reply_count += 1
                parent.last_reply_at = iso(at)
            s.messages.put(mid, msg)
        return ids


def generate(s: TeamChatState, seeds: Seeds) -> None:
    rng, fake = seeds.rng, seeds.fake
    company = fake.company().replace(",", "")
    company_domain = f"{_slug(company.split()[0]) or 'team'}.com"
    members = _members(s, seeds, company_domain)
    you, active = members[0], [m for m in members if m.active]
    ids = [m.member_id for m in active]
    s.workspace.set(Workspace(f"{company.split()[0]} {seeds.choice(data.WORKSPACE_SUFFIXES)}",
                              f"{_slug(company)}.chat", you.member_id))
    admins = [m.member_id for m in members if m.is_admin]
    b = _Builder(s, seeds, members)
    n_chan = 0

    def channel(name: str, theme: str, kind: str, posting: str, member_ids: list[str], *, archived: bool = False,
                invited: list[str] | None = None, created_days: int = 400) -> Channel:
        nonlocal n_chan
        n_chan += 1
        cid = seeds.ident("CHN", n_chan)
        creator = member_ids[0] if member_ids else you.member_id
        ordered = [m for m in ids + [x.member_id for x in members if not x.active] if m in set(member_ids)]
        c = Channel(cid, name, kind, data.TOPICS.get(theme, ""), theme, creator,
                    iso(NOW - timedelta(days=created_days + rng.randint(0, 200))), archived, posting, ordered,
                    list(invited or []))
        s.channels.put(cid, c)
        return c

    def some(p_lo: float, p_hi: float, include_you: bool) -> list[str]:
        others = [m for m in ids if m != you.member_id]
        picked = seeds.sample(others, max(3, int(len(others) * rng.uniform(p_lo, p_hi))))
        return ([you.member_id] if include_you else []) + picked

    public = list(data.CHANNELS)
    not_joined = set(seeds.sample([c[0] for c in public[2:]], 2))
    made: dict[str, Channel] = {}
    for name, theme, kind, posting in public:
        if name in ("general", "announcements"):
            made[name] = channel(name, theme, kind, posting, list(ids))
        else:
            made[name] = channel(name, theme, kind, posting, some(0.3, 0.7, name not in not_joined))
    proj = f"proj-{b.project.lower()}"
    made[proj] = channel(proj, "project", "public", "everyone", some(0.2, 0.4, True), created_days=40)
    made["leadership"] = channel("leadership", "leadership", "private", "everyone",
                                 admins + seeds.sample([m for m in ids[1:] if m not in admins], 3))
    made["offsite-planning"] = channel("offsite-planning", "offsite", "private", "everyone", some(0.1, 0.2, False),
                                       invited=[you.member_id])
    made["hiring-committee"] = channel("hiring-committee", "hiring", "private", "everyone", some(0.1, 0.25, True))
    old = seeds.choice([p for p in data.PROJECTS if p != b.project])
    made["archived"] = channel(f"proj-{old.lower()}-2025", "project", "public", "everyone", some(0.2, 0.4, True),
                               archived=True)
    made["hackathon"] = channel("hackathon-2025", "social", "public", "everyone", some(0.2, 0.5, False),
                                archived=True)

    for key, c in made.items():
        if c.archived:
            b.channel(c, rng.randint(6, 10), 80, end_ago=30 * 1440)
        else:
            b.channel(c, rng.randint(10, 22) if c.posting == "everyone" else rng.randint(4, 7), 14)
        if key == "archived":
            b.add(c, you.member_id, seeds.choice(data.THEMES["project"]), 40 * 1440)
    # your own messages in channels you can post to, one with a thread and one edited
    mine = [c for k, c in made.items() if c.kind == "public" and not c.archived and c.posting == "everyone"
            and you.member_id in c.members]
    for k, c in enumerate(seeds.sample(mine, 3)):
        idx = b.add(c, you.member_id, seeds.choice(data.THEMES[c.theme]), rng.randint(60, 3 * 1440),
                    edited=k == 1)
        if k == 0:
            b.thread(c, idx, rng.randint(2, 4))
    # other people's messages with your reaction, a pinned one and a deleted one
    for k, c in enumerate(seeds.sample(mine, 3)):
        others = [m for m in c.members if m != you.member_id]
        b.add(c, seeds.choice(others), seeds.choice(data.THEMES[c.theme]), rng.randint(30, 2 * 1440),
              my_reaction=k == 0, pinned=k == 1, deleted=k == 2)
    for row in seeds.sample([r for r in b.rows if r["parent"] is None and r["author"] != you.member_id], 6):
        row["pinned"] = True
    for row in seeds.sample([r for r in b.rows if r["parent"] is None and not r.get("pinned")], 4):
        row["edited"] = True
    # direct messages: a few with active colleagues, one with a deactivated account
    partners = seeds.sample([m for m in members[1:] if m.active], rng.randint(3, 4))
    partners += [m for m in members if not m.active][:1]
    for other in partners:
        pair = sorted([you.handle, other.handle])
        c = channel(f"dm-{pair[0]}-{pair[1]}", "dm", "dm", "everyone", [you.member_id, other.member_id],
                    created_days=30)
        c.topic = c.theme = ""
        ago = rng.randint(600, 9 * 1440) if other.active else rng.randint(40, 60) * 1440
        for _ in range(rng.randint(2, 6)):
            ago = max(5, ago - rng.randint(5, 600))
            b.add(c, seeds.choice(c.members), seeds.choice(data.DM_LINES), ago)
    b.commit(you.member_id)
    n_msg = len(b.rows)
    # scheduled messages of yours: later today in a channel, tomorrow morning as a thread reply
    target = seeds.choice(mine)
    today_at = NOW.replace(hour=13, minute=0) + timedelta(minutes=rng.randrange(0, 180, 15))
    s.scheduled.put("SCH-0001", ScheduledMessage("SCH-0001", target.channel_id, you.member_id,
                                                 f"Reminder: {b.project} sync notes are due today.",
                                                 iso(today_at), iso(NOW - timedelta(hours=20))))
    parent = next(m for m in s.messages.values() if m.channel_id == target.channel_id
                  and m.thread_parent_id is None and not m.deleted)
    s.scheduled.put("SCH-0002", ScheduledMessage("SCH-0002", target.channel_id, you.member_id,
                                                 "Following up on this one, any update?",
                                                 iso(NOW.replace(hour=9, minute=30) + timedelta(days=1)),
                                                 iso(NOW - timedelta(hours=3)), thread_parent_id=parent.message_id))
    colleague = seeds.choice([m for m in target.members if m != you.member_id])
    s.scheduled.put("SCH-0003", ScheduledMessage("SCH-0003", target.channel_id, colleague,
                                                 "Don't forget to fill in the team survey today!",
                                                 iso(NOW.replace(hour=11, minute=0)), iso(NOW - timedelta(days=1))))
    s.counters.set(Counters({"MSG": n_msg + 1, "CHN": n_chan + 1, "SCH": 4}))
