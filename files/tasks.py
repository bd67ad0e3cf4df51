"""The worker's part of files: reading an upload's text (thin wrappers over services).

An upload sends its extraction when its row commits; a file left ``pending`` (the broker was
down then, or the worker stopped mid-way) is sent again when a worker starts
(``extract_pending``, on Celery's ``worker_ready``): an extraction sent twice changes nothing.
"""

from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from files import selectors, services


@shared_task
def extract_file(file_id: int) -> str | None:
    file = services.file_extract(file_id=file_id)
    return file.status if file is not None else None


@worker_ready.connect
def extract_pending(**kwargs: Any) -> int:
    """Send the extraction of every pending file again. Returns how many."""
    pending = list(selectors.files_list(status="pending").values_list("pk", flat=True))
    for file_id in pending:
        extract_file.delay(file_id)
    return len(pending)
