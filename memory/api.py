"""Memories over the API (/api/memories) and search over everything (/api/search)."""

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Query, Router, Status
from ninja.pagination import paginate

from memory import selectors, services
from memory.models import Memory, MemoryRevision
from memory.schemas import (
    MemoryFilters,
    MemoryIn,
    MemoryOut,
    MemoryPatch,
    MemoryRevisionOut,
    MemoryWriteOut,
    SearchOut,
    SearchQuery,
)
from talorys.accounts.auth import request_actor
from talorys.web.pagination import Pagination

router = Router(tags=["memory"])
search_router = Router(tags=["search"])


@router.get("", response=list[MemoryOut])
@paginate(Pagination)
def memory_list(request: HttpRequest, filters: Query[MemoryFilters]) -> QuerySet[Memory]:
    return selectors.memory_list(q=filters.q, superseded=filters.superseded)


def _written(result: services.Remembered) -> dict[str, Any]:
    """The memory and what the conflict check found (MemoryWriteOut)."""
    verdict = result.verdict
    other = result.other.pk if result.other is not None else verdict.memory_id
    # By alias: MemoryWriteOut reads the memory's fields by their model names, as from a row.
    return MemoryOut.from_orm(result.memory).model_dump(by_alias=True) | {
        "conflict_check": {
            "verdict": verdict.verdict,
            "memory_id": None if verdict.verdict == "unrelated" else other,
            "checked": verdict.checked,
            "reason": verdict.reason,
        }
    }


@router.post("", response={201: MemoryWriteOut, 200: MemoryWriteOut})
def memory_create(request: HttpRequest, payload: MemoryIn) -> Status:
    """Checked against the owner's memories first (``conflict_check``): 201 with the new memory,
    or 200 with the one that already says it (a duplicate: nothing new was stored)."""
    result = services.memory_remember(
        **payload.model_dump(), source=Memory.Source.OWNER, actor=request_actor(request)
    )
    return Status(201 if result.stored else 200, _written(result))


@router.get("/{int:memory_id}", response=MemoryOut)
def memory_get(request: HttpRequest, memory_id: int) -> Memory:
    return selectors.memory_get(memory_id=memory_id)


@router.patch("/{int:memory_id}", response=MemoryWriteOut)
def memory_update(request: HttpRequest, memory_id: int, payload: MemoryPatch) -> dict[str, Any]:
    """New text is checked against the other memories first (``conflict_check``); an edit that
    duplicates another memory is not applied."""
    changes = payload.model_dump(exclude_unset=True)
    result = services.memory_revise(
        memory_id=memory_id,
        **changes,
        source=Memory.Source.OWNER,
        actor=request_actor(request),
    )
    return _written(result)


@router.delete("/{int:memory_id}", response={204: None})
def memory_delete(request: HttpRequest, memory_id: int) -> Status:
    services.memory_delete(
        memory_id=memory_id, source=Memory.Source.OWNER, actor=request_actor(request)
    )
    return Status(204, None)


@router.get("/{int:memory_id}/history", response=list[MemoryRevisionOut])
@paginate(Pagination)
def memory_history(request: HttpRequest, memory_id: int) -> QuerySet[MemoryRevision]:
    return selectors.memory_history(memory_id=memory_id)


@search_router.get("", response=SearchOut)
def search_all(request: HttpRequest, params: Query[SearchQuery]) -> dict[str, Any]:
    kinds = [k.strip() for k in (params.kinds or "").split(",") if k.strip()] or None
    found = selectors.recall_search(query=params.q, kinds=kinds, limit=params.limit)
    return {
        "items": found.hits,
        "count": len(found.hits),
        "mode": found.mode,
        "error": found.error,
    }
