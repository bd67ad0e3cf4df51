"""Cutting a file's text into passages: a few paragraphs each, never across a page or a
heading, so each passage can be cited by its page ("report.pdf, p. 3") or its heading."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass

# About a screenful: long enough to answer from, short enough that a search hit is the place
# and that a budget of a few thousand characters holds several of them.
PASSAGE_CHARS = 1500
_PARAGRAPHS = re.compile(r"\n\s*\n")
_SPACES = re.compile(r"[ \t\f\v\r]+")


@dataclass(frozen=True)
class Section:
    """A run of text with one place: a PDF's page, or what is under one heading."""

    text: str
    page: int | None = None
    heading: str = ""


@dataclass(frozen=True)
class Passage:
    text: str
    page: int | None = None
    heading: str = ""

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def _pieces(paragraph: str) -> Iterator[str]:
    """A paragraph longer than a passage, cut at spaces."""
    while len(paragraph) > PASSAGE_CHARS:
        cut = paragraph.rfind(" ", 0, PASSAGE_CHARS)
        cut = cut if cut > PASSAGE_CHARS // 2 else PASSAGE_CHARS
        yield paragraph[:cut].strip()
        paragraph = paragraph[cut:].strip()
    if paragraph:
        yield paragraph


def passages(sections: Iterable[Section]) -> list[Passage]:
    """Each section's paragraphs, gathered up to PASSAGE_CHARS a passage."""
    found: list[Passage] = []
    for section in sections:
        current: list[str] = []
        length = 0
        text = _SPACES.sub(" ", section.text)
        for paragraph in _PARAGRAPHS.split(text):
            for piece in _pieces(paragraph.strip()):
                if current and length + len(piece) > PASSAGE_CHARS:
                    found.append(Passage("\n\n".join(current), section.page, section.heading))
                    current, length = [], 0
                current.append(piece)
                length += len(piece) + 2
        if current:
            found.append(Passage("\n\n".join(current), section.page, section.heading))
    return found
