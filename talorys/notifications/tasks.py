"""Celery tasks of Web Push and the channels: thin wrappers over talorys/notifications/push.py
and talorys/notifications/channel_send.py."""

from celery import shared_task

from talorys.notifications import channel_send, push


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


@shared_task
def deliver_to_channel(delivery_id: int) -> str | None:
    return channel_send.channel_delivery_send(delivery_id=delivery_id)


@shared_task
def flush_channel_deliveries() -> int:
    """Beat: send channel messages held by quiet hours once they end, due retries, lost ones."""
    due = channel_send.channel_deliveries_flush()
    for delivery_id in due:
        deliver_to_channel.delay(delivery_id)
    return len(due)
