"""The worker's part of files: reading an upload's text (a thin wrapper over services)."""

from celery import shared_task

from files import services


@shared_task
def extract_file(file_id: int) -> str | None:
    file = services.file_extract(file_id=file_id)
    return file.status if file is not None else None
