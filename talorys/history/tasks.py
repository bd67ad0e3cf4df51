"""The bin's one beat job: a thin wrapper over its service."""

from celery import shared_task

from talorys.history.bin import bin_purge_expired


@shared_task
def purge_bin() -> int:
    """What has been in the bin longer than BIN_RETENTION goes for good, of every kind."""
    return bin_purge_expired()
