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


# Per column heading of the preview table: its text, whether its content overflows its box, and
# the computed word breaking (never anywhere/break-all: "Unchang/ed" on a phone).
HEADINGS = """() => [...document.querySelectorAll(".backup-preview thead th")].map((th) => {
  const style = getComputedStyle(th);
  const words = document.createRange();
  words.selectNodeContents(th);
  return {
    text: th.textContent,
    overflows: th.scrollWidth > th.clientWidth,
    lines: new Set([...words.getClientRects()].map((box) => Math.round(box.top))).size,
    wrap: style.overflowWrap,
    breaks: style.wordBreak,
  };
})"""


def test_the_preview_on_a_phone_keeps_words_whole_and_says_how_rows_changed(
    signed_in_phone, live_server_url, tmp_path
):
    from playwright.sync_api import expect

    page = signed_in_phone
    task = Task.objects.create(title="Water the beds", details="Both of them")
    Task.objects.create(title="Buy seeds")
    path = tmp_path / "backup.json"
    path.write_bytes(page.request.get(f"{live_server_url}/api/backup/export").body())
    task.title = "Water the beds at dusk"  # edited here after the export: the file is older
    task.save()

    page.goto(f"{live_server_url}/backup/")
    page.get_by_label("Backup file").set_input_files(str(path))
    page.get_by_role("button", name="Preview import").click()
    expect(page.get_by_text("Nothing has changed yet")).to_be_visible()

    headings = page.evaluate(HEADINGS)
    assert [h["text"] for h in headings] == [
        "Kind",
        "Added",
        "Changed",
        "Unchanged",
        "Kept as here",
    ]
    for heading in headings:
        assert not heading["overflows"] and heading["lines"] == 1, heading
        assert heading["wrap"] not in ("anywhere", "break-word"), heading
        assert heading["breaks"] not in ("break-all", "break-word"), heading
    # The page keeps its width: the table scrolls inside its box instead.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    summary = page.get_by_text("Tasks: 1 changed")
    expect(summary).to_have_text("Tasks: 1 changed (title differs; 1 older in the file)")
    summary.click()
    tasks = page.locator("#backup-items details", has_text="Tasks:")
    expect(tasks.locator("li")).to_have_text(["Water the beds"])
    expect(tasks.locator(".backup-older")).to_have_text(
        "1 is older in the file than here: importing puts that earlier version back over the "
        "later edit."
    )
    assert page.csp_violations == []
