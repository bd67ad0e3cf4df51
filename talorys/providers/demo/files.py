"""Questions about the files attached to the owner's message: the demo answers with the passage
that shares the most words with the question, quoted, and its citation linked to the page.

It reads the attached files' text where a model reads it: the last section of the system prompt
(agent/prompt.py, ATTACHED_INTRO), each passage under its label "[file 12: report.pdf, p. 3]"
(talorys/providers/base.py, file_label).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from talorys.providers.base import FILE_LABEL, ChatMessage

# The first words of agent/prompt.py's ATTACHED_INTRO, and the line that ends it.
_INTRO = "Files the owner attached to this message"
_PAGE = re.compile(r"^(?P<name>.+), p\. (?P<page>\d+)$")
_NOT_READY = re.compile(r"^\[file \d+: (?P<name>.+?)\] is still being read", re.MULTILINE)
_WORD = re.compile(r"[^\W_]{3,}")
# Words that say nothing of what the question is about.
_COMMON = frozenset(
    [
        "the",
        "and",
        "for",
        "what",
        "does",
        "say",
        "about",
        "this",
        "that",
        "with",
        "from",
        "are",
        "was",
        "were",
        "which",
        "file",
        "files",
        "attached",
        "document",
        "page",
        "pages",
        "tell",
        "please",
        "how",
        "who",
        "when",
        "where",
        "why",
        "can",
        "you",
        "your",
    ]
)
QUOTE_CHARS = 300


@dataclass(frozen=True)
class Passage:
    file_id: int
    name: str
    page: int | None
    place: str  # "report.pdf, p. 3", "notes.md, Costs" or the name alone
    text: str

    @property
    def link(self) -> str:
        return f"/files/{self.file_id}/content" + (f"#page={self.page}" if self.page else "")


def attached_section(messages: list[ChatMessage]) -> str | None:
    """The attached files' section of the system prompt, or None when nothing is attached."""
    for message in messages:
        if message.role == "system" and _INTRO in message.content:
            return message.content[message.content.index(_INTRO) :]
    return None


def passages(section: str) -> list[Passage]:
    labels = list(FILE_LABEL.finditer(section))
    found = []
    for n, label in enumerate(labels):
        end = labels[n + 1].start() if n + 1 < len(labels) else len(section)
        rest = label["rest"]
        paged = _PAGE.match(rest)
        name = paged["name"] if paged else rest
        page = int(paged["page"]) if paged else None
        text = section[label.end() : end].strip()
        found.append(Passage(int(label["id"]), name, page, rest, text))
    return found


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON}


def _best_sentence(text: str, asked: set[str]) -> str:
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()] or [text]
    best = max(sentences, key=lambda s: len(_words(s) & asked))
    quote = " ".join(best.split())
    return quote if len(quote) <= QUOTE_CHARS else quote[: QUOTE_CHARS - 1].rstrip() + "…"


def answer_from_files(question: str, section: str) -> str:
    """A quote of the passage closest to ``question`` with its linked citation; or what the
    section says of files not ready yet."""
    found = passages(section)
    if not found:
        waiting = [match["name"] for match in _NOT_READY.finditer(section)]
        if waiting:
            return f"{', '.join(waiting)} is still being read; ask again in a moment."
        return "The attached file has no text I can read."
    asked = _words(question)
    best = max(found, key=lambda p: len(_words(p.text + " " + p.place) & asked))
    quote = _best_sentence(best.text, asked)
    return f"From the attached file: “{quote}” ([{best.place}]({best.link}))"
