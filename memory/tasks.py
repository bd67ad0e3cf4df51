"""Periodic work for memory and recall: thin wrappers over services."""

from celery import shared_task

from memory import services
from talorys.workspace.history import BIN_RETENTION


@shared_task
def purge_memory_bin() -> int:
    return services.memory_bin_purge(older_than=BIN_RETENTION)


@shared_task
def reindex_recall() -> dict[str, int]:
    """The catch-up: everything a turn's lazy pass left (vectors past its cap, changes it could
    not see), and the tombstones' purge."""
    report = services.reindex()
    return {"written": report.written, "removed": report.removed, "embedded": report.embedded}
