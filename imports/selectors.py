"""Imports' reads: the list of past imports and one import with recall's progress."""

from __future__ import annotations

from django.db.models import QuerySet

from imports.models import ImportRun
from talorys.lib.errors import NotFound


def import_list() -> QuerySet[ImportRun]:
    """Every import, the newest first, those reverted (in the bin) included."""
    return ImportRun.objects.all().order_by("-id")


def import_get(*, import_id: int) -> ImportRun:
    run = ImportRun.objects.filter(pk=import_id).first()
    if run is None:
        raise NotFound(f"Import {import_id} does not exist.")
    return run
