"""The bin (/api/bin) and the model's changes (/api/changes) over the API.

Purging and reverting need the owner's session (``owner_session_auth``): a token, however
scoped, can list and restore but never delete for good or undo the model's work.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Path, Router, Status
from ninja.pagination import paginate

from talorys.accounts.auth import owner_session_auth, request_actor
from talorys.history import bin as the_bin
from talorys.history import changes, selectors
from talorys.history.bin_items import BinItems
from talorys.history.kinds import ItemKindName
from talorys.history.models import Change
from talorys.history.schemas import BinEmptyOut, BinItemOut, ChangeOut
from talorys.web.pagination import Pagination, paginate_rows

bin_router = Router(tags=["bin"])
changes_router = Router(tags=["changes"])


@bin_router.get("", response=list[BinItemOut])
@paginate(Pagination)
def bin_list(request: HttpRequest) -> BinItems:
    # Read a page at a time (counted in one query), never the whole bin for one page of it.
    return BinItems()


@bin_router.post("/empty", response=BinEmptyOut, auth=owner_session_auth)
def bin_empty(request: HttpRequest) -> dict[str, int]:
    return {"purged": the_bin.bin_empty()}


@bin_router.post("/{kind}/{int:item_id}/restore", response={204: None})
def bin_restore(request: HttpRequest, kind: Path[ItemKindName], item_id: int) -> Status:
    the_bin.bin_restore(kind=kind, pk=item_id, actor=request_actor(request))
    return Status(204, None)


@bin_router.delete("/{kind}/{int:item_id}", response={204: None}, auth=owner_session_auth)
def bin_purge(request: HttpRequest, kind: Path[ItemKindName], item_id: int) -> Status:
    the_bin.bin_purge(kind=kind, pk=item_id)
    return Status(204, None)


@changes_router.get("", response=list[ChangeOut])
@paginate_rows(ChangeOut)
def change_list(request: HttpRequest) -> QuerySet[Change]:
    return selectors.change_list()


@changes_router.post("/{int:change_id}/revert", response=list[ChangeOut], auth=owner_session_auth)
def change_revert(request: HttpRequest, change_id: int) -> list[Change]:
    made = changes.change_revert(change_id=change_id, actor=request_actor(request))
    return list(selectors.change_list(by_model=False).filter(pk__in=[c.pk for c in made]))
