from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Router, Status
from ninja.pagination import paginate

from memory import selectors, services
from memory.models import Memory, MemoryRevision
from memory.schemas import MemoryIn, MemoryOut, MemoryPatch, MemoryRevisionOut
from talorys.accounts.auth import request_actor
from talorys.lib.pagination import Pagination
from talorys.lib.schemas import QueryText

router = Router(tags=["memory"])


@router.get("", response=list[MemoryOut])
@paginate(Pagination)
def memory_list(request: HttpRequest, q: QueryText | None = None) -> QuerySet[Memory]:
    return selectors.memory_list(q=q)


@router.post("", response={201: MemoryOut})
def memory_create(request: HttpRequest, payload: MemoryIn) -> Status:
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
    return services.memory_update(
        memory_id=memory_id,
        **payload.model_dump(exclude_unset=True),
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
@paginate(Pagination)
def memory_history(request: HttpRequest, memory_id: int) -> QuerySet[MemoryRevision]:
    return selectors.memory_history(memory_id=memory_id)
