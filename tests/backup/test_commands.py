"""talorys_export FILE (or - for stdout) and talorys_import FILE [--dry-run]."""

from __future__ import annotations

import io
import json
import os

import pytest
from django.core.management import CommandError, call_command

from talorys.workspace.models import Note, Task
from tests.backup.helpers import clear, fingerprint, seed

pytestmark = pytest.mark.django_db


def test_export_to_a_file_then_import_it_into_an_empty_database(tmp_path):
    seed()
    path = tmp_path / "backup.json"
    out = io.StringIO()

    call_command("talorys_export", str(path), stdout=out)
    clear()
    dry = io.StringIO()
    call_command("talorys_import", str(path), "--dry-run", stdout=dry)
    assert Task.objects.count() == 0
    call_command("talorys_import", str(path), stdout=(done := io.StringIO()))

    assert "Wrote" in out.getvalue() and oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert "Dry run: nothing was changed" in dry.getvalue() and "tasks: 2 added" in dry.getvalue()
    assert "tasks: 2 added" in done.getvalue()
    assert Task.objects.count() == 2 and Note.objects.count() == 2


def test_export_to_stdout(capfdbinary):
    seed()

    call_command("talorys_export", "-")

    assert json.loads(capfdbinary.readouterr().out)["format"] == "talorys-backup"


def test_a_bad_file_says_what_is_wrong_and_that_nothing_changed(tmp_path):
    seed()
    path = tmp_path / "bad.json"
    path.write_text('{"format": "talorys-backup", "version": 7}')
    before = fingerprint()

    with pytest.raises(CommandError, match="version 7.*Nothing was changed"):
        call_command("talorys_import", str(path))
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("talorys_import", str(tmp_path / "missing.json"))

    assert fingerprint() == before
