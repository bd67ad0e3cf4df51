"""``/tasks/``: quick add, the filtered list, complete or reopen, edit (``/tasks/<id>/``), and
delete to the bin. Every change goes through the task services; the list is ``task_list``."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import F
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.html import format_html

from talorys.accounts.auth import request_actor
from talorys.history.bin import BIN_RETENTION
from talorys.history.kinds import ItemKind, rows_of
from talorys.history.selectors import change_latest
from talorys.lib.errors import NotFound, ValidationFailed
from talorys.lib.kept import typed
from talorys.lib.search import QUERY_MAX
from talorys.lib.undo import say_binned, say_revertible
from talorys.lib.when import repeat_said, shown
from talorys.owner.middleware import OwnerRequest
from talorys.web.pages import (
    form_text,
    form_version,
    owner_page,
    page_of,
    page_problem,
    run_action,
    whole_number,
)
from talorys.workspace import selectors, services
from talorys.workspace.models import Project, Task
from talorys.workspace.views.inputs import (
    form_due_words,
    form_repeat,
    form_when,
    owner_zone_of,
    understood_hint,
)

# The list's status filter: a task's status, or every task.
STATUS_FILTERS = {"open": "Open", "done": "Done", "all": "All"}
# Open before done, then the soonest due (undated last), the most pressing, the oldest.
LIST_ORDER = ("-status", F("due_at").asc(nulls_last=True), "-priority", "id")


def bin_and_say(request: HttpRequest, kind: ItemKind, pk: int, *, back: str) -> HttpResponse:
    """Delete through the kind's service, and say where it went, with an Undo that restores it
    (talorys/lib/undo.py)."""

    def act() -> None:
        kind.delete(pk=pk, actor=request_actor(request))
        text = format_html(
            '{} “{}” moved to the bin. <a href="/bin/">Open the bin</a> to restore it.',
            kind.name.capitalize(),
            kind.title(rows_of(kind.model).get(pk=pk)),
        )
        say_binned(request, text, kind=kind.name, pk=pk)

    return run_action(request, act, back=back)


def _projects() -> list[Project]:
    return list(selectors.project_list().only("id", "name"))


def _filters(request: HttpRequest, projects: list[Project]) -> tuple[dict[str, Any], list[str]]:
    """The list's filters from the query string, and what was wrong with it (then ignored)."""
    problems: list[str] = []
    status = request.GET.get("status") or "open"
    if status not in STATUS_FILTERS:
        problems.append(f"Status “{status[:40]}” is not one of open, done, all; showing open.")
        status = "open"
    try:
        project_id = whole_number(request.GET, "project", label="Project")
    except ValidationFailed as err:
        problems.append(err.message)
        project_id = None
    if project_id is not None and project_id not in {p.pk for p in projects}:
        problems.append(f"There is no project {project_id}; showing every project.")
        project_id = None
    due = request.GET.get("due") or ""
    if due and due not in selectors.TASK_DUE_LABELS:
        problems.append(f"Due “{due[:40]}” is not a filter; showing any date.")
        due = ""
    q = (request.GET.get("q") or "").strip()[:QUERY_MAX]
    if problem := page_problem(request):
        problems.append(problem)
    return {"status": status, "project_id": project_id, "due": due, "q": q}, problems


@owner_page("GET", "POST")
def task_list(request: OwnerRequest) -> HttpResponse:
    if request.method == "POST":
        return run_action(
            request,
            lambda: services.task_create(
                title=form_text(request, "title"),
                project_id=whole_number(request.POST, "project_id", label="Project"),
                due_at=form_when(request, "due_at", label="Due"),
                actor=request_actor(request),
            ),
            back="/tasks/",
            done=lambda task: f"Task “{task.title}” added.",
        )
    projects = _projects()
    filters, problems = _filters(request, projects)
    quick = _quick_values(request, filters)
    tasks = selectors.task_list(
        status=None if filters["status"] == "all" else filters["status"],
        project_id=filters["project_id"],
        due=filters["due"] or None,
        q=filters["q"] or None,
        zone=owner_zone_of(request),
    ).order_by(*LIST_ORDER)
    return render(
        request,
        "workspace/tasks.html",
        {
            "page": page_of(request, tasks),
            "projects": projects,
            "filters": filters,
            "query_max": QUERY_MAX,
            "problems": problems,
            "statuses": STATUS_FILTERS,
            "due_filters": selectors.TASK_DUE_LABELS,
            "now": timezone.now(),
            "title_max": Task.TITLE_MAX,
            "quick": quick,
            "quick_hint": understood_hint(quick["title"], owner_zone_of(request))
            if quick["seen"] and not quick["literal"]
            else "",
        },
    )


