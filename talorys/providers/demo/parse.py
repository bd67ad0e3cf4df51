"""Which request the owner's message is (its intent, what and when), from the few plain ones the
demo understands; HELP lists them for anything else."""

from __future__ import annotations

import re
from dataclasses import dataclass

from talorys.lib.subjects import subject_of

HELP = (
    "This is the demo assistant: no AI model is configured, so I only understand a few plain "
    "requests:\n"
    "- “add a task to buy milk” or “remind me to call Ana”\n"
    "- “remind me to call Sam in 20 minutes” (or “at 17:30”, “tomorrow at 9am”)\n"
    "- “remember that my sister is called Ana”, or “I live in Berlin”, “I moved to Lisbon”, "
    "“I work at Acme”, “I'm allergic to peanuts”, “I'm vegetarian”, “my phone number is …”\n"
    "- “what are my open tasks?”\n"
    "- “mark buy milk done” or “I bought the milk”\n"
    "- “delete the task buy milk”\n"
    "- “create a note Groceries: eggs, bread”\n\n"  # a paragraph of its own, not the last item's
    "Configure a model in Settings to chat freely."
)

# A weekday, as talorys/lib/when.py reads one: "friday", "fri", "tues".
_WEEKDAYS = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?\b"
# Spelled amounts too: "in half an hour" is a reminder whose time talorys/lib/when.py cannot
# read, which the answer says, rather than a task named after it.
_AMOUNT = (
    r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty-five|half an?"
)
_UNIT = r"min(?:ute)?s?|h(?:ou)?rs?|days?"
# Where a reminder's time starts: "at 5pm", "in 10 minutes", "tomorrow", "friday", "on friday",
# "next friday", ... (when.py then reads it, with its one rule for a weekday).
_WHEN = (
    rf"(?:at \d|at noon|at midnight|in (?:{_AMOUNT}) (?:{_UNIT})\b|tomorrow|tonight|"
    rf"today|this (?:morning|afternoon|evening)|(?:on |this |next )?{_WEEKDAYS}|next week|every )"
)
_TASK = r"(?:a |an |the )?(?:new )?task(?::\s*|\s+)(?:called |named |titled |to )?"
_NOTE = r"(?:a )?(?:new )?note(?::\s*|\s+)(?:called |named |titled )?"
# The task a completion names: "the task X", "my X", "the X" or just "X".
_DONE_TASK = rf"(?:{_TASK}|the |my )?"
_DONE = r"(?:done|complete|completed|finished)"
# "I bought the milk": a past tense tells a task done (the matching task says "buy").
# Not the verbs that tell of something other than a task done ("I wanted to ...").
_PAST = (
    r"(?!(?:started|tried|wanted|needed|decided|learned|liked|loved|hated|hoped|noticed|"
    r"reali[sz]ed|missed|failed|forgot)\b)"
    r"(?:[a-z]+ed|bought|paid|sent|did|wrote|made|took|got|brought|sold|gave|met|rang|fed)"
)

