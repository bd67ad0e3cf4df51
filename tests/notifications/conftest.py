"""The automations' fixture the notification tests share: the owner's zone."""

from tests.automations.conftest import owner_zone  # noqa: F401 (fixture)
