"""The automations API, mounted at /api/automations. Thin: each handler calls one service."""

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Query, Router, Status
from ninja.pagination import paginate

from automations import selectors
from automations.models import Automation, AutomationRun
from automations.schemas import (
    AutomationFilters,
    AutomationIn,
    AutomationOut,
    AutomationPatch,
    AutomationRunOut,
)
from automations.services import crud
from talorys.accounts.auth import request_actor
from talorys.web.pagination import Pagination

router = Router(tags=["automations"])


@router.get("", response=list[AutomationOut])
@paginate(Pagination)
def automation_list(
    request: HttpRequest, filters: Query[AutomationFilters]
) -> QuerySet[Automation]:
    return selectors.automation_list(enabled=filters.enabled, kind=filters.kind)


def _answered(
    request: HttpRequest, change: Callable[..., Automation], **arguments: Any
) -> AutomationOut:
    """The change made by the request's actor, and its answer, built before the commit: if it
    cannot be, nothing changed (never a 500 for a change that was made)."""
    with transaction.atomic():
        return AutomationOut.from_orm(change(**arguments, actor=request_actor(request)))


@router.post("", response={201: AutomationOut})
def automation_create(request: HttpRequest, payload: AutomationIn) -> Status:
    return Status(201, _answered(request, crud.automation_create, **payload.model_dump()))


@router.get("/{int:automation_id}", response=AutomationOut)
def automation_get(request: HttpRequest, automation_id: int) -> Automation:
    return selectors.automation_get(automation_id=automation_id)


@router.patch("/{int:automation_id}", response=AutomationOut)
def automation_update(
    request: HttpRequest, automation_id: int, payload: AutomationPatch
) -> AutomationOut:
    changes = payload.model_dump(exclude_unset=True)
    return _answered(request, crud.automation_update, automation_id=automation_id, **changes)


@router.delete("/{int:automation_id}", response={204: None})
def automation_delete(request: HttpRequest, automation_id: int) -> Status:
    crud.automation_delete(automation_id=automation_id, actor=request_actor(request))
    return Status(204, None)


@router.get("/{int:automation_id}/runs", response=list[AutomationRunOut])
@paginate(Pagination)
def automation_run_list(request: HttpRequest, automation_id: int) -> QuerySet[AutomationRun]:
    return selectors.automation_run_list(automation_id=automation_id)


@router.post("/{int:automation_id}/pause", response=AutomationOut)
def automation_pause(request: HttpRequest, automation_id: int) -> AutomationOut:
    return _answered(request, crud.automation_pause, automation_id=automation_id)


@router.post("/{int:automation_id}/resume", response=AutomationOut)
def automation_resume(request: HttpRequest, automation_id: int) -> AutomationOut:
    return _answered(request, crud.automation_resume, automation_id=automation_id)
