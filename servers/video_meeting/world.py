"""The seeded organisation: ~30 members on basic/pro/business plans, ~75 meetings over the past two
weeks and the next two, with participants and cloud recordings.

Archetypes present in every seed: four meetings live right now (an open one being recorded, a
locked one, a full one, one with somebody in its waiting room), a meeting starting later this
morning, an upcoming meeting hosted by a basic-plan member (no cloud recording), ended meetings with
recordings (shared, unshared, one deleted) and without, missed and cancelled meetings (never ran).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from servers.kit import Counters, Seeds, iso
from servers.kit.fake import REFERENCE_DATE
from servers.video_meeting.state import (
    PLAN_CAPACITY,
    PLAN_RECORDING,
    Meeting,
    MeetingState,
    Participant,
    Recording,
    User,
)

_DEPARTMENTS = ("Engineering", "Sales", "Marketing", "Finance", "People", "Design", "Support", "Legal")
_TOPICS = ("Weekly sync", "Sprint planning", "Design review", "1:1", "Quarterly business review", "Customer onboarding",
           "Interview debrief", "All-hands prep", "Budget check-in", "Incident retro", "Product demo",
           "Roadmap review", "Vendor call", "Standup", "Launch readiness", "Hiring sync")
_AGENDAS = ("", "Status updates, blockers, next steps.", "Walk through the latest mockups.",
            "Review numbers for the quarter and agree on targets.", "Demo of the new release, then Q&A.")


def generate(s: MeetingState, seeds: Seeds) -> None:
    _World(s, seeds).build()


class _World:
    def __init__(self, s: MeetingState, seeds: Seeds) -> None:
        self.s, self.seeds, self.rng, self.fake = s, seeds, seeds.rng, seeds.fake
        self.next: dict[str, int] = {}
        self.busy: dict[str, list[tuple[datetime, datetime]]] = {}
        self.users: list[User] = []

    def ident(self, prefix: str) -> str:
        n = self.next.get(prefix, 1)
        self.next[prefix] = n + 1
        return f"{prefix}-{n:04d}"

    def build(self) -> None:
        self.people()
        hosts = list(self.users)
        self.rng.shuffle(hosts)
        paid = [u for u in hosts if u.plan != "basic"]
        basic = [u for u in hosts if u.plan == "basic"]
        # live right now: four distinct paying hosts
        for kind, host in zip(("recording", "locked", "full", "waiting"), paid[:4], strict=True):
            self.live(host, kind)
        self.meeting(paid[4], REFERENCE_DATE + timedelta(minutes=30), 45, "scheduled")  # later this morning
        self.meeting(basic[0], REFERENCE_DATE + timedelta(hours=self.rng.randint(3, 30)), 30, "scheduled")
        # ended meetings with recordings: one shared, one private, one deleted
        for host, share in zip(paid[5:8], (True, False, None), strict=True):
            rid = self.meeting(host, self.slot(-6, -1), self.seeds.choice((45, 60)), "ended", record=True)
            rec = self.s.recordings[rid]
            if share:
                rec.shared_with = [self.s.meetings[rec.meeting_id].invitees[0]]
                rec.share_url = f"https://meet.prove.example/rec/{rid}"
            else:
                rec.shared_with, rec.share_url = [], None
            if share is None:
                rec.status, rec.deleted_at = "deleted", iso(REFERENCE_DATE - timedelta(hours=20))
        for _ in range(self.rng.randint(28, 36)):  # the past two weeks
            start = self.slot(-14, -1)
            status = self.seeds.choice(("ended",) * 6 + ("missed", "cancelled"))
            self.meeting(self.seeds.choice(hosts), start, self.seeds.choice((30, 45, 60, 90)), status)
        for _ in range(self.rng.randint(30, 38)):  # the next two weeks
            self.meeting(self.seeds.choice(hosts), self.slot(0, 14), self.seeds.choice((15, 30, 45, 60, 90)),
                         "scheduled")
        self.s.counters.set(Counters(next=dict(self.next)))

    def people(self) -> None:
        company = self.fake.company().split()[0].split(",")[0].lower()
        domain = f"{''.join(ch for ch in company if ch.isalpha()) or 'acme'}.example"
        seen: set[str] = set()
        n = self.rng.randint(26, 34)
        for i in range(n):
            first, last = self.fake.first_name(), self.fake.last_name()
            email = f"{first}.{last}@{domain}".lower()
            while email in seen:
                last = self.fake.last_name()
                email = f"{first}.{last}@{domain}".lower()
            seen.add(email)
            plan = "basic" if i < 3 else "pro" if i < 8 else "business" if i < 12 else self.seeds.choice(
                ("pro", "pro", "business", "business", "basic"))
            uid = self.ident("USR")
            user = User(uid, f"{first} {last}", email, plan, self.seeds.choice(_DEPARTMENTS))
            self.s.users.put(uid, user)
            self.users.append(user)

    def slot(self, lo: int, hi: int) -> datetime:
        day = REFERENCE_DATE.replace(hour=0) + timedelta(days=self.rng.randint(lo, hi))
        start = day + timedelta(minutes=self.rng.randrange(13 * 60, 23 * 60, 15))  # office hours across zones
        if start < REFERENCE_DATE + timedelta(hours=2) and lo >= 0:
            start += timedelta(days=1)
        return start

    def free(self, host: User, start: datetime, minutes: int) -> bool:
        end = start + timedelta(minutes=minutes)
        spans = self.busy.setdefault(host.user_id, [])
        if any(start < b and a < end for a, b in spans):
            return False
        spans.append((start, end))
        return True

    def guests(self, host: User, k: int) -> list[User | tuple[str, str]]:
        """``k`` attendees: mostly colleagues, sometimes outside guests (name, email)."""
        out: list[User | tuple[str, str]] = []
        for u in self.seeds.sample([u for u in self.users if u.user_id != host.user_id], k):
            if self.rng.random() < 0.2:
                name = self.fake.name()
                out.append((name, f"{name.split()[0]}.{name.split()[-1]}@{self.fake.free_email_domain()}".lower()))
            else:
                out.append(u)
        return out

    def new_meeting(self, host: User, start: datetime, minutes: int, status: str) -> Meeting:
        mid = self.ident("MTG")
        cap = PLAN_CAPACITY[host.plan]
        attendees = self.guests(host, self.rng.randint(1, 6))
        invitees = sorted(a.email if isinstance(a, User) else a[1] for a in attendees)
        created = start - timedelta(days=self.rng.randint(1, 10), minutes=self.rng.randrange(0, 600, 5))
        m = Meeting(mid, f"{self.seeds.choice(_TOPICS)} — {host.department}", host.user_id, "scheduled",
                    self.seeds.choice(_AGENDAS), iso(start), minutes, self.fake.numerify("######"),
                    self.rng.random() < 0.3, cap, self.rng.random() < 0.3, invitees, status,
                    iso(min(created, REFERENCE_DATE - timedelta(hours=1))))
        self._pending = attendees
        return m

    def participant(self, m: Meeting, who: User | tuple[str, str], role: str, state: str, at: datetime,
                    left: datetime | None = None) -> Participant:
        name, email, uid = (who.name, who.email, who.user_id) if isinstance(who, User) else (who[0], who[1], None)
        p = Participant(self.ident("PTC"), name, email, uid, role, state, m.mute_on_entry and role == "attendee",
                        iso(at), iso(left) if left else None)
        m.participants.append(p)
        return p

    def meeting(self, host: User, start: datetime, minutes: int, status: str, record: bool = False) -> str | None:
        """A meeting (skipped if the host is busy then); returns the id of its recording if it got one."""
        if not self.free(host, start, minutes):
            return None
        m = self.new_meeting(host, start, minutes, status)
        rid = None
        if status == "ended":
            rng = self.rng
            began = start + timedelta(minutes=rng.randint(0, 4))
            over = began + timedelta(minutes=max(10, minutes - rng.randint(0, 10)))
            m.started_at, m.ended_at = iso(began), iso(over)
            self.participant(m, host, "host", "left", began, over)
            for a in self._pending:
                if rng.random() < 0.85:
                    self.participant(m, a, "attendee", "left", began + timedelta(minutes=rng.randint(0, 5)), over)
            if PLAN_RECORDING[host.plan] and (record or rng.random() < 0.55):
                rec_start = began + timedelta(minutes=rng.randint(1, 5))
                m.recorded_segments = [[iso(rec_start), iso(over)]]
                length = round((over - rec_start).total_seconds() / 60)
                rid = self.ident("REC")
                shared = sorted(self.seeds.sample(m.invitees, min(len(m.invitees), rng.randint(0, 2))))
                self.s.recordings.put(rid, Recording(
                    rid, m.meeting_id, host.user_id, m.topic, iso(rec_start), iso(over), length,
                    round(length * 11.5 + 3.2, 1), "available", shared,
                    f"https://meet.prove.example/rec/{rid}" if shared else None, iso(over)))
        self.s.meetings.put(m.meeting_id, m)
        return rid

    def live(self, host: User, kind: str) -> None:
        rng = self.rng
        began = REFERENCE_DATE - timedelta(minutes=rng.randrange(5, 35, 5))
        minutes = rng.choice((60, 75, 90))
        start = began if rng.random() < 0.5 else began - timedelta(minutes=rng.choice((0, 5)))
        self.free(host, start, minutes + 30)
        m = self.new_meeting(host, start, minutes, "live")
        m.started_at = iso(began)
        m.ends_at = iso(max(start, began) + timedelta(minutes=minutes))
        m.waiting_room = kind == "waiting"
        m.locked = kind == "locked"
        self.participant(m, host, "host", "in_meeting", began)
        attendees = list(self._pending) + [u for u in self.users if u.user_id != host.user_id][:2]
        seen: set[str] = set()
        crowd = []
        for a in attendees:
            email = a.email if isinstance(a, User) else a[1]
            if email not in seen:
                seen.add(email)
                crowd.append(a)
        crowd = crowd[:5]
        for i, a in enumerate(crowd):
            joined = began + timedelta(minutes=rng.randint(0, 4))
            if kind == "waiting" and i == len(crowd) - 1:
                self.participant(m, a, "attendee", "waiting", REFERENCE_DATE - timedelta(minutes=2))
            else:
                p = self.participant(m, a, "co_host" if i == 0 and kind == "recording" else "attendee",
                                     "in_meeting", joined)
                p.muted = p.muted or rng.random() < 0.3
        if kind == "full":
            m.max_participants = sum(1 for p in m.participants if p.state == "in_meeting")
        if kind == "recording":
            m.recording_since = iso(began + timedelta(minutes=2))
        self.s.meetings.put(m.meeting_id, m)
