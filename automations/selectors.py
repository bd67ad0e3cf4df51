"""Reads of automations used by several callers (API, tools, pages), and the text of a
``task_digest`` run: the owner's overdue tasks and those due today."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from automations.models import Automation, AutomationRun
from memory.recall.sources import Doc, RecallSource
from talorys.lib.errors import NotFound, ValidationFailed
from talorys.lib.schedules import Schedule, describe, schedule_parse, upcoming
from talorys.notifications.models import Notification
from talorys.owner.selectors import owner_zone
from talorys.workspace import selectors as core_selectors
from talorys.workspace.models import Task


def automation_get(*, automation_id: int) -> Automation:
    automation = Automation.objects.live().filter(pk=automation_id).first()
    if automation is None:
        raise NotFound(f"Automation {automation_id} does not exist.")
    return automation


def automation_list(
    *, enabled: bool | None = None, kind: str | None = None
) -> QuerySet[Automation]:
    automations = Automation.objects.live()
    if enabled is not None:
        automations = automations.filter(enabled=enabled)
    if kind:
        automations = automations.filter(kind=kind)
    return automations


def automation_run_list(*, automation_id: int) -> QuerySet[AutomationRun]:
    """The automation's receipts, newest slot first (NotFound when the automation is gone)."""
    automation = automation_get(automation_id=automation_id)
    return AutomationRun.objects.filter(automation=automation)


def run_counts_by_day(*, since: dt.datetime, zone: ZoneInfo) -> dict[dt.date, dict[str, int]]:
    """Per day in ``zone`` (the day a run started), from ``since``: runs by status, as
    ``runs_<status>``. One query. Only the receipts kept count (each automation keeps its last
    runs.MAX_RUNS_KEPT)."""
    by_status = {
        f"runs_{status}": Count("pk", filter=Q(status=status))
        for status in AutomationRun.Status.values
    }
    rows = (
        AutomationRun.objects.filter(started_at__gte=since)
        .annotate(day=TruncDate("started_at", tzinfo=zone))
        .values("day")
        .annotate(**by_status)
        .order_by()
    )
    return {row.pop("day"): row for row in rows}


def schedule_text(automation: Automation, zone: ZoneInfo | None = None) -> str:
    """The automation's schedule in words, in the owner's time zone."""
    return schedule_describe(schedule=automation.schedule, zone=zone or owner_zone())


def schedule_describe(*, schedule: Schedule | dict[str, Any], zone: ZoneInfo) -> str:
    """A schedule in words, in ``zone``: "every Mon, Thu at 18:00 (Europe/Paris)"."""
    try:
        parsed = schedule_parse(schedule)
    except ValidationFailed as exc:  # a hand edit of an old row; the dispatcher pauses it
        return f"invalid schedule ({exc.message})"
    return describe(parsed, zone)


# How many coming runs the pages show under a schedule.
UPCOMING = 5


def schedule_upcoming(
    *, schedule: Schedule | dict[str, Any], zone: ZoneInfo, count: int = UPCOMING
) -> list[dt.datetime]:
    """The schedule's next runs from now (UTC); ValidationFailed when it does not parse."""
    return upcoming(schedule_parse(schedule), timezone.now(), zone, count)


def automation_recall_source() -> RecallSource:
    """Automations for recall (memory/recall/): their name and message or prompt."""
    return RecallSource(
        kind="automation",
        live=Automation.objects.live,
        doc=lambda a: Doc(object_id=a.pk, title=a.name, body=a.message, when=a.updated_at),
        logged=True,
        columns=("name", "message", "updated_at"),
    )


# --- the task digest ----------------------------------------------------------------------------

DIGEST_ITEMS = 20  # tasks listed per digest section


def _task_line(task: Task, zone: ZoneInfo) -> str:
    assert task.due_at is not None  # the digest lists tasks by their due date
    due = task.due_at.astimezone(zone)
    flag = " (high priority)" if task.priority == Task.Priority.HIGH else ""
    return f"- {task.title} — due {due:%a %d %b %H:%M}{flag}"


def _section(heading: str, tasks: list[Task], total: int, zone: ZoneInfo) -> list[str]:
    lines = [f"{heading} ({total}):", *(_task_line(t, zone) for t in tasks)]
    if total > len(tasks):
        lines.append(f"- …and {total - len(tasks)} more")
    return lines


def task_digest_text(
    *, name: str, heading: str, now: dt.datetime, zone: ZoneInfo
) -> tuple[str, str]:
    """(title, body) summarising open tasks that are overdue or due by the end of the owner's
    local day. Deterministic: the same tasks at the same time give the same text."""
    local_now = now.astimezone(zone)
    end_of_day = dt.datetime.combine(local_now.date() + dt.timedelta(days=1), dt.time(), zone)
    open_tasks = core_selectors.task_list(status=Task.Status.OPEN).order_by(
        "due_at", "-priority", "pk"
    )
    overdue = open_tasks.filter(due_at__lt=now)
    today = open_tasks.filter(due_at__gte=now, due_at__lt=end_of_day)
    n_overdue, n_today = overdue.count(), today.count()
    if not n_overdue and not n_today:
        title = f"{name}: nothing due today"
        lines = ["No open task is overdue or due today."]
    else:
        title = f"{name}: {n_overdue} overdue, {n_today} due today"
        lines = []
        if n_overdue:
            lines += _section("Overdue", list(overdue[:DIGEST_ITEMS]), n_overdue, zone)
        if n_today:
            if lines:
                lines.append("")
            lines += _section("Due today", list(today[:DIGEST_ITEMS]), n_today, zone)
    if heading:
        lines = [heading, "", *lines]
    return title[: Notification.TITLE_MAX], "\n".join(lines)
