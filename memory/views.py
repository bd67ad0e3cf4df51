"""The owner's memories page (/memories/) and each memory's page with its history
(/memories/<id>/). Every change goes through memory.services, as the API's do."""

from __future__ import annotations

import datetime as dt

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from memory import selectors, services
from memory.models import Memory
from talorys.accounts.auth import request_actor
from talorys.history.changes import change_revert
from talorys.lib.errors import NotFound, ValidationFailed
from talorys.lib.search import QUERY_MAX
from talorys.lib.undo import say_binned
from talorys.lib.validation import day_in_range
from talorys.web.pages import form_text, form_version, owner_page, page_of, run_action, whole_number

LIST = "/memories/"
# The form's fields as the page labels them, for the services' messages that name them.
LABELS = {
    "text": "Memory",
    "category": "Category",
    "valid_from": "Holds since",
    "valid_to": "Holds until",
}


def _date(request: HttpRequest, name: str) -> dt.date | None:
    """A date field of the form (empty: unknown). Raises ValidationFailed, inside run_action."""
    value = form_text(request, name)
    if not value:
        return None
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed(f"{name} is not a date (YYYY-MM-DD).") from None
    try:
        return day_in_range(day)  # the API's bound (BoundedDate)
    except ValueError as err:
        raise ValidationFailed(f"{name} {err}.") from None


def _id(request: HttpRequest, name: str) -> int:
    value = whole_number(request.POST, name, label=name.replace("_", " "))
    if value is None:
        raise ValidationFailed(f"{name.replace('_', ' ')} is missing.")
    return value


@owner_page("GET", "POST")
def memories_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return run_action(
            request,
            lambda: services.memory_create_checked(
                text=form_text(request, "text"),
                category=form_text(request, "category") or Memory.Category.FACT,
                source=Memory.Source.OWNER,
                actor=request_actor(request),
                valid_from=_date(request, "valid_from"),
                valid_to=_date(request, "valid_to"),
            ),
            back=LIST,
            done=lambda result: services.remembered_note(result, plain="Memory added."),
            labels=LABELS,
        )
    q = (request.GET.get("q") or "").strip()[:QUERY_MAX]
    superseded = request.GET.get("show") == "superseded"
    # A search of current memories is recall's ranking (as in the chat); the superseded ones
    # are never recalled, so their search stays a plain text match.
    ranked = bool(q) and not superseded
    memories = (
        selectors.memory_search(query=q)
        if ranked
        else selectors.memory_list(q=q, superseded=superseded, by_category=not superseded)
    )
    return render(
        request,
        "memory/list.html",
        {
            "page": page_of(request, memories),
            "q": q,
            "query_max": QUERY_MAX,
            "superseded": superseded,
            "ranked": ranked,
            # Few by nature (the conflict check marks them, the owner settles them): the first
            # ones are shown, with how many wait in all.
            "contradictions": selectors.memory_contradictions()[:20],
            "categories": Memory.Category.choices,
            "text_max": Memory.TEXT_MAX,
        },
    )


@owner_page("GET")
def memory_page(request: HttpRequest, memory_id: int) -> HttpResponse:
    try:
        memory = selectors.memory_get(memory_id=memory_id)
    except NotFound as err:
        raise Http404(err.message) from err
    page = page_of(request, selectors.memory_history(memory_id=memory_id))
    changes = selectors.memory_revision_changes(memory_id=memory_id, revisions=page.object_list)
    return render(
        request,
        "memory/detail.html",
        {
            "memory": memory,
            "page": page,
            "history": [(revision, changes.get(revision.pk)) for revision in page.object_list],
            "categories": Memory.Category.choices,
            "text_max": Memory.TEXT_MAX,
        },
    )


@owner_page("POST")
def memory_edit(request: HttpRequest, memory_id: int) -> HttpResponse:
    return run_action(
        request,
        lambda: services.memory_update_checked(
            memory_id=memory_id,
            text=form_text(request, "text"),
            category=form_text(request, "category") or None,
            valid_from=_date(request, "valid_from"),
            valid_to=_date(request, "valid_to"),
            source=Memory.Source.OWNER,
            actor=request_actor(request),
            version=form_version(request),
        ),
        labels=LABELS,
        back=f"{LIST}{memory_id}/",
        done=services.remembered_note,
    )


@owner_page("POST")
def memory_delete(request: HttpRequest, memory_id: int) -> HttpResponse:
    def delete() -> None:
        services.memory_delete(
            memory_id=memory_id, source=Memory.Source.OWNER, actor=request_actor(request)
        )
        say_binned(request, "Memory moved to the bin.", kind="memory", pk=memory_id)

    return run_action(request, delete, back=LIST)


@owner_page("POST")
def memory_reinstate(request: HttpRequest, memory_id: int) -> HttpResponse:
    return run_action(
        request,
        lambda: services.memory_supersede(
            memory_id=memory_id,
            by_id=None,
            source=Memory.Source.OWNER,
            actor=request_actor(request),
        ),
        back=f"{LIST}?show=superseded",
        done="The memory is current again.",
    )


@owner_page("POST")
def memory_revert(request: HttpRequest, memory_id: int) -> HttpResponse:
    return run_action(
        request,
        lambda: change_revert(
            change_id=_id(request, "change_id"),
            actor=request_actor(request),
            of=(services.MEMORY.name, memory_id),
        ),
        back=f"{LIST}{memory_id}/",
        done="Change reverted.",
    )


@owner_page("POST")
def contradiction_resolve(request: HttpRequest, memory_id: int) -> HttpResponse:
    """Keep ``memory_id`` (the other is superseded by it), or with ``keep=both`` keep both."""
    if form_text(request, "keep") == "both":
        return run_action(
            request,
            lambda: services.memory_contradiction_keep_both(
                memory_id=memory_id, other_id=_id(request, "other_id"), actor=request_actor(request)
            ),
            back=LIST,
            done="Both memories kept; no longer marked as contradicting.",
        )
    return run_action(
        request,
        lambda: services.memory_contradiction_keep(
            keep_id=memory_id, other_id=_id(request, "other_id"), actor=request_actor(request)
        ),
        back=LIST,
        done="Kept; the other memory is superseded (see Superseded facts).",
    )
