"""Celery tasks of the owner's data: thin wrappers over services."""

from celery import shared_task

from talorys.workspace import services


@shared_task
def purge_bin() -> int:
    return services.bin_purge()
