"""What the pages need to know about the change log beyond the list: which of the model's
changes can still be reverted, and why not (the rule is ``history.revert_refusal``)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Max, Q

from talorys.history.changes import revert_refusal
from talorys.history.kinds import ItemKind, item_kinds, rows_of
from talorys.history.models import Change


def change_revert_refusals(changes: Sequence[Change]) -> dict[int, str]:
    """For a page of changes, why each one that cannot be reverted now cannot (by change id).

    The rule is ``history.revert_refusal``; this reads without locks (``change_revert`` checks
    again under them), in one query per kind on the page and one for the items' latest
    changes. Changes from ``change_list`` carry ``reverted``; others are looked up.
    """
    known = {kind.name: kind for kind in item_kinds()}
    refusals, pending = _refuse_without_reads(changes, known)
    if not pending:
        return refusals
    ids_by_kind: dict[str, set[int]] = {}
    for change, _spec in pending:
        ids_by_kind.setdefault(change.kind, set()).add(change.object_id)
    items = {
        (kind, obj.pk): obj
        for kind, ids in ids_by_kind.items()
        for obj in rows_of(known[kind].model).filter(pk__in=ids)
    }
    latest = _latest_change_ids(ids_by_kind)
    for change, spec in pending:
        key = (change.kind, change.object_id)
        last_id = latest.get(key)
        refusal = revert_refusal(
            change=change,
            spec=spec,
            obj=items.get(key),
            last=Change(pk=last_id) if last_id is not None else None,
        )
        if refusal is not None:
            refusals[change.pk] = refusal.message
    return refusals


def _refuse_without_reads(
    changes: Sequence[Change], known: dict[str, ItemKind]
) -> tuple[dict[int, str], list[tuple[Change, ItemKind]]]:
    """The refusals that need no read of the items (already reverted, a kind no longer kept),
    and the other changes, each with its kind, left for the item-level rule."""
    refusals: dict[int, str] = {}
    pending: list[tuple[Change, ItemKind]] = []
    for change in changes:
        reverted = getattr(change, "reverted", None)
        if reverted is None:
            reverted = change.reverted_by.exists()
        if reverted:
            refusals[change.pk] = "Already reverted."
        elif change.kind not in known:
            refusals[change.pk] = f"Items of kind {change.kind!r} are no longer kept."
        else:
            pending.append((change, known[change.kind]))
    return refusals, pending


def _latest_change_ids(ids_by_kind: dict[str, set[int]]) -> dict[tuple[str, int], int]:
    """The id of each item's latest change, in one query: (kind, object id) -> change id."""
    which = Q()
    for kind, ids in ids_by_kind.items():
        which |= Q(kind=kind, object_id__in=ids)
    return {
        (kind, object_id): last
        for kind, object_id, last in Change.objects.filter(which)
        .order_by()
        .values("kind", "object_id")
        .annotate(last=Max("id"))
        .values_list("kind", "object_id", "last")
    }
