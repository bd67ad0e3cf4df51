"""``POST /tasks/quick-add/``: the tasks page's quick add, in the owner's words.

"buy milk tomorrow 9am" adds the task "buy milk" due then; "water plants every monday 8am" a task
that repeats, first due next Monday at 08:00, which completing moves to the Monday after
(talorys/workspace/services/tasks.py). The words are read by talorys/lib/when.py, in the owner's
zone.

The page shows what it read before anything is added. With scripts, a hint under the field says
it as the owner types (static/talorys/js/quick-add.js), and the script marks the form ``seen``
with the words the hint was for. Without scripts, or when Add was pressed before the hint caught
up, the first press only shows what was read, with the words kept in the field: pressing Add
again adds it. "Keep the words as typed" (or a date in the Due field) adds the words as they
are. Words with no date add at once, as before. Words that are only a date ("tomorrow 9am") are
refused, as every quick capture refuses them (talorys/lib/when.py, ``task_read``), unless kept
as typed.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from django.contrib import messages
from django.http import HttpResponse, HttpResponseRedirect
from django.utils import timezone

from talorys.accounts.auth import request_actor
from talorys.lib.kept import keep_typed
from talorys.lib.when import Understood, shown, task_read, understand
from talorys.owner.middleware import OwnerRequest
from talorys.web.pages import back_to, form_text, owner_page, run_action, whole_number
from talorys.workspace import services
from talorys.workspace.models import Task
from talorys.workspace.views.inputs import form_when, owner_zone_of, understood_hint

TASKS = "/tasks/"


@owner_page("POST")
def quick_add(request: OwnerRequest) -> HttpResponse:
    text = form_text(request, "title")
    zone = owner_zone_of(request)
    literal = request.POST.get("literal") == "1" or bool(form_text(request, "due_at"))
    got = Understood(title=text) if literal else understand(text, zone=zone)
    if got.alone:  # only a date: refused as every quick capture refuses it, nothing added
        return run_action(request, lambda: task_read(text, zone=zone, field="title"), back=TASKS)
    if got.dated and request.POST.get("seen") != text:
        target = back_to(request, TASKS)
        keep_typed(request, target, seen=text)
        messages.info(
            request,
            f"Read “{text}” as: {understood_hint(text, zone)}. Press Add to add it, or tick "
            "“Keep the words as typed”.",
        )
        return HttpResponseRedirect(target, status=303)
    return run_action(
        request,
        lambda: services.task_create(
            title=got.title,
            project_id=whole_number(request.POST, "project_id", label="Project"),
            due_at=got.due or form_when(request, "due_at", label="Due"),
            repeat=got.schedule,
            actor=request_actor(request),
        ),
        back=TASKS,
        done=lambda task: f"Task “{task.title}” added{_when_said(got, task, zone)}.",
    )


def _when_said(got: Understood, task: Task, zone: ZoneInfo) -> str:
    """When the added task is due, as the hint said it; a repeating one says its first due date
    too, which the schedule alone does not ("every monday", typed on a Monday)."""
    if not got.dated:
        return ""
    said = f", {got.said[0].lower()}{got.said[1:]}"
    if got.schedule is not None and task.due_at is not None:
        said += f", first due {shown(task.due_at, timezone.now().astimezone(zone))}"
    return said
