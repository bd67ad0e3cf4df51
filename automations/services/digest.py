"""The text of a ``task_digest`` run: the owner's overdue tasks and those due today."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from talorys.notifications.models import Notification
from talorys.workspace import selectors as core_selectors
from talorys.workspace.models import Task

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
    end_of_day = dt.datetime.combine(local_now.date() + dt.timedelta(days=1), dt.time()).replace(
        tzinfo=zone
    )
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
