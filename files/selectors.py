"""Reads of the owner's files: one file, the list, a file's passages, search over passages
(recall's kind ``file``), and the text of attached files for a chat turn (``files_context``).

A binned file is invisible here: to get, list, search, the tools and the context alike."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from files.models import File, FilePassage
from memory.recall.sources import Doc, RecallSource
from memory.recall.text import terms
from memory.selectors import recall_items
from talorys.lib.errors import NotFound
from talorys.providers.base import file_label


def file_get(*, file_id: int) -> File:
    file = File.objects.live().filter(pk=file_id).first()
    if file is None:
        raise NotFound(f"File {file_id} does not exist.")
    return file


def files_list(*, q: str | None = None, status: str | None = None) -> QuerySet[File]:
    """Live files, newest first; ``q`` keeps those whose name contains it, ``status`` those
    in that state."""
    files = File.objects.live()
    if q and q.strip():
        files = files.filter(name__icontains=q.strip())
    if status:
        files = files.filter(status=status)
    return files


def file_passages(
    *, file_id: int, page_from: int | None = None, page_to: int | None = None
) -> QuerySet[FilePassage]:
    """A live file's passages in order, within pages ``page_from``..``page_to`` when given
    (a file without pages has all its passages on none: the range is then ignored)."""
    file = file_get(file_id=file_id)
    passages = FilePassage.objects.filter(file=file).order_by("index")
    if file.pages:
        if page_from is not None:
            passages = passages.filter(page__gte=page_from)
        if page_to is not None:
            passages = passages.filter(page__lte=page_to)
    return passages


def file_link(file_id: int, page: int | None = None) -> str:
    """Where a citation points: the file's content at the page (a PDF viewer opens it there)."""
    return f"/files/{file_id}/content" + (f"#page={page}" if page else "")


def passage_place(passage: FilePassage, name: str) -> str:
    """How a passage is cited: "report.pdf, p. 3", "notes.md, Costs", or the name alone."""
    if passage.page:
        return f"{name}, p. {passage.page}"
    if passage.heading:
        return f"{name}, {passage.heading}"
    return name


# --- search ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileHit:
    """A passage that matches, with its file and place."""

    passage_id: int
    file_id: int
    name: str
    page: int | None
    heading: str
    snippet: str
    text: str
    url: str

    @property
    def place(self) -> str:
        return self.name + (
            f", p. {self.page}" if self.page else f", {self.heading}" if self.heading else ""
        )


def files_search(*, query: str, limit: int = 10) -> list[FileHit]:
    """The passages of live files that best answer ``query``, best first (recall's ranking;
    each hit's ``details`` are its passage's, read with the hits: ``passage_details``)."""
    found = []
    for hit in recall_items(query=query, kinds=["file"], limit=limit):
        details = hit.details or {}
        found.append(
            FileHit(
                passage_id=hit.id,
                file_id=details["id"],
                name=details["name"],
                page=details["page"],
                heading=details["heading"],
                snippet=hit.snippet,
                text=details["text"],
                url=details["url"],
            )
        )
    return found


def passage_details(ids: list[int]) -> dict[int, dict[str, Any]]:
    """What a search hit of kind ``file`` carries besides its snippet: its file, its place and
    its whole text (the search_files tool quotes it; /api/search shows the rest)."""
    rows = (
        FilePassage.objects.filter(pk__in=ids)
        .select_related("file")
        .only("page", "heading", "text", "file__name")
    )
    return {
        p.pk: {
            "id": p.file_id,
            "name": p.file.name,
            "page": p.page,
            "heading": p.heading,
            "text": p.text,
            "url": file_link(p.file_id, p.page),
        }
        for p in rows
    }


# --- recall ------------------------------------------------------------------------------------


def recallable_passages() -> QuerySet[FilePassage]:
    """Passages recall may return: those of live, read files."""
    return FilePassage.objects.filter(file__deleted_at__isnull=True)


def _passage_doc(passage: FilePassage) -> Doc:
    place = passage.page and f"p. {passage.page}" or passage.heading
    name = passage.file.name
    return Doc(
        object_id=passage.pk,
        title=f"{name}, {place}" if place else name,
        body=passage.text,
        when=passage.file.created_at,
    )


def file_recall_source() -> RecallSource:
    return RecallSource(
        kind="file",
        live=lambda: recallable_passages().select_related("file"),
        doc=_passage_doc,
        columns=("text", "page", "heading", "file__name", "file__created_at"),
        details=passage_details,
    )


# --- the text of attached files, for a chat turn ------------------------------------------------


