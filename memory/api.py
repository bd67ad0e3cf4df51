"""Memories over the API (/api/memories) and search over everything (/api/search)."""

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Query, Router, Status

from memory import selectors, services
from memory.models import Memory, MemoryRevision
from memory.schemas import (
    MemoryFilters,
    MemoryIn,
    MemoryOut,
    MemoryPatch,
    MemoryRevisionOut,
    SearchOut,
    SearchQuery,
)
from talorys.accounts.auth import request_actor
from talorys.lib.pagination import paginate_rows

router = Router(tags=["memory"])
search_router = Router(tags=["search"])


@router.get("", response=list[MemoryOut])
@paginate_rows(MemoryOut)
def memory_list(request: HttpRequest, filters: Query[MemoryFilters]) -> QuerySet[Memory]:
    return selectors.memory_list(q=filters.q, superseded=filters.superseded)


@router.post("", response={201: MemoryOut})
def memory_create(request: HttpRequest, payload: MemoryIn) -> Status:
    # The owner is acting: stored as given, with no conflict check (that is for the model's
    # writes); the owner resolves a contradiction by editing or deleting.
    return Status(
        201,
        services.memory_create(
            **payload.model_dump(), source=Memory.Source.OWNER, actor=request_actor(request)
        ),
    )


@router.get("/{int:memory_id}", response=MemoryOut)
def memory_get(request: HttpRequest, memory_id: int) -> Memory:
    return selectors.memory_get(memory_id=memory_id)


@router.patch("/{int:memory_id}", response=MemoryOut)
def memory_update(request: HttpRequest, memory_id: int, payload: MemoryPatch) -> Memory:
    changes = payload.model_dump(exclude_unset=True)
    return services.memory_update(
        memory_id=memory_id,
        **changes,
        source=Memory.Source.OWNER,
        actor=request_actor(request),
    )


@router.delete("/{int:memory_id}", response={204: None})
def memory_delete(request: HttpRequest, memory_id: int) -> Status:
    services.memory_delete(
        memory_id=memory_id, source=Memory.Source.OWNER, actor=request_actor(request)
    )
    return Status(204, None)


@router.get("/{int:memory_id}/history", response=list[MemoryRevisionOut])
@paginate_rows(MemoryRevisionOut)
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
