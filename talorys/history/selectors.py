"""What the change log shows: the model's changes and an item's history (``change_list``), and
what changed lately (``changed_since``, for the recall index's lazy pass)."""

from __future__ import annotations

import datetime as dt

from django.db.models import Exists, Max, OuterRef, QuerySet

from talorys.history.changes import CHANGE_LOG_SOURCES
from talorys.history.models import Change


def changed_since(*, kinds: list[str], since: dt.datetime) -> dict[str, dict[int, dt.datetime]]:
    """Per kind ("task", as the change log names it), the items with a change recorded since
    ``since`` (made, edited, binned or restored by any service) and their latest change's time:
    the recall index's lazy pass re-reads those whose entry is older. One query."""
    changed: dict[str, dict[int, dt.datetime]] = {kind: {} for kind in kinds}
    rows = (
        Change.objects.filter(kind__in=kinds, created_at__gte=since)
        .values("kind", "object_id")
        .annotate(last=Max("created_at"))
        .values_list("kind", "object_id", "last")
    )
    for kind, object_id, last in rows:
        changed[kind][object_id] = last
    return changed


def change_latest(*, kind: str, object_id: int) -> Change | None:
    """The item's latest change: what an Undo right after an edit reverts."""
    return Change.objects.filter(kind=kind, object_id=object_id).order_by("-id").first()


def change_list(
    *,
    by_model: bool = True,
    message_ids: list[int] | None = None,
    kind: str | None = None,
    object_id: int | None = None,
) -> QuerySet[Change]:
    """Revisions, newest first, each marked ``reverted`` when a revert points at it. By default
    only what the model changed (in chat or a scheduled run) and what an import changed; ``message_ids`` keeps the changes
    those replies made; ``kind`` and ``object_id`` one item's history."""
    changes = Change.objects.annotate(
        reverted=Exists(Change.objects.filter(reverts=OuterRef("pk")))
    ).order_by("-id")
    if by_model:
        changes = changes.filter(CHANGE_LOG_SOURCES)
    if message_ids is not None:
        changes = changes.filter(message_id__in=message_ids)
    if kind is not None:
        changes = changes.filter(kind=kind)
    if object_id is not None:
        changes = changes.filter(object_id=object_id)
    return changes
