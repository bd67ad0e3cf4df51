"""/notes/ and /notes/<id>/: the list, create, the rendered note (inert HTML), edit with a
preview that saves nothing, rename, delete to the bin, and the history with Revert."""

from __future__ import annotations

import re

import pytest

from talorys.history.models import Change
from talorys.lib.actors import Actor
from talorys.owner.selectors import owner_settings_get
from talorys.workspace import services
from talorys.workspace.models import Note

XSS = '<img src=x onerror="document.title=1">'
CHAT = Actor(source="chat")


@pytest.fixture
def signed_in(signed_in):
    owner_settings_get()  # the row exists, as it does after the first page
    return signed_in


def flash(response) -> str:
    return " ".join(str(m) for m in response.context["messages"])


def live_img(html: str) -> bool:
    """Whether the page holds an <img> element with an event handler (text of it is fine)."""
    return re.search(r"<img[^>]*onerror", html, re.IGNORECASE) is not None


def test_create_opens_the_new_note(signed_in):
    response = signed_in.post("/notes/", {"title": " Trip to Lisbon "})
    note = Note.objects.get()
    assert note.title == "Trip to Lisbon"
    assert response.status_code == 303 and response["Location"] == f"/notes/{note.pk}/#edit"

    for title, message in [("  ", "Title is empty: fill it in."), ("x" * 301, "longer than 300")]:
        response = signed_in.post("/notes/", {"title": title}, follow=True)
        assert message in flash(response)
    assert Note.objects.count() == 1


def test_the_list_shows_title_and_snippet_as_text(signed_in):
    services.note_create(title="Groceries", content="Oat milk,\n\n  bread " + XSS)
    page = signed_in.get("/notes/").text
    assert 'class="note-title"' in page and "Groceries" in page
    assert "Oat milk, bread &lt;img src=x" in page
    assert not live_img(page)


def test_the_note_is_rendered_markdown_with_stored_html_inert(signed_in):
    note = services.note_create(title="Plan", content=f"## Steps\n\n**Book** flights\n\n{XSS}")
    page = signed_in.get(f"/notes/{note.pk}/").text
    assert "<h2>Steps</h2>" in page
    assert "<strong>Book</strong>" in page
    assert not live_img(page)
    assert "&lt;img src=x" in page  # shown as text, in the body and in the editor


def test_save_and_bad_input(signed_in):
    note = services.note_create(title="Plan", content="one")
    response = signed_in.post(f"/notes/{note.pk}/", {"content": "two"}, follow=True)
    assert "Note saved." in flash(response)
    note.refresh_from_db()
    assert note.content == "two"

    too_long = "x" * (Note.CONTENT_MAX + 1)
    response = signed_in.post(f"/notes/{note.pk}/", {"content": too_long}, follow=True)
    assert f"Content is longer than {Note.CONTENT_MAX} characters: shorten it." in flash(response)
    note.refresh_from_db()
    assert note.content == "two"


def test_preview_renders_the_draft_and_saves_nothing(signed_in):
    note = services.note_create(title="Plan", content="saved")
    draft = f"*draft* {XSS}"
    page = signed_in.post(f"/notes/{note.pk}/preview/", {"content": draft})
    assert page.status_code == 200
    assert "<em>draft</em>" in page.text
    assert "Previewed, not saved yet." in page.text
    assert not live_img(page.text)

    answer = signed_in.post(
        f"/notes/{note.pk}/preview/", {"content": draft}, headers={"Accept": "application/json"}
    )
    assert answer.json()["html"].startswith("<p><em>draft</em> &lt;img")
    refused = signed_in.post(
        f"/notes/{note.pk}/preview/",
        {"content": "x" * (Note.CONTENT_MAX + 1)},
        headers={"Accept": "application/json"},
    )
    assert refused.status_code == 422
    note.refresh_from_db()
    assert note.content == "saved"
    assert not Change.objects.filter(action="update").exists()


