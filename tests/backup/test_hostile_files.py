"""Hostile backups: refused with a clear error, changing nothing, in bounded memory; and an id
no creation could continue after is refused."""

from __future__ import annotations

import tempfile
import tracemalloc

import pytest

from backup.rows import ID_MAX
from backup.services import backup_import
from talorys.lib.errors import ValidationFailed
from talorys.workspace.models import Task
from tests.backup.helpers import document, exported, fingerprint, raw, seed
from tests.backup.hostile import SHAPES

pytestmark = pytest.mark.django_db

SIZE = 6 * 1024 * 1024
# What reading a SIZE file may hold at its peak (Python's allocations; the file is on disk): a
# giant string is held about three times (the parser's buffers and the str). json.loads alone
# peaked at 26 MiB (many rows), 63 MiB (many keys) and 95 MiB (many bad rows) on these files.
PEAK_MAX = 4 * SIZE


@pytest.mark.parametrize("shape", SHAPES)
def test_a_hostile_file_is_refused_in_bounded_memory_and_changes_nothing(shape: str):
    seed()
    before = fingerprint()
    with tempfile.TemporaryFile() as source:
        SHAPES[shape](source, SIZE)
        tracemalloc.start()
        try:
            with pytest.raises(ValidationFailed) as refused:
                backup_import(source=source, dry_run=True)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()

    assert refused.value.message
    assert peak < PEAK_MAX, f"{shape}: peak {peak / 2**20:.1f} MiB"
    assert fingerprint() == before


@pytest.mark.parametrize("ident", [2**63 - 1, 2**31])
def test_an_id_past_the_bound_is_refused_and_creation_goes_on(ident: int):
    seed()
    data = exported()["data"]
    data["tasks"].append(dict(data["tasks"][0], id=ident, title="Last id"))
    before = fingerprint()

    with pytest.raises(ValidationFailed) as refused:
        backup_import(source=raw(document(data)))

    assert f"above {ID_MAX}, the largest id an import takes" in refused.value.message
    assert fingerprint() == before
    assert Task.objects.create(title="Still possible").pk < ID_MAX
