"""``/notes/``: the notes (title, when changed, a snippet) and create; ``/notes/<id>/``: the
note rendered, edit with a preview, rename, delete to the bin, and its history from the change
log with Revert where ``change_revert`` would take it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render

from talorys.accounts.auth import request_actor
from talorys.history.changes import change_revert
from talorys.history.models import Change
from talorys.history.refusals import change_revert_refusals
from talorys.history.selectors import change_list
from talorys.lib.diff import DiffRun, text_diff
from talorys.lib.errors import Conflict, NotFound, ValidationFailed
from talorys.lib.kept import typed
from talorys.lib.markdown import render_markdown
from talorys.lib.search import QUERY_MAX, SNIPPET_CHARS
from talorys.lib.wording import plain_message
from talorys.web.pages import form_text, form_version, owner_page, page_of, page_problem, run_action
from talorys.workspace import selectors, services
from talorys.workspace.models import Note
from talorys.workspace.views.tasks import bin_and_say

HISTORY_PER_PAGE = 20


@owner_page("GET", "POST")
def note_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _create(request)
    q = (request.GET.get("q") or "").strip()[:QUERY_MAX]
    page = page_of(request, selectors.note_list(q=q or None, previews=True))
    for note in page:
        note.snippet = " ".join(note.preview.split())[:SNIPPET_CHARS]
    return render(
        request,
        "workspace/notes.html",
        {
            "page": page,
            "q": q,
            "query_max": QUERY_MAX,
            "problem": page_problem(request),
            "typed": typed(request),
            "title_max": Note.TITLE_MAX,
        },
    )


def _see_other(path: str) -> HttpResponse:
    response = HttpResponseRedirect(path)
    response.status_code = 303
    return response


def _create(request: HttpRequest) -> HttpResponse:
    """A new note opens at its own page, ready to write; a refused one stays on the list."""
    made: list[Note] = []
    response = run_action(
        request,
        lambda: made.append(
            services.note_create(title=form_text(request, "title"), actor=request_actor(request))
        ),
        back="/notes/",
        done="Note created. Write it below.",
    )
    return _see_other(f"/notes/{made[0].pk}/#edit") if made else response


@dataclass(frozen=True)
class Revision:
    """One change of the note as the history shows it."""

    change: Change
    who: str
    renamed: tuple[str, str] | None  # (from, to)
    runs: list[DiffRun]  # the content's diff; empty when the content did not change
    # Why it cannot be reverted now; None: Revert is offered. Only edits are offered: undoing
    # the note's creation or a restore would move the note itself to the bin.
    refusal: str | None


def who_made(source: str) -> str:
    """Who made a change, in words (``Change.source``)."""
    if source == "owner":
        return "You"
    if source == "chat":
        return "The assistant"
    if source.startswith("owner:"):
        return "The assistant, approved by you"
    if source.startswith("automation:"):
        return f"Automation {source.partition(':')[2]}"
    if source.startswith("token:"):
        return f"API token {source.partition(':')[2]}…"
    if source.startswith("mcp:"):
        return f"MCP client (token {source.partition(':')[2]}…)"
    return {"import": "An import", "system": "Talorys"}.get(source, source)


def _revisions(changes: list[Change]) -> list[Revision]:
    refusals = change_revert_refusals(changes)
    revisions = []
    for change in changes:
        before, after = change.before or {}, change.after or {}
        title_from, title_to = before.get("title") or "", after.get("title") or ""
        renamed = (
            (title_from, title_to)
            if change.action == Change.Action.UPDATE and title_from != title_to
            else None
        )
        old, new = before.get("content") or "", after.get("content") or ""
        runs = [] if old == new or change.action == Change.Action.DELETE else text_diff(old, new)
        revisions.append(
            Revision(
                change=change,
                who=who_made(change.source),
                renamed=renamed,
                runs=runs,
                refusal=refusals.get(change.pk)
                if change.action == Change.Action.UPDATE
                else "Not an edit.",
            )
        )
    return revisions


def _note(note_id: int) -> Note:
    try:
        return selectors.note_get(note_id=note_id)
    except NotFound as err:
        raise Http404(err.message) from err


def _note_page(request: HttpRequest, note: Note, **extra: Any) -> HttpResponse:
    changes = change_list(by_model=False, kind=services.NOTE.name, object_id=note.pk)
    page = page_of(request, changes, per_page=HISTORY_PER_PAGE)
    context = {
        "note": note,
        "draft": note.content,
        "history": page,
        "revisions": _revisions(list(page)),
        "problem": page_problem(request),
        "title_max": Note.TITLE_MAX,
        "content_max": Note.CONTENT_MAX,
    }
    return render(request, "workspace/notes_detail.html", context | extra)


@owner_page("GET", "POST")
def note_detail(request: HttpRequest, note_id: int) -> HttpResponse:
    if request.method == "POST":
        draft = request.POST.get("content", "")
        stale = False

        def save() -> Note:
            nonlocal stale
            try:
                return services.note_update(
                    note_id=note_id,
                    content=draft,
                    version=form_version(request),
                    actor=request_actor(request),
                )
            except Conflict:
                stale = True
                raise

        response = run_action(request, save, back=f"/notes/{note_id}/", done="Note saved.")
        if not stale:
            return response
        # Changed since the page was opened (by the model, or in another tab): the owner's text
        # is kept, over the current note and its version, so that saving again is a choice.
        typed(request)  # shown here and now, not again on the next visit
        response = _note_page(request, _note(note_id), draft=draft, stale_draft=True)
        response.status_code = 409
        return response
    return _note_page(request, _note(note_id), **_kept(request))


def _kept(request: HttpRequest) -> dict[str, str]:
    """What a refused save (the content) or rename (the title) held, back in its field."""
    kept = typed(request)
    return {
        name: kept[field]
        for name, field in (("draft", "content"), ("rename_title", "title"))
        if field in kept
    }


@owner_page("POST")
def note_preview(request: HttpRequest, note_id: int) -> HttpResponse:
    """The draft rendered as it would be saved (talorys/lib/markdown.py), saving nothing: JSON
    for the page's script, else the note's page again with the draft and its preview."""
    draft = request.POST.get("content", "")
    error = ""
    if len(draft) > Note.CONTENT_MAX:
        error = f"content is longer than {Note.CONTENT_MAX} characters."
    if "application/json" in request.headers.get("Accept", ""):
        if error:
            body = {"error": {"code": ValidationFailed.code, "message": error}}
            return JsonResponse(body, status=ValidationFailed.status)
        return JsonResponse({"html": render_markdown(draft)})
    shown = plain_message(error)  # the page's words; the script reads the JSON's as the API's
    return _note_page(request, _note(note_id), draft=draft, preview=True, preview_error=shown)


@owner_page("POST")
def note_rename(request: HttpRequest, note_id: int) -> HttpResponse:
    return run_action(
        request,
        lambda: services.note_rename(
            note_id=note_id, title=form_text(request, "title"), actor=request_actor(request)
        ),
        back=f"/notes/{note_id}/",
        done=lambda note: f"Renamed to “{note.title}”.",
    )


@owner_page("POST")
def note_delete(request: HttpRequest, note_id: int) -> HttpResponse:
    # To the list: the note's own page is gone with it.
    return bin_and_say(request, services.NOTE, note_id, back="/notes/")


@owner_page("POST")
def note_revert(request: HttpRequest, note_id: int, change_id: int) -> HttpResponse:
    """Revert one change of this note (``change_revert``: the owner's session, which a page
    always is; refused with a reason when the note changed since)."""

    return run_action(
        request,
        lambda: change_revert(
            change_id=change_id,
            actor=request_actor(request),
            of=(services.NOTE.name, note_id),
            actions=(Change.Action.UPDATE,),
        ),
        back=f"/notes/{note_id}/",
        done="Change reverted.",
    )
