"""An Obsidian vault (a folder of Markdown notes, zipped): each ``.md`` file one note.

- The title is the front matter's ``title``, else the file's name without ``.md``.
- Tags: the front matter's ``tags`` (a list, or words separated by commas or spaces), and the
  note's folder as one nested tag (``Work/Clients`` for a note in the folder ``Clients`` of
  ``Work``: Obsidian's own way of writing a tag inside another). Talorys's notes have no tag or project field, so
  they are kept as the note's first line, ``Tags: #Work/Clients #idea``: shown, searched and
  recalled with the note. (A project per top folder was the other way; a note cannot belong
  to a project here.)
- ``[[links]]`` and the rest of the Markdown are kept as written.
- ``.obsidian/`` (the app's settings), ``.trash/`` and dot files are not notes; any other
  file (an image, a PDF) is an attachment: imported as one of the owner's files (files/),
  unless the files app refuses its type or size (then named in the import's report).

The front matter is YAML, read with PyYAML's ``safe_load`` (plain data only: no object is
built from a tag in the file). Front matter that is not valid YAML is left in the note's text.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import PurePosixPath
from typing import Any

import yaml

from imports.readers.items import VaultNote, instant, text_of

FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
TAG_CHARS = re.compile(r"[^\w/\-]+")
IGNORED_FOLDERS = (".obsidian", ".trash", "__MACOSX")


def vault_path_kind(path: str) -> str | None:
    """ "note", "attachment" or None (not part of the vault's content)."""
    parts = PurePosixPath(path).parts
    if not parts or any(part in IGNORED_FOLDERS or part.startswith(".") for part in parts):
        return None
    return "note" if parts[-1].lower().endswith(".md") else "attachment"


def _tag(text: str) -> str:
    return TAG_CHARS.sub("-", text.strip().lstrip("#")).strip("-/")


def _front_tags(value: Any) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[,\s]+", value)
    if not isinstance(value, list):
        return []
    return [tag for item in value if isinstance(item, str | int) and (tag := _tag(str(item)))]


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter's fields and the text after it; ({}, text) when there is none or it
    is not a YAML mapping."""
    match = FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        fields = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}, text
    if not isinstance(fields, dict):
        return {}, text
    return fields, text[match.end() :]


def vault_note(path: str, raw: bytes, when: dt.datetime | None) -> VaultNote:
    """The note in the file at ``path`` (its place in the vault, the vault's own folder left
    out), its bytes read as UTF-8 (a byte that is not is replaced)."""
    text = text_of(raw.decode("utf-8", errors="replace")).lstrip("\ufeff")
    fields, body = _front_matter(text)
    place = PurePosixPath(path)
    folder = _tag(str(place.parent)) if str(place.parent) != "." else ""
    tags = [folder] if folder else []
    for tag in _front_tags(fields.get("tags", fields.get("tag"))):
        if tag not in tags:
            tags.append(tag)
    title = fields.get("title")
    title = text_of(title).strip() if isinstance(title, str) else ""
    stated = instant(str(fields["created"])) if fields.get("created") else None
    return VaultNote(
        external_id=path,
        title=title or place.name[: -len(".md")],
        content=body.strip("\n"),
        tags=tags,
        when=stated or when,
    )


def with_tags(note: VaultNote) -> str:
    """The note's text as it is kept: its tags as the first line, then the note."""
    if not note.tags:
        return note.content
    line = "Tags: " + " ".join(f"#{tag}" for tag in note.tags)
    return f"{line}\n\n{note.content}" if note.content else line
