"""The owner's automation pages (automations/urls.py), the schedule preview for automations.js,
and the calendar feed, which needs no session (its secret is the capability).

A create or edit form the services refuse is shown again as posted, with each message at its
field, so the owner does not type it all again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from automations import selectors
from automations.calendar import calendar_feed as build_calendar_feed
from automations.forms import KIND_LABELS, AutomationForm, ScheduleForm
from automations.models import Automation
from automations.services import crud
from talorys.lib.errors import AppError, NotFound, ValidationFailed
from talorys.lib.timefmt import format_datetime
from talorys.owner.middleware import OwnerRequest
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.calendar import calendar_secret_matches
from talorys.web.pages import owner_page, page_of, run_action

LIST = "/automations/"


def _zone(request: OwnerRequest) -> ZoneInfo:
    return ZoneInfo(request.owner_settings.time_zone)


def _automation(automation_id: int) -> Automation:
    try:
        return selectors.automation_get(automation_id=automation_id)
    except NotFound as exc:  # binned or never made: the page's ordinary 404
        raise Http404(exc.message) from exc


def _detail_url(automation_id: int) -> str:
    return f"/automations/{automation_id}/"


def _upcoming(schedule: dict[str, Any] | None, zone: ZoneInfo) -> list[dict[str, str]]:
    if schedule is None:
        return []
    try:
        runs = selectors.schedule_upcoming(schedule=schedule, zone=zone)
    except ValidationFailed:  # a hand-edited row that no longer parses
        return []
    return [
        {"at": run.isoformat(), "label": format_datetime(timezone.localtime(run, zone))}
        for run in runs
    ]


@owner_page("GET")
def automation_list(request: OwnerRequest) -> HttpResponse:
    zone = _zone(request)
    page = page_of(request, selectors.automation_list())
    rows = [
        {
            "automation": automation,
            "what": KIND_LABELS.get(automation.kind, automation.kind).split(":")[0],
            "schedule": selectors.schedule_text(automation, zone),
        }
        for automation in page
    ]
    return render(request, "automations/list.html", {"page": page, "rows": rows})


def _form_page(request: HttpRequest, form: AutomationForm, *, status: int = 200) -> HttpResponse:
    if form.is_bound:
        schedule = form.cleaned_data.get("schedule")
    elif form.automation is not None:
        schedule = form.automation.schedule
    else:
        schedule = {"type": "daily", "time": form.fields["schedule_time"].initial}
    automation = form.automation
    context = {
        "form": form,
        "automation": automation,
        "what": KIND_LABELS.get(automation.kind, automation.kind) if automation else "",
        "schedule_rows": form.schedule_rows(),
        "schedule_text": (
            selectors.schedule_describe(schedule=schedule, zone=form.zone) if schedule else ""
        ),
        "upcoming": _upcoming(schedule, form.zone),
    }
    return render(request, "automations/form.html", context, status=status)


def _save(request: HttpRequest, form: AutomationForm, save: Any, done: str) -> HttpResponse:
    """Call the service with the valid form; a refusal shows the form again, nothing saved."""
    if not form.is_valid():
        return _form_page(request, form, status=400)
    try:
        automation = save()
    except AppError as exc:
        form.place_error(exc.message)
        return _form_page(request, form, status=400)
    messages.success(request, done)
    return HttpResponseRedirect(_detail_url(automation.pk), status=303)


@owner_page("GET", "POST")
def automation_new(request: OwnerRequest) -> HttpResponse:
    if request.method != "POST":
        return _form_page(request, AutomationForm(zone=_zone(request)))
    form = AutomationForm(request.POST, zone=_zone(request))
    return _save(
        request,
        form,
        lambda: crud.automation_create(**form.create_arguments()),
        "Automation created.",
    )


@owner_page("GET", "POST")
def automation_edit(request: OwnerRequest, automation_id: int) -> HttpResponse:
    automation = _automation(automation_id)
    if request.method != "POST":
        return _form_page(request, AutomationForm(automation=automation, zone=_zone(request)))
    form = AutomationForm(request.POST, automation=automation, zone=_zone(request))
    return _save(
        request,
        form,
        lambda: crud.automation_update(automation_id=automation.pk, **form.changes()),
        "Automation saved.",
    )


@owner_page("GET")
def automation_detail(request: OwnerRequest, automation_id: int) -> HttpResponse:
    zone = _zone(request)
    automation = _automation(automation_id)
    runs = selectors.automation_run_list(automation_id=automation_id)
    context = {
        "automation": automation,
        "what": KIND_LABELS.get(automation.kind, automation.kind),
        "schedule": selectors.schedule_text(automation, zone),
        "upcoming": _upcoming(automation.schedule, zone),
        "page": page_of(request, runs.select_related("notification")),
    }
    return render(request, "automations/detail.html", context)


# The buttons of the list and detail pages: the service, and what to say when it is done.
ACTIONS: dict[str, tuple[Callable[..., Any], str]] = {
    "pause": (crud.automation_pause, "Paused: it will not run until you resume it."),
    "resume": (crud.automation_resume, "Resumed from now on."),
    "delete": (crud.automation_delete, "Moved to the bin."),
}


@owner_page("POST")
def automation_action(request: HttpRequest, automation_id: int, action: str) -> HttpResponse:
    """Pause, resume or delete (to the bin), then back to the page it was pressed on (a binned
    automation's own page is gone: the list)."""
    service, done = ACTIONS[action]
    return run_action(
        request,
        lambda: service(automation_id=automation_id),
        back=LIST if action == "delete" else _detail_url(automation_id),
        done=done,
    )


@owner_page("GET")
def schedule_preview(request: OwnerRequest) -> JsonResponse:
    """The schedule in words and its next runs, for the fields in the query (automations.js)."""
    zone = _zone(request)
    form = ScheduleForm(request.GET, zone=zone)
    if not form.is_valid():
        errors = {name: [str(e) for e in errs] for name, errs in form.errors.items()}
        return JsonResponse({"errors": errors}, status=400)
    schedule = form.cleaned_data["schedule"]
    return JsonResponse(
        {
            "text": selectors.schedule_describe(schedule=schedule, zone=zone),
            "runs": _upcoming(schedule, zone),
        }
    )


@require_safe
def calendar_feed(request: HttpRequest, secret: str) -> HttpResponse:
    """The calendar feed (automations/calendar.py): no session, the secret in the URL is the
    capability. A wrong one is a plain 404, the same as any path that does not exist. HEAD
    answers as GET does (its headers and length) without the body."""
    if not calendar_secret_matches(secret):
        raise Http404
    owner = owner_settings_get()
    body = build_calendar_feed(zone=ZoneInfo(owner.time_zone), details=owner.calendar_feed_details)
    response = HttpResponse(body, content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = 'inline; filename="talorys.ics"'
    # The URL is a secret: no shared cache may keep the feed, nor a referrer carry it on.
    response["Cache-Control"] = "private, no-store"
    response["Referrer-Policy"] = "no-referrer"
    if request.method == "HEAD":
        response["Content-Length"] = str(len(body))
        response.content = b""
    return response
