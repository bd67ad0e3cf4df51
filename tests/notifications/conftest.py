"""The automations' fixtures the notification tests share: the owner's zone, celery inline."""

from tests.automations.conftest import eager, owner_zone  # noqa: F401 (fixtures)