def _quick_values(request: HttpRequest, filters: dict[str, Any]) -> dict[str, str]:
    """Quick add's fields: empty (in the filtered project), or what a refused add held, with
    ``seen`` when the page is asking the owner to confirm what it read (views/quick_add.py)."""
    empty = {"title": "", "project_id": str(filters["project_id"] or ""), "due_at": ""}
    return {"seen": "", "literal": ""} | empty | typed(request)


def _task(task_id: int) -> Task:
    try:
        return selectors.task_get(task_id=task_id)
    except NotFound as err:
        raise Http404(err.message) from err


# The edit form's fields and how each is read; a field the form did not send stays as it is.
def _changes(request: OwnerRequest) -> dict[str, Any]:
    readers = {
        "title": lambda: form_text(request, "title"),
        "details": lambda: form_text(request, "details"),
        "status": lambda: form_text(request, "status"),
        "priority": lambda: whole_number(request.POST, "priority", label="Priority"),
        "project_id": lambda: whole_number(request.POST, "project_id", label="Project"),
        "due_at": lambda: form_when(request, "due_at", label="Due"),
    }
    changes: dict[str, Any] = {
        name: read() for name, read in readers.items() if name in request.POST
    }
    # Repeats, in words: read only when changed from what the form showed ("repeat_was"), so a
    # rule the words cannot say again (a cron line) is kept by a save that leaves it alone.
    if "repeat_words" in request.POST and form_text(request, "repeat_words") != form_text(
        request, "repeat_was"
    ):
        changes["repeat"] = form_repeat(request, "repeat_words", label="Repeats")
    # "Due in words" (talorys/lib/when.py), when filled, says the due date instead of the picker.
    if words := form_due_words(request, "due_words", label="Due in words"):
        changes["due_at"] = words
    return changes


def _form_values(request: OwnerRequest, task: Task) -> dict[str, str]:
    """The edit form's fields: the task's, or what the owner typed into a refused save."""
    due = task.due_at.astimezone(owner_zone_of(request)) if task.due_at else None
    values = {
        "title": task.title,
        "details": task.details,
        "project_id": str(task.project_id or ""),
        "due_at": f"{due:%Y-%m-%dT%H:%M}" if due else "",
        "due_words": "",
        "repeat_words": repeat_said(task.repeat),
        "priority": str(task.priority),
        "status": task.status,
    }
    return values | {"repeat_was": values["repeat_words"]} | typed(request)


@owner_page("GET", "POST")
def task_detail(request: OwnerRequest, task_id: int) -> HttpResponse:
    if request.method == "POST":
        return run_action(
            request,
            lambda: services.task_update(
                task_id=task_id,
                actor=request_actor(request),
                version=form_version(request),
                **_changes(request),
            ),
            back=f"/tasks/{task_id}/",
            done="Task saved.",
        )
    task = _task(task_id)
    return render(
        request,
        "workspace/tasks_detail.html",
        {
            "task": task,
            "values": (values := _form_values(request, task)),
            "due_hint": understood_hint(values["due_words"], owner_zone_of(request), due=True),
            "projects": _projects(),
            "statuses": Task.Status.choices,
            "priorities": Task.Priority.choices,
            "title_max": Task.TITLE_MAX,
            "details_max": Task.DETAILS_MAX,
            "bin_days": BIN_RETENTION.days,
        },
    )


def _status_set(request: HttpRequest, task_id: int, status: str, said: str) -> HttpResponse:
    return run_action(
        request,
        lambda: services.task_update(task_id=task_id, status=status, actor=request_actor(request)),
        back="/tasks/",
        done=lambda task: f"“{task.title}” {said}.",
    )


def _complete(request: OwnerRequest, task_id: int) -> None:
    """Complete the task and say so. A repeating one stays, due at its next occurrence: the
    message says when, with an Undo that reverts the move (talorys/lib/undo.py)."""
    task = services.task_complete(task_id=task_id, actor=request_actor(request))
    if task.status == Task.Status.DONE or task.due_at is None:
        messages.success(request, f"“{task.title}” is done.")
        return
    due = task.due_at.astimezone(owner_zone_of(request))
    text = f"“{task.title}” done; next due {shown(due, due)}."
    change = change_latest(kind=services.TASK.name, object_id=task.pk)
    if change is None:  # nothing moved: never, as the due date always moves on
        messages.success(request, text)
    else:
        say_revertible(request, text, change_id=change.pk)


@owner_page("POST")
def task_complete(request: OwnerRequest, task_id: int) -> HttpResponse:
    return run_action(request, lambda: _complete(request, task_id), back="/tasks/")


@owner_page("POST")
def task_reopen(request: HttpRequest, task_id: int) -> HttpResponse:
    return _status_set(request, task_id, Task.Status.OPEN, "is open again")


@owner_page("POST")
def task_delete(request: HttpRequest, task_id: int) -> HttpResponse:
    return bin_and_say(request, services.TASK, task_id, back="/tasks/")
