"""Periodic housekeeping for approvals: thin wrappers over services."""

from celery import shared_task

from approvals import services


@shared_task
def expire_pending_actions() -> int:
    return services.pending_actions_expire()


@shared_task
def prune_pending_actions() -> int:
    return services.pending_actions_prune()
