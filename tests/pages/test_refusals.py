"""A refused form, as the pages render it: the message in the page's words, above the page with
the input it is about (for static/talorys/js/form-errors.js to put it by that input and focus
it), or a form shown again with "Not saved: N problems below" at its top; and the chat page
given the API's message limit and which failures a Retry can mend."""

from __future__ import annotations

import re

import pytest

from agent.services import MAX_MESSAGE_CHARS
from agent.views import RETRYABLE_CODES
from automations.models import Automation
from talorys.workspace.models import Task

pytestmark = pytest.mark.django_db


def alerts(html: str) -> list[tuple[str, str]]:
    """(data-field, text) of each refusal the page shows above its content."""
    block = re.search(r'<div class="flash-errors" role="alert">(.*?)</div>', html, re.DOTALL)
    assert block, "no alert list above the page"
    found = re.findall(r'<p class="error" id="[^"]+"(?: data-field="([^"]*)")?>(.*?)</p>', block[1])
    return [(field, text) for field, text in found]


def test_a_refused_action_is_an_alert_naming_its_input(signed_in):
    response = signed_in.post("/tasks/", {"title": "   "}, follow=True)

    assert alerts(response.text) == [("title", "Title is empty: fill it in.")]
    assert not Task.objects.exists()


def test_a_refusal_about_no_input_names_none(signed_in):
    response = signed_in.post("/settings/", {"section": "nonsense"}, follow=True)

    assert alerts(response.text) == [("", "Unknown settings section.")]


def test_a_done_action_is_a_status_not_an_alert(signed_in):
    response = signed_in.post("/tasks/", {"title": "Call mum"}, follow=True)

    assert re.search(
        r'<div role="status"><ul class="flash"><li class="success">Task “Call mum” added',
        response.text,
    )
    # The refusals' block is there, empty (app.css hides it).
    assert '<div class="flash-errors" role="alert"></div>' in response.text


def test_settings_name_the_field_as_the_page_labels_it(signed_in):
    response = signed_in.post(
        "/settings/",
        {"section": "model", "model_base_url": "ftp://models.example", "model_name": "m"},
        follow=True,
    )

    [(field, text)] = alerts(response.text)
    assert field == "model_base_url"
    assert text.startswith("Server URL must start with http:// or https://, e.g. ")
    assert "model_base_url" not in text


def test_a_form_shown_again_says_how_many_problems_at_its_top(signed_in):
    response = signed_in.post(
        "/automations/new/",
        {"name": "", "kind": "reminder", "schedule_type": "monthly", "schedule_time": "09:00"},
    )

    assert response.status_code == 400
    html = response.text
    top = html.index('<p class="form-problems" role="alert" tabindex="-1">')
    assert "Not saved: 2 problems below. Fix them and save again." in html
    assert top < html.index('name="name"')  # above the first field
    assert 'id="id_schedule_day-error-1">Give a day of the month (1-31).</p>' in html
    assert not Automation.objects.exists()


def test_an_unrefused_form_has_no_problems_line(signed_in):
    assert "form-problems" not in signed_in.get("/automations/new/").text


def test_the_chat_page_is_given_the_api_s_message_limit_and_what_retry_mends(signed_in):
    html = signed_in.get("/").text

    assert f'data-max-length="{MAX_MESSAGE_CHARS}"' in html
    assert f'data-retryable="{" ".join(RETRYABLE_CODES)}"' in html
    assert "VALIDATION" not in RETRYABLE_CODES and "PROVIDER_AUTH" not in RETRYABLE_CODES
    assert "PROVIDER_TIMEOUT" in RETRYABLE_CODES and "PROVIDER_UNREACHABLE" in RETRYABLE_CODES


def test_a_note_preview_too_long_is_said_plainly_and_its_json_keeps_the_api_s_words(signed_in):
    from talorys.workspace import services
    from talorys.workspace.models import Note

    note = services.note_create(title="Plan")
    too_long = {"content": "x" * (Note.CONTENT_MAX + 1)}

    page = signed_in.post(f"/notes/{note.pk}/preview/", too_long)
    assert f"Content is longer than {Note.CONTENT_MAX} characters: shorten it." in page.text

    answer = signed_in.post(f"/notes/{note.pk}/preview/", too_long, HTTP_ACCEPT="application/json")
    assert answer.status_code == 422
    assert answer.json()["error"] == {
        "code": "VALIDATION",
        "message": f"content is longer than {Note.CONTENT_MAX} characters.",
    }