# (intent, pattern) in order; the first match wins.
_PATTERNS: list[tuple[str, str]] = [
    ("timed_reminder", rf"^remind me to (?P<what>.+?) (?P<when>{_WHEN}.*)$"),
    ("timed_reminder", rf"^remind me (?P<when>{_WHEN}.*?),? to (?P<what>.+)$"),
    ("timed_reminder", rf"^(?P<when>{_WHEN}.*?),? remind me to (?P<what>.+)$"),
    ("create_task", r"^remind me to (?P<what>.+)$"),
    ("remember", r"^remember(?: that |:\s*)(?P<what>.+)$"),
    # A fact about the owner told in the first person: home, work, allergies, names, a change.
    (
        "tell_fact",
        r"^(?P<what>i(?:'ve| have)? (?:just )?(?:live|moved|relocated|work|started working|"
        r"started a (?:new )?job|left|quit|no longer|stopped|used to)\b.+)$",
    ),
    (
        "tell_fact",
        r"^(?P<what>i(?:'m| am) (?:moving|living|working|based|allergic|no longer|not allergic)"
        r"\b.+)$",
    ),
    ("tell_fact", r"^(?P<what>i (?:don't|do not) .+ any ?more)$"),
    ("tell_fact", r"^(?P<what>my .+?(?: is called | is named |'s name is ).+)$"),
    (
        "tell_fact",
        r"^(?P<what>my (?:[\w']+ ){0,3}?(?:phone|mobile|cell|e-?mail)(?: number| address)?"
        r"(?: is|:) .+)$",
    ),
    (
        "tell_fact",
        r"^(?P<what>i(?:'m| am) (?:now |still )?(?:an? )?(?:vegetarian|vegan|pescatarian)\b.*)$",
    ),
    ("tell_fact", r"^(?P<what>i (?:now |still )?eat meat\b.*)$"),
    ("list_tasks", r"^(?:what are|show(?: me)?|list) (?:all )?my (?:open )?tasks$"),
    ("list_tasks", r"^what(?:'s| is) on my (?:to-?do )?list$"),
    ("delete_task", rf"^(?:delete|remove) {_TASK}(?P<what>.+)$"),
    ("complete_task", rf"^mark {_DONE_TASK}(?P<what>.+?) (?:as )?{_DONE}$"),
    ("complete_task", rf"^mark (?:as )?{_DONE}:? {_DONE_TASK}(?P<what>.+)$"),
    (
        "complete_task",
        rf"^(?:complete|finish|check off|tick off|cross off) {_DONE_TASK}(?P<what>.+)$",
    ),
    (
        "complete_task",
        rf"^(?:i'm |i am |i've |i have )?(?:done|finished) with {_DONE_TASK}(?P<what>.+)$",
    ),
    (
        "complete_task",
        rf"^i(?:'ve| have)? (?:just )?(?:done|did|finished|completed) {_DONE_TASK}(?P<what>.+)$",
    ),
    (
        "complete_task",
        rf"^i(?:'ve| have)? (?:just |already )?(?P<verb>{_PAST}) (?:the |my )?(?P<what>.+)$",
    ),
    ("create_note", rf"^(?:create|make|add|write) {_NOTE}(?P<what>.+)$"),
    ("create_task", rf"^(?:add|create) {_TASK}(?P<what>.+)$"),
    ("create_task", r"^add (?P<what>.+?) to my (?:tasks|task list|to-?do list|list)$"),
    # "add buy milk tomorrow 9am", as quick add takes it (dates.py reads the date).
    ("create_task", r"^add (?P<what>.+)$"),
]
_COMPILED = [(intent, re.compile(pattern, re.IGNORECASE)) for intent, pattern in _PATTERNS]


@dataclass(frozen=True)
class DemoRequest:
    intent: str
    what: str = ""
    when: str = ""
    verb: str = ""  # "bought" in "I bought the milk": the task says "buy" (choosing.py)


def parse_request(text: str) -> DemoRequest | None:
    cleaned = text.strip().replace("’", "'")
    cleaned = re.sub(r"^(?:please|hey|ok|okay),? ", "", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"(?:,? please)?[\s.!?]*$", "", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"\s+", " ", cleaned)
    for intent, pattern in _COMPILED:
        match = pattern.match(cleaned)
        if match is not None and not _a_fact_in_the_past(match):
            groups = match.groupdict()
            return DemoRequest(
                intent=intent,
                what=_unquote(groups.get("what") or ""),
                when=groups.get("when") or "",
                verb=(groups.get("verb") or "").lower(),
            )
    return None


def _a_fact_in_the_past(match: re.Match[str]) -> bool:
    """ "I lived in Berlin", "I worked at Acme": a fact about the owner, not a task done."""
    return bool(match.groupdict().get("verb")) and subject_of(match.string).topic != "statement"


def _unquote(text: str) -> str:
    return text.strip().strip("\"'“”‘’«»").strip()


def capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
