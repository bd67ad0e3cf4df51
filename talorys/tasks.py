"""Celery tasks of the core data: thin wrappers over services."""

from celery import shared_task

from talorys import push, services


@shared_task
def purge_bin() -> int:
    return services.bin_purge()


@shared_task
def deliver_push(delivery_id: int) -> str | None:
    return push.push_delivery_send(delivery_id=delivery_id)


@shared_task
def flush_push_deliveries() -> int:
    """Beat: send pushes held by quiet hours once they end, due retries and lost ones."""
    due = push.push_deliveries_flush()
    for delivery_id in due:
        deliver_push.delay(delivery_id)
    return len(due)
