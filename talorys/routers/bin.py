"""The bin (/api/bin) and the model's changes (/api/changes): see talorys/history.py.

Purging and reverting need the owner's session (``owner_session_auth``): a token, however
scoped, can list and restore but never delete for good or undo the model's work.
"""

from __future__ import annotations

from typing import Literal

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Router, Status
from ninja.pagination import paginate

from talorys import history, selectors
from talorys.models import Change
from talorys.pagination import Pagination
from talorys.schemas import BinEmptyOut, BinItemOut, ChangeOut
from talorys.security import owner_session_auth

bin_router = Router(tags=["bin"])
changes_router = Router(tags=["changes"])

Kind = Literal["task", "note", "project", "memory", "automation", "conversation"]


def request_actor(request: HttpRequest) -> history.Actor:
    """Who acts for an API request: the owner's session, or the token (named by its prefix)."""
    token = getattr(request, "api_token", None)
    if token is not None:
        return history.Actor(source=f"token:{token.prefix}")
    return history.OWNER


@bin_router.get("", response=list[BinItemOut])
@paginate(Pagination)
def bin_list(request: HttpRequest) -> list[history.BinItem]:
    return history.bin_list()


@bin_router.post("/empty", response=BinEmptyOut, auth=owner_session_auth)
def bin_empty(request: HttpRequest) -> dict[str, int]:
    return {"purged": history.bin_empty()}


@bin_router.post("/{kind}/{int:item_id}/restore", response={204: None})
def bin_restore(request: HttpRequest, kind: Kind, item_id: int) -> Status:
    history.bin_restore_item(kind=kind, pk=item_id, actor=request_actor(request))
    return Status(204, None)


@bin_router.delete("/{kind}/{int:item_id}", response={204: None}, auth=owner_session_auth)
def bin_purge(request: HttpRequest, kind: Kind, item_id: int) -> Status:
    history.bin_purge_item(kind=kind, pk=item_id)
    return Status(204, None)


@changes_router.get("", response=list[ChangeOut])
@paginate(Pagination)
def change_list(request: HttpRequest) -> QuerySet[Change]:
    return selectors.change_list()


@changes_router.post("/{int:change_id}/revert", response=list[ChangeOut], auth=owner_session_auth)
def change_revert(request: HttpRequest, change_id: int) -> list[Change]:
    made = history.change_revert(change_id=change_id, actor=request_actor(request))
    return list(selectors.change_list(by_model=False).filter(pk__in=[c.pk for c in made]))
