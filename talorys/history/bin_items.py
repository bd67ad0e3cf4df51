"""The bin a page at a time (/bin/, /api/bin, ``bin.bin_list``), without reading the whole bin
for one page of it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from django.db.models import CharField, F, Q, QuerySet, Value

from talorys.history.kinds import item_kinds, rows_of
from talorys.history.models import Change


@dataclass(frozen=True)
class BinItem:
    kind: str
    id: int
    title: str
    deleted_at: dt.datetime
    deleted_by: str


class BinItems(Sequence[BinItem]):
    """Every binned item of every kind, most recently deleted first, read a slice at a time: a
    Paginator counts it in one query and reads a page in one, then each kind's rows on that page
    and their deleters, never the whole bin."""

    def __init__(self) -> None:
        self._kinds = {kind.name: kind for kind in item_kinds()}
        self._count: int | None = None

    def _keys(self) -> QuerySet:
        parts = [
            rows_of(kind.model)
            .filter(deleted_at__isnull=False)
            .order_by()
            # Named apart from the models' own fields (an automation has a ``kind``).
            .annotate(bin_kind=Value(name, output_field=CharField()), bin_id=F("pk"))
            .values_list("bin_kind", "bin_id", "deleted_at")
            for name, kind in self._kinds.items()
        ]
        if not parts:
            return Change.objects.none()
        first, *rest = parts
        return first.union(*rest, all=True) if rest else first

    def count(self) -> int:  # type: ignore[override] # what a Paginator asks first
        if self._count is None:
            self._count = self._keys().count()
        return self._count

    def __len__(self) -> int:
        return self.count()

    @overload
    def __getitem__(self, index: int) -> BinItem: ...
    @overload
    def __getitem__(self, index: slice) -> list[BinItem]: ...
    def __getitem__(self, index: int | slice) -> BinItem | list[BinItem]:
        if isinstance(index, int):
            return self[index : index + 1][0]
        keys: list[tuple[str, int, dt.datetime]] = list(
            self._keys().order_by("-deleted_at", "-bin_kind", "-bin_id")[index]
        )
        ids: dict[str, list[int]] = {}
        for name, pk, _when in keys:
            ids.setdefault(name, []).append(pk)
        objects = {
            (name, obj.pk): obj
            for name, pks in ids.items()
            for obj in rows_of(self._kinds[name].model).filter(pk__in=pks)
        }
        which = Q(pk__in=[])
        for name, pks in ids.items():
            which |= Q(kind=name, object_id__in=pks)
        deleters = {
            (kind, object_id): source
            for kind, object_id, source in Change.objects.filter(which, action=Change.Action.DELETE)
            .order_by("id")  # the latest delete of an item wins
            .values_list("kind", "object_id", "source")
        }
        items = []
        for name, pk, when in keys:
            obj = objects.get((name, pk))
            if obj is None:  # purged between the two reads
                continue
            items.append(
                BinItem(
                    kind=name,
                    id=pk,
                    title=self._kinds[name].title(obj)[: Change.TITLE_MAX],
                    deleted_at=when,
                    deleted_by=deleters.get((name, pk), ""),
                )
            )
        return items
