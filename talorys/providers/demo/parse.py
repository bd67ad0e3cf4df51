"""Which request the owner's message is (its intent, what and when), from the few plain ones the
demo understands; HELP lists them for anything else."""

from __future__ import annotations

import re
from dataclasses import dataclass

HELP = (
    "This is the demo assistant: no AI model is configured, so I only understand a few plain "
    "requests:\n"
    "- “add a task to buy milk” or “remind me to call Ana”\n"
    "- “remind me to call Sam in 20 minutes” (or “at 17:30”, “tomorrow at 9am”)\n"
    "- “remember that my sister is called Ana”, or “I live in Berlin”, “I moved to Lisbon”, "
    "“I work at Acme”, “I'm allergic to peanuts”, “I no longer eat meat”\n"
    "- “what are my open tasks?”\n"
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
    ("list_tasks", r"^(?:what are|show(?: me)?|list) (?:all )?my (?:open )?tasks$"),
    ("list_tasks", r"^what(?:'s| is) on my (?:to-?do )?list$"),
    ("delete_task", rf"^(?:delete|remove) {_TASK}(?P<what>.+)$"),
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


def parse_request(text: str) -> DemoRequest | None:
    cleaned = text.strip().replace("’", "'")
    cleaned = re.sub(r"^(?:please|hey|ok|okay),? ", "", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"(?:,? please)?[\s.!?]*$", "", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"\s+", " ", cleaned)
    for intent, pattern in _COMPILED:
        match = pattern.match(cleaned)
        if match is not None:
            groups = match.groupdict()
            return DemoRequest(
                intent=intent,
                what=_unquote(groups.get("what") or ""),
                when=groups.get("when") or "",
            )
    return None


def _unquote(text: str) -> str:
    return text.strip().strip("\"'“”‘’«»").strip()


def capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