def test_rename_and_delete_to_the_bin(signed_in):
    note = services.note_create(title="Plan")
    response = signed_in.post(f"/notes/{note.pk}/rename/", {"title": "Plan B"}, follow=True)
    assert "Renamed to “Plan B”." in flash(response)
    response = signed_in.post(f"/notes/{note.pk}/rename/", {"title": ""}, follow=True)
    assert "Title is empty: fill it in." in flash(response)
    note.refresh_from_db()
    assert note.title == "Plan B"

    response = signed_in.post(f"/notes/{note.pk}/delete/", follow=True)
    note.refresh_from_db()
    assert note.deleted_at is not None
    assert response.redirect_chain[-1][0] == "/notes/"
    assert 'Note “Plan B” moved to the bin. <a href="/bin/">Open the bin</a>' in response.text
    assert signed_in.get(f"/notes/{note.pk}/").status_code == 404


def test_history_shows_who_changed_what_and_reverts_the_latest(signed_in):
    note = services.note_create(title="Plan", content="Fly on Monday")
    services.note_update(note_id=note.pk, content="Fly on Tuesday", actor=CHAT)
    change = Change.objects.filter(action="update").get()

    page = signed_in.get(f"/notes/{note.pk}/").text
    assert "The assistant" in page and "You" in page
    assert "<del>Monday</del><ins>Tuesday</ins>" in page
    assert page.count('class="inline revert"') == 1  # only the edit the note still holds

    response = signed_in.post(f"/notes/{note.pk}/revert/{change.pk}/", follow=True)
    assert "Change reverted." in flash(response)
    note.refresh_from_db()
    assert note.content == "Fly on Monday"
    assert "Reverted" in response.text

    again = signed_in.post(f"/notes/{note.pk}/revert/{change.pk}/", follow=True)
    assert "already reverted" in flash(again)
    note.refresh_from_db()
    assert note.content == "Fly on Monday"


def test_a_revert_is_refused_once_the_note_changed_since(signed_in):
    note = services.note_create(title="Plan", content="a")
    services.note_update(note_id=note.pk, content="b", actor=CHAT)
    first = Change.objects.filter(action="update").get()
    services.note_update(note_id=note.pk, content="c")
    page = signed_in.get(f"/notes/{note.pk}/").text
    assert page.count('class="inline revert"') == 1  # the newest edit only

    response = signed_in.post(f"/notes/{note.pk}/revert/{first.pk}/", follow=True)
    assert "changed since" in flash(response)
    note.refresh_from_db()
    assert note.content == "c"


def test_a_change_of_another_item_is_not_reverted_here(signed_in):
    note = services.note_create(title="Plan")
    other = services.note_create(title="Other", content="x")
    services.note_update(note_id=other.pk, content="y")
    change = Change.objects.filter(action="update").get()
    response = signed_in.post(f"/notes/{note.pk}/revert/{change.pk}/", follow=True)
    assert f"Change {change.pk} is not a change of note {note.pk}" in flash(response)
    other.refresh_from_db()
    assert other.content == "y"


def test_ten_thousand_notes_page_in_a_few_queries(signed_in, django_assert_max_num_queries):
    Note.objects.bulk_create(
        Note(title=f"Note {n}", content=f"Body {n} " + "long text " * 500) for n in range(10_000)
    )
    # Session, user, owner settings, the count, the page; the session's save in a savepoint.
    with django_assert_max_num_queries(8) as queries:
        response = signed_in.get("/notes/?page=7")
    assert response.text.count('class="note-title"') == 50
    assert "Page 7 of 200 · 10000 in all" in response.text
    page_read = next(q["sql"] for q in queries.captured_queries if "LIMIT" in q["sql"])
    assert '"talorys_note"."content",' not in page_read  # a preview, never the whole content


def test_bad_page_numbers_say_so(signed_in):
    services.note_create(title="Plan")
    response = signed_in.get("/notes/?page=last")
    assert "“last” is not a page number; this is page 1." in response.text
    assert "Plan" in response.text