@dataclass(frozen=True)
class ContextPassage:
    file_id: int
    name: str
    page: int | None
    heading: str
    text: str

    @property
    def label(self) -> str:
        return file_label(self.file_id, self.name, f"p. {self.page}" if self.page else self.heading)


@dataclass(frozen=True)
class FilesContext:
    """What the model is shown of the attached files: ``text`` (labelled passages, within the
    budget), the ``passages`` it holds, whether every passage fitted (``whole``), and a line
    for each file that has no text to show (``notes``: still being read, failed, an image)."""

    text: str
    passages: list[ContextPassage] = field(default_factory=list)
    whole: bool = True
    notes: list[str] = field(default_factory=list)


def _note(file: File) -> str | None:
    if file.status == File.Status.PENDING:
        return f"{file_label(file.pk, file.name)} is still being read; its text is not ready yet."
    if file.status == File.Status.FAILED:
        return f"{file_label(file.pk, file.name)} could not be read: {file.reason}"
    if file.content_type.startswith("image/"):
        return f"{file_label(file.pk, file.name)} is an image; Talorys does not read images."
    return None


def _ranked(passages: list[ContextPassage], query: str) -> list[int]:
    """Indexes of ``passages``, most relevant to ``query`` first (BM25 over these passages
    alone: the attached files are the whole collection), the file's order breaking ties."""
    query_terms = set(terms(query))
    counts = [Counter(terms(p.text + " " + p.heading)) for p in passages]
    average = sum(sum(c.values()) for c in counts) / max(len(counts), 1) or 1.0
    idf = {
        term: math.log(1 + (len(counts) - df + 0.5) / (df + 0.5))
        for term in query_terms
        if (df := sum(1 for c in counts if term in c))
    }

    def score(n: int) -> float:
        count, length = counts[n], sum(counts[n].values())
        return sum(
            weight * count[t] * 2.2 / (count[t] + 1.2 * (0.25 + 0.75 * length / average))
            for t, weight in idf.items()
        )

    return sorted(range(len(passages)), key=lambda n: (-score(n), n))


def files_context(*, file_ids: list[int], query: str, budget_chars: int) -> FilesContext:
    """The attached files' text for the model: whole when it fits ``budget_chars``, else the
    passages most relevant to ``query`` that fit, in the files' order, each labelled with its
    file and page or heading. Raises NotFound for an id that is not a live file."""
    ids = list(dict.fromkeys(file_ids))
    found = File.objects.live().in_bulk(ids)
    missing = [str(pk) for pk in ids if pk not in found]
    if missing:
        raise NotFound(f"No such file: {', '.join(missing)}.")
    notes = [note for pk in ids if (note := _note(found[pk]))]
    order = {pk: n for n, pk in enumerate(ids)}
    rows = FilePassage.objects.filter(file_id__in=ids, file__status=File.Status.READY).only(
        "file_id", "index", "page", "heading", "text"
    )
    passages = [
        ContextPassage(p.file_id, found[p.file_id].name, p.page, p.heading, p.text)
        for p in sorted(rows, key=lambda p: (order[p.file_id], p.index))
    ]
    cost = [len(p.label) + len(p.text) + 2 for p in passages]
    if sum(cost) <= budget_chars:
        chosen = list(range(len(passages)))
    else:
        chosen, spent = [], 0
        for n in _ranked(passages, query):
            if spent + cost[n] <= budget_chars:
                chosen.append(n)
                spent += cost[n]
        chosen.sort()
    shown = [passages[n] for n in chosen]
    text = "\n\n".join([*notes, *(f"{p.label}\n{p.text}" for p in shown)])
    return FilesContext(text=text, passages=shown, whole=len(shown) == len(passages), notes=notes)


# --- where the files were used ------------------------------------------------------------------


@dataclass(frozen=True)
class UsedIn:
    conversation_id: int
    title: str


def files_used_in(*, file_ids: list[int]) -> dict[int, list[UsedIn]]:
    """Per file, the conversations (not in the bin) whose messages carry it, newest first. Read
    through the relation agent.Message.attachments declares (``messages``): this app sits below
    agent and imports nothing of it."""
    used: dict[int, list[UsedIn]] = {pk: [] for pk in file_ids}
    rows = (
        File.objects.filter(pk__in=file_ids, messages__conversation__deleted_at__isnull=True)
        .values_list("pk", "messages__conversation_id", "messages__conversation__title")
        .order_by("pk", "-messages__conversation_id")
        .distinct()
    )
    for pk, conversation_id, title in rows:
        used[pk].append(UsedIn(conversation_id, title or f"Conversation {conversation_id}"))
    return used
