"""The worker's part of an import: recall's indexing of what it added (a thin task over
services.import_index, enqueued when the import commits)."""

from celery import shared_task

from imports.services import import_index


@shared_task
def index_import(import_id: int) -> dict[str, int]:
    run = import_index(import_id=import_id)
    return {"indexed": run.indexed, "total": run.total}
