"""/backup/ in a real browser against live daphne: the export downloads through ASGI streaming,
and importing that file shows its preview and, once confirmed, imports it."""

from __future__ import annotations

import json

import pytest

from talorys.workspace.models import Task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_download_a_backup_then_preview_and_import_it(signed_in, live_server_url, tmp_path):
    from playwright.sync_api import expect

    page = signed_in
    Task.objects.create(title="Water the beds")
    page.goto(f"{live_server_url}/backup/")

    with page.expect_download() as download:
        page.get_by_role("link", name="Download a backup").click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    document = json.loads(path.read_text())
    assert [row["title"] for row in document["data"]["tasks"]] == ["Water the beds"]

    Task.objects.all().delete()
    page.get_by_label("Backup file").set_input_files(str(path))
    page.get_by_role("button", name="Preview import").click()
    expect(page.get_by_text("Nothing has changed yet")).to_be_visible()
    expect(page.get_by_role("row", name="Tasks 1 0 0 0")).to_be_visible()
    page.get_by_text("Tasks: 1 added").click()
    # The tasks' list (the settings may show as changed too: the page sets the browser's time
    # zone at the first login, which can land after the export under load).
    tasks = page.locator("#backup-items details", has_text="Tasks:")
    expect(tasks.locator("li")).to_have_text(["Water the beds"])
    expect(page.get_by_label("Backup file")).to_be_visible()  # another file can replace it
    from tests.browser.test_accessibility import axe_source, violations

    assert violations(page, axe_source()) == []  # the pending preview, with its lists open
    assert not Task.objects.exists()
    page.get_by_role("button", name="Confirm import").click()

    expect(page.get_by_text("Imported. Added 1 task.")).to_be_visible()
    assert list(Task.objects.values_list("title", flat=True)) == ["Water the beds"]
    # Edited after the export, its checksum no longer matches: refused by name, nothing changed.
    document["data"]["tasks"][0]["title"] = "Water the beds twice"
    path.write_text(json.dumps(document))
    page.get_by_label("Backup file").set_input_files(str(path))
    page.get_by_role("button", name="Preview import").click()
    expect(page.get_by_text("checksum does not match")).to_be_visible()
    assert list(Task.objects.values_list("title", flat=True)) == ["Water the beds"]
    assert page.csp_violations == []
