"""``/backup/``: export everything as one file; import one after a preview.

Import is two posts: the file goes to ``/backup/preview/``, which checks it and runs the import
as a dry run; the file is kept in the data directory under a random name held in the owner's
session (a file input cannot be filled again by the page), and the page shows per kind what
would be added, changed and left alone, and whether this installation made the file (its
signature, backup/format.py) or it was made elsewhere, with the titles of the first rows it
would add or change. ``/backup/import/`` imports that same file and removes it;
``/backup/cancel/`` only removes it (Discard). The file chooser is always there: choosing
another file replaces a pending preview. A refused file is a message above the page, and
nothing was changed.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from backup.format import KIND_NAMES
from backup.services import (
    ImportReport,
    backup_import,
    changed_words,
    kind_label,
    origin_text,
    report_words,
)
from talorys.history.bin import BIN_RETENTION
from talorys.lib.errors import ValidationFailed
from talorys.web.pages import owner_page, run_action

PAGE = "/backup/"
STASH = "backup_stash"  # the session's {"token", "name", "report"} of the previewed file
STASH_MAX_AGE = 24 * 3600


def _stash_path(token: str) -> Path:
    return settings.DATA_DIR / "backup-stash" / f"{token}.json"


def _drop_old_stashes() -> None:
    """Previews nobody confirmed or cancelled (the session ended): gone after a day."""
    cutoff = time.time() - STASH_MAX_AGE
    for path in _stash_path("x").parent.glob("*.json"):
        if path.stat().st_mtime < cutoff:
            path.unlink(missing_ok=True)


def _drop_stash(request: HttpRequest) -> None:
    stash = request.session.pop(STASH, None)
    if stash and isinstance(stash.get("token"), str) and stash["token"].isalnum():
        _stash_path(stash["token"]).unlink(missing_ok=True)


def _rows(report: ImportReport | dict[str, Any]) -> list[dict[str, Any]]:
    """Per kind the file holds anything of: its counts, and the titles of the first rows it
    would add and change (a preview stashed before the titles were kept has none), and how the
    changed ones differ from what is here (which fields; newer or older in the file)."""
    items = report.get("items") or {}
    changes = report.get("changes") or {}
    return [
        {
            "kind": kind_label(kind),
            **report["kinds"][kind],
            "added_titles": items.get(kind, {}).get("added", []),
            "changed_titles": items.get(kind, {}).get("changed", []),
            "changed_how": changed_words(changes.get(kind)),
            "older": (changes.get(kind) or {}).get("older", 0),
        }
        for kind in KIND_NAMES
        if any(report["kinds"].get(kind, {}).values())
    ]


@owner_page("GET")
def backup_page(request: HttpRequest) -> HttpResponse:
    stash = request.session.get(STASH)
    if stash and not _stash_path(stash["token"]).exists():
        request.session.pop(STASH, None)
        stash = None
    return render(
        request,
        "backup/backup.html",
        {
            "preview": stash,
            "rows": _rows(stash["report"]) if stash else [],
            "origin": origin_text(bool(stash["report"].get("made_here"))) if stash else "",
            "max_mb": settings.MAX_IMPORT_BYTES // (1024 * 1024),
            "retention_days": BIN_RETENTION.days,
        },
    )


def _stash(upload: Any) -> str:
    """The uploaded file, copied to a new stash a piece at a time; its token."""
    _drop_old_stashes()
    token = secrets.token_hex(16)
    path = _stash_path(token)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    # 0600: the file holds all of someone's data until it is imported or cancelled.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        for piece in upload.chunks():
            out.write(piece)
    return token


def _import_stash(token: str, *, dry_run: bool) -> ImportReport:
    with _stash_path(token).open("rb") as source:
        return backup_import(source=source, dry_run=dry_run)


@owner_page("POST")
def backup_preview(request: HttpRequest) -> HttpResponse:
    def preview() -> None:
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationFailed("Choose a backup file to preview.")
        _drop_stash(request)
        token = _stash(upload)
        try:
            report = _import_stash(token, dry_run=True)
        except BaseException:
            _stash_path(token).unlink(missing_ok=True)
            raise
        request.session[STASH] = {
            "token": token,
            "name": (upload.name or "backup")[:200],
            "report": report,
        }

    return run_action(request, preview, back=PAGE)


@owner_page("POST")
def backup_confirm(request: HttpRequest) -> HttpResponse:
    def confirm() -> str:
        stash = request.session.get(STASH)
        if not stash or request.POST.get("token") != stash["token"]:
            raise ValidationFailed("That preview is gone: choose the file and preview it again.")
        if not _stash_path(stash["token"]).exists():
            raise ValidationFailed("That preview is gone: choose the file again.")
        report = _import_stash(stash["token"], dry_run=False)
        _drop_stash(request)
        return report_words(report)

    return run_action(request, confirm, back=PAGE, done=lambda words: "Imported. " + words)


@owner_page("POST")
def backup_cancel(request: HttpRequest) -> HttpResponse:
    return run_action(
        request,
        lambda: _drop_stash(request),
        back=PAGE,
        done="Preview discarded; nothing was imported or changed.",
    )
