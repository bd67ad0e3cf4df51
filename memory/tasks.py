"""Periodic work for memory and recall: thin wrappers over services."""

from celery import shared_task

from memory import services


@shared_task
def reindex_recall() -> dict[str, int]:
    """The catch-up: everything a turn's lazy pass left (vectors past its cap, changes it could
    not see), and the tombstones' purge."""
    report = services.reindex()
    return {"written": report.written, "removed": report.removed, "embedded": report.embedded}
