"""``/tasks/understand/``: what quick add or the Due in words field reads in the words typed so
far, for the hint under the field (static/talorys/js/quick-add.js). The same reader
(talorys/lib/when.py) then reads the form, so the hint and what is added agree."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from talorys.web.pages import owner_page
from talorys.workspace.models import Task
from talorys.workspace.views.inputs import owner_zone_of, understood


@owner_page("GET")
def task_understand(request: HttpRequest) -> JsonResponse:
    """``?text=`` (as long as a task's title at most) read in the owner's zone; ``field=due``
    reads it as a due date only."""
    text = (request.GET.get("text") or "")[: Task.TITLE_MAX]
    due = request.GET.get("field") == "due"
    return JsonResponse(understood(text, owner_zone_of(request), due=due))
