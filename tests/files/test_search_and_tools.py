"""Finding what the files say: /api/search with kinds=files, the model's file tools through the
executor (with what it needs to cite "name, p. N"), and the attachments' text for a turn."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.executor import ToolExecutor
from files import services
from files.selectors import files_context
from talorys.lib.errors import NotFound
from talorys.lib.tools import ToolContext
from talorys.owner.services.settings import owner_settings_update
from talorys.providers.base import ToolCall
from tests.files.makers import text_pdf

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def keyword_recall(db) -> None:
    owner_settings_update(semantic_enabled=False)


@pytest.fixture
def report(upload):
    pages = [["Introduction to the house."], ["The roof costs 4000 euros."], ["Garden: roses."]]
    return upload("report.pdf", text_pdf(pages))


def call(tool: str, mode: str = "chat", **arguments: Any) -> dict[str, Any]:
    executor = ToolExecutor(ctx=ToolContext(mode=mode, source="chat"), max_tool_calls=10)
    outcome = executor.execute(ToolCall(id="c1", name=tool, arguments=arguments))
    return json.loads(outcome.content)


def test_search_finds_the_passage_with_its_file_and_page(api, report):
    found = api.get("/api/search", {"q": "roof cost", "kinds": "files"})
    assert found.status_code == 200, found.content
    first = found.json()["items"][0]
    assert first["kind"] == "file"
    assert "roof costs 4000" in first["snippet"]
    assert first["file"] == {
        "id": report.pk,
        "name": "report.pdf",
        "page": 2,
        "heading": "",
        "url": f"/files/{report.pk}/content#page=2",
    }
    other = api.get("/api/search", {"q": "roof", "kinds": "task"}).json()["items"]
    assert other == []


def test_search_files_tool_gives_what_a_citation_needs(report):
    result = call("search_files", query="roof")
    assert result["ok"], result
    hit = result["hits"][0]
    assert (hit["file_id"], hit["name"], hit["page"], hit["cite"]) == (
        report.pk,
        "report.pdf",
        2,
        "report.pdf, p. 2",
    )
    assert "4000 euros" in hit["text"]


def test_read_file_reads_a_page_range(report):
    result = call("read_file", mode="read", file_id=report.pk, page_from=2, page_to=3)
    assert result["ok"], result
    assert [p["page"] for p in result["passages"]] == [2, 3]
    assert result["passages"][0]["cite"] == "report.pdf, p. 2"
    assert result["file"]["name"] == "report.pdf" and result["truncated"] is False


def test_the_tools_do_not_see_a_binned_file(report):
    services.file_delete(file_id=report.pk)
    assert call("search_files", query="roof")["hits"] == []
    assert call("list_files")["files"] == []
    refused = call("read_file", file_id=report.pk)
    assert not refused["ok"] and refused["error"]["code"] == "NOT_FOUND"


def test_read_file_refuses_a_backwards_range(report):
    refused = call("read_file", file_id=report.pk, page_from=3, page_to=1)
    assert not refused["ok"]


def test_the_context_is_whole_when_it_fits(report, upload):
    notes = upload("notes.md", b"# Plan\n\nPaint the fence.")
    context = files_context(file_ids=[report.pk, notes.pk], query="roof", budget_chars=10_000)
    assert context.whole
    first = context.text.index(f"[file {report.pk}: report.pdf, p. 1]")
    assert first < context.text.index(f"[file {notes.pk}: notes.md, Plan]")


def test_the_context_keeps_the_relevant_passages_within_the_budget(report):
    context = files_context(file_ids=[report.pk], query="how much is the roof", budget_chars=70)
    assert not context.whole
    assert [p.page for p in context.passages] == [2]
    assert len(context.text) <= 70
    assert context.text.startswith(f"[file {report.pk}: report.pdf, p. 2]")


def test_the_context_says_why_a_file_has_no_text(upload):
    broken = upload("broken.pdf", b"%PDF-1.4 nothing")
    context = files_context(file_ids=[broken.pk], query="x", budget_chars=1000)
    assert "could not be read: This PDF is damaged" in context.text
    with pytest.raises(NotFound):
        files_context(file_ids=[broken.pk + 100], query="x", budget_chars=1000)


def test_a_restored_file_is_found_again(report):
    assert call("search_files", query="roof")["hits"]
    services.file_delete(file_id=report.pk)
    assert call("search_files", query="roof")["hits"] == []
    services.file_restore(file_id=report.pk)
    assert [h["page"] for h in call("search_files", query="roof")["hits"]] == [2]


def test_a_turn_s_related_items_name_the_file_by_its_id(report):
    from memory.selectors import related_items_for_turn
    from memory.services import reindex_recent

    reindex_recent()  # the turn's lazy pass (memory.selectors.recall_pass) comes first
    lines = related_items_for_turn(text="what does the roof cost", conversation_id=None)
    assert lines[0].startswith(f"[file {report.pk}] report.pdf, p. 2: ")
