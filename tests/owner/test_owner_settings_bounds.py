"""The limits' bounds are the model's (SETTINGS_BOUNDS): the service refuses with a clear message,
the fields' validators refuse in a form, and the table refuses a write that went around both."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from talorys.lib.errors import ValidationFailed
from talorys.owner.models import SETTINGS_BOUNDS, OwnerSettings
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.settings import owner_settings_update

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("name", "bounds"), sorted(SETTINGS_BOUNDS.items()))
def test_each_bound_holds_in_the_service_the_model_and_the_table(name, bounds):
    low, high = bounds
    row = owner_settings_get()
    before = getattr(row, name)

    for outside in (low - 1, high + 1):
        if outside < 0:
            continue  # a positive field refuses it anyway
        with pytest.raises(ValidationFailed, match=f"{name} must be between {low} and {high}"):
            owner_settings_update(**{name: outside})
        setattr(row, name, outside)
        with pytest.raises(Exception, match="Ensure this value"):
            row.full_clean()
        with pytest.raises(IntegrityError), transaction.atomic():
            OwnerSettings.objects.filter(pk=1).update(**{name: outside})

    assert getattr(OwnerSettings.objects.get(pk=1), name) == before
    assert getattr(owner_settings_update(**{name: high}), name) == high


def test_the_typed_changes_are_every_settable_setting():
    from talorys.owner.services.settings import SETTINGS_FIELDS, OwnerSettingsChanges

    assert set(OwnerSettingsChanges.__annotations__) == SETTINGS_FIELDS


@pytest.mark.django_db(transaction=True)
def test_the_bounds_migration_brings_a_stored_value_within_its_bound():
    """Only a hand-edited backup could have stored one, but an upgrade must not stop on it."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("owner", "0001_initial")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("owner", "OwnerSettings")
    old.objects.update_or_create(
        pk=1, defaults={"max_steps_per_turn": 500, "max_context_tokens": 5, "time_zone": "UTC"}
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    row = OwnerSettings.objects.get(pk=1)
    assert (row.max_steps_per_turn, row.max_context_tokens) == (50, 256)
