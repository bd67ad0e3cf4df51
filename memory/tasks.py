"""Periodic housekeeping for memories: thin wrappers over services."""

from celery import shared_task

from memory import services
from talorys.workspace.history import BIN_RETENTION


@shared_task
def purge_memory_bin() -> int:
    return services.memory_bin_purge(older_than=BIN_RETENTION)
