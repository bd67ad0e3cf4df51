"""Celery tasks of Web Push: thin wrappers over talorys/notifications/push.py."""

from celery import shared_task

from talorys.notifications import push


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
