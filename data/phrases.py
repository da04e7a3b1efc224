"""Phrase banks: how users ask for things and how personas talk. Optional, keyed by tool name.

The per-tool phrasings live with their domain in ``data/intents/<domain>.py`` (merged below).

A tool without an entry is phrased from its *name* (``data.speech.intent``: never its description,
which would teach matching text to docs), so a new domain works before its bank exists; the bank is
what makes it read like people. Slots are
parameter names (``{amount}``); a template is used only when every slot it names has a value, and
values the template does not name are still stated after it, so nothing the call needs is lost.
``ask`` templates are imperative clauses ("transfer {amount} from ..."), ``vague`` ones are what a
user says before giving details (minimal information level).
"""

from __future__ import annotations

from data import intents

PERSONAS: list[dict[str, object]] = [
    {"style": "formal", "role": "a finance manager who writes complete, courteous sentences",
     "open": ["Good morning.", "Hello,", "Good afternoon,", ""], "frame": ["Could you please {x}?", "I would like you to {x}.", "Please {x}."],
     "close": ["Thank you.", "Many thanks.", ""], "thanks": ["Thank you, that is helpful.", "Much appreciated."]},
    {"style": "casual", "role": "a busy parent who types quickly and informally",
     "open": ["hey!", "hi there", "ok so", ""], "frame": ["can you {x}?", "pls {x}", "{x} for me?", "need you to {x}"],
     "close": ["thx", "thanks!", ""], "thanks": ["awesome, thanks", "cool thx"]},
    {"style": "terse", "role": "an engineer who wants results, not chat",
     "open": [""], "frame": ["{x}.", "{X}.", "Need to {x}."],
     "close": [""], "thanks": ["ok.", "fine."]},
    {"style": "chatty", "role": "a retiree who likes to explain the context",
     "open": ["Hi! Hope you're having a nice day.", "Hello there, I could use a hand.", "Oh hello, quick favour?"],
     "frame": ["I was wondering if you could {x}?", "Would you mind helping me {x}?", "I'd love it if you could {x}."],
     "close": ["Thanks so much, dear!", "You're a lifesaver.", "Thank you kindly."], "thanks": ["Oh wonderful, thank you!", "Lovely, thanks a lot."]},
    {"style": "polite", "role": "a graduate student, polite and a little unsure",
     "open": ["Hi,", "Hello,", "Hi, sorry to bother you,"], "frame": ["could you {x}?", "would you be able to {x}?", "I think I need to {x}."],
     "close": ["Thanks in advance!", "Thank you!", ""], "thanks": ["Thanks, that helps!", "Great, thank you."]},
    {"style": "hurried", "role": "a sales rep between meetings",
     "open": ["Quick one:", "Real quick —", "Hey, quick thing:"], "frame": ["{x}, asap.", "{x} please.", "just {x}."],
     "close": ["Thanks.", "Cheers.", ""], "thanks": ["perfect, thanks", "great"]},
    {"style": "precise", "role": "an operations analyst who lists exact details",
     "open": ["Request:", "Hi. Task:", "Hello. Please handle the following."], "frame": ["{x}.", "please {x}.", "I need you to {x}."],
     "close": ["Confirm when done.", "Let me know the result.", ""], "thanks": ["Confirmed, thanks.", "Noted."]},
    {"style": "friendly", "role": "a small-business owner, upbeat and direct",
     "open": ["Hi!", "Hey there,", "Morning!"], "frame": ["could you {x}?", "let's {x}.", "I'd like to {x}."],
     "close": ["Thanks a bunch!", "Appreciate it!", ""], "thanks": ["Great, thanks!", "Perfect!"]},
]

CONNECT_TWO = ["{a}, and then {b}", "{a} and {b}", "first {a}, then {b}", "{a}; after that, {b}"]
CONNECT_MANY = ["first {a}, then {b}", "{a}, then {b}", "{a}; next, {b}"]

BANK: dict[str, dict[str, list[str]]] = intents.load()[0]
"""Every domain's tool phrasings, merged from ``data/intents/<domain>.py``."""
