"""Files in a real browser against live daphne and a real Celery worker (the one that reads an
upload's text in production, on the same broker and data dir): the owner attaches a small text
PDF in the chat, its chip turns ready once the worker has read it, and the answer cites the
passage's page as a link to the file at #page=N, once with the demo model (from the attached
text) and once with a fake OpenAI-compatible model that calls search_files. And the Files page:
an upload appears without a reload, shows where it was used, and Delete offers Undo."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from files.models import File
from tests.agent.fake_openai import text, tool_calls
from tests.browser.test_chat_page import say, use_fake_model
from tests.conftest import OWN_DATA_DIR, _live_env
from tests.files.makers import text_pdf
from tests.ops.running import celery_worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

REPORT = text_pdf(
    [
        ["Quarterly report", "Sales grew in every region this quarter."],
        ["Staffing", "The Lisbon office hired twelve engineers in March."],
        ["Costs", "Travel costs fell by a third after the new policy."],
    ]
)


@pytest.fixture
def live_server_env() -> dict[str, str]:
    """The daphne has this test's data dir, which the worker must share: the embedded broker's
    queue and the files' storage are there."""
    return {OWN_DATA_DIR: "1"}


@pytest.fixture
def worker(live_server_url, tmp_path, live_server_env) -> Iterator[subprocess.Popen]:
    """``celery worker`` with the live daphne's environment: its broker and its files."""
    log = tmp_path / "worker.log"
    with celery_worker(_live_env(tmp_path, live_server_env), log) as process:
        process.log = log  # type: ignore[attr-defined]
        yield process


def attach_report(page, tmp_path: Path) -> File:
    """Attach report.pdf with the Attach button; wait for its chip to say the worker read it."""
    from playwright.sync_api import expect

    path = tmp_path / "report.pdf"
    path.write_bytes(REPORT)
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach").click()
    chooser.value.set_files(str(path))
    chip = page.locator("#attachments .attachment")
    expect(chip).to_contain_text("report.pdf")
    expect(chip).to_contain_text("ready", timeout=120_000)  # the worker has read it
    return File.objects.get(name="report.pdf")


def test_the_demo_answers_about_an_attached_pdf_with_the_page_linked(
    signed_in, live_server_url, tmp_path, worker
):
    from playwright.sync_api import expect

    page = signed_in
    report = attach_report(page, tmp_path)
    assert (report.status, report.pages) == ("ready", 3)

    say(page, "How many engineers did the Lisbon office hire?")

    reply = page.locator("#messages li.assistant").last
    expect(reply).to_contain_text("twelve engineers")
    link = reply.get_by_role("link", name="report.pdf, p. 2")
    expect(link).to_have_attribute("href", f"/files/{report.pk}/content#page=2")
    expect(page.locator("#attachments")).to_be_hidden()  # sent: the chips are cleared
    # The owner's message lists its file, also after a reload.
    page.reload()
    owner = page.locator("#messages li.user").last
    expect(owner.get_by_role("link", name="report.pdf")).to_have_attribute(
        "href", f"/files/{report.pk}/content"
    )
    assert (
        page.request.get(f"{live_server_url}/files/{report.pk}/content").body().startswith(b"%PDF")
    )
    assert page.csp_violations == []


def test_a_fake_model_searches_the_files_and_the_reply_links_the_page(
    signed_in, tmp_path, worker, fake_openai
):
    from playwright.sync_api import expect

    page = signed_in
    use_fake_model(fake_openai)
    page.reload()
    report = attach_report(page, tmp_path)
    url = f"/files/{report.pk}/content#page=3"
    fake_openai.script(
        tool_calls(("search_files", json.dumps({"query": "travel costs"}))),
        text(f"Travel costs fell by a third ([report.pdf, p. 3]({url}))."),
    )

    say(page, "What happened to travel costs?")

    reply = page.locator("#messages li.assistant").last
    expect(reply.get_by_role("link", name="report.pdf, p. 3")).to_have_attribute("href", url)
    # What the model cited is what the tool gave it, and it was given the attached text too.
    hit = json.loads(fake_openai.requests[-1]["messages"][-1]["content"])["hits"][0]
    assert (hit["cite"], hit["url"]) == ("report.pdf, p. 3", url)
    assert (
        f"[file {report.pk}: report.pdf, p. 3]" in fake_openai.requests[0]["messages"][0]["content"]
    )


def test_the_files_page_uploads_without_a_reload_and_deletes_with_undo(
    signed_in, live_server_url, tmp_path
):
    from playwright.sync_api import expect

    page = signed_in
    page.goto(f"{live_server_url}/files/")
    expect(page.get_by_text("No files yet")).to_be_visible()
    path = tmp_path / "notes.txt"
    path.write_text("Buy paint for the fence.\n")

    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Choose files").click()
    chooser.value.set_files(str(path))

    row = page.locator("#file-rows tr", has_text="notes.txt")
    expect(row).to_be_visible()
    expect(page.locator("#upload-status")).to_have_text("Uploaded notes.txt.")
    file = File.objects.get()
    row.get_by_role("button", name="Delete notes.txt").click()
    expect(row).to_have_count(0)
    assert File.objects.live().count() == 0
    page.get_by_role("button", name="Undo").click()
    expect(page.locator("#file-rows tr", has_text="notes.txt")).to_be_visible()
    assert File.objects.live().get().pk == file.pk
    page.reload()  # the server's list has it too
    expect(page.locator(f"#file-{file.pk}")).to_contain_text("notes.txt")
    assert page.csp_violations == []
