"""The settings row's version changes with every write, so a turn may keep the row in memory
while the version it reads anyway is the one it kept (owner_settings_current)."""

from __future__ import annotations

import pytest

from backup.services import backup_import
from talorys.owner.models import OwnerSettings
from talorys.owner.selectors import owner_settings_current, owner_settings_get
from talorys.owner.services.calendar import calendar_secret_rotate
from talorys.owner.services.settings import owner_settings_update
from tests.backup.helpers import document, exported, raw

pytestmark = pytest.mark.django_db


def _version() -> int:
    return OwnerSettings.objects.get(pk=1).version


def test_every_write_of_the_settings_gives_them_a_new_version():
    versions = [owner_settings_get().version]

    owner_settings_update(max_output_tokens=1500)
    versions.append(_version())
    row = OwnerSettings.objects.get(pk=1)
    row.time_zone = "Europe/Paris"
    row.save(update_fields=["time_zone"])
    versions.append(_version())
    calendar_secret_rotate()
    versions.append(_version())
    data = exported()["data"]
    data["settings"][0]["max_output_tokens"] = 1700
    backup_import(source=raw(document(data)))
    versions.append(_version())

    assert OwnerSettings.objects.get(pk=1).max_output_tokens == 1700
    assert len(set(versions)) == len(versions)


def test_the_kept_settings_serve_only_while_their_version_holds(django_assert_num_queries):
    first = owner_settings_current(version=None)  # none read yet: read and kept

    with django_assert_num_queries(0):
        kept = owner_settings_current(version=first.version)
    owner_settings_update(model_name="another-model")
    version = _version()
    with django_assert_num_queries(1):
        changed = owner_settings_current(version=version)

    assert kept.model_name == first.model_name and kept is not first
    assert changed.model_name == "another-model"
    kept.model_name = "changed by a caller"  # each caller has a copy of its own
    assert owner_settings_current(version=_version()).model_name == "another-model"


def test_a_row_made_again_is_read_again():
    kept = owner_settings_current(version=None)
    OwnerSettings.objects.all().delete()
    made_again = owner_settings_get()

    assert made_again.version != kept.version
    assert owner_settings_current(version=made_again.version).pk == 1
