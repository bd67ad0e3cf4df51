"""Error messages in the page's words (talorys/lib/wording.py): the field as the page labels it,
pydantic's phrases as what to do; and the pages' scripts (static/talorys/js/wording.js) say
the same as the server, from the same table."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from talorys.lib import wording
from talorys.lib.wording import Part, field_words, plain_message, plain_parts

JS = Path(__file__).resolve().parents[2] / "static" / "talorys" / "js" / "wording.js"
SETTINGS_LABELS = {"model_base_url": "Server URL"}
CHAT_LABELS = {"text": "Your message"}

# (message as a service or the API says it, the page's labels, what the page shows)
CASES = [
    ("title must not be empty.", {}, "Title is empty: fill it in."),
    (
        "model_base_url must start with http:// or https://.",
        SETTINGS_LABELS,
        "Server URL must start with http:// or https://, e.g. http://localhost:11434/v1.",
    ),
    (
        "schedule.day: Input should be greater than or equal to 1",
        {"schedule.day": "Day of the month"},
        "Day of the month must be 1 or more.",
    ),
    (
        "Invalid frame: send.text: String should have at most 32000 characters.",
        CHAT_LABELS,
        "Your message is longer than 32000 characters: shorten it.",
    ),
    (
        "schedule.time: use 24-hour HH:MM, e.g. 07:30; schedule.days: List should have at least 1"
        " item after validation, not 0",
        {"schedule.time": "Time", "schedule.days": "Days of the week"},
        "Time: Use 24-hour HH:MM, e.g. 07:30. Days of the week needs at least one choice.",
    ),
    ("project_id: project 999 does not exist.", {}, "Project 999 does not exist."),
    (
        "valid_from must not be after valid_to.",
        {"valid_from": "Holds since", "valid_to": "Holds until"},
        "Holds since must not be after Holds until.",
    ),
    (
        "daily_ai_requests: Input should be a valid integer",
        {},
        "Daily AI requests must be a whole number.",
    ),
    (
        "due_at must be between 1900-01-01 and 2200-01-01.",
        {},
        "Due must be between 1900-01-01 and 2200-01-01.",
    ),
    # Not about a field: said as it was, a sentence; a "; " inside it does not split it.
    ("The model server answered 500; try again", {}, "The model server answered 500; try again."),
    ("Conversation 4 does not exist.", {}, "Conversation 4 does not exist."),
]


@pytest.mark.parametrize(("message", "labels", "shown"), CASES)
def test_a_message_is_said_in_the_page_s_words(message, labels, shown):
    assert plain_message(message, labels) == shown


def test_each_problem_keeps_the_field_it_is_about():
    parts = plain_parts(
        "schedule.day: Input should be less than or equal to 31; name must not be empty.",
        {"schedule.day": "Day of the month", "name": "Name"},
    )

    assert parts == [
        Part("schedule.day", "Day of the month must be 31 or less."),
        Part("name", "Name is empty: fill it in."),
    ]
    assert plain_parts("Unknown settings section.") == [Part(None, "Unknown settings section.")]


def test_a_field_without_a_label_is_spelt_out():
    assert field_words("model_base_url") == "Model base URL"
    assert field_words("project_id") == "Project"
    assert field_words("send.text") == "Text"


def test_the_script_holds_the_server_s_table():
    source = JS.read_text()
    match = re.search(r"^const WORDING = (\{.*\});$", source, re.MULTILINE)
    assert match, "static/talorys/js/wording.js: WORDING is not one line of JSON"
    assert json.loads(match.group(1)) == {
        "rules": wording.RULES,
        "field_first": wording.FIELD_FIRST,
        "separator": wording.SEPARATOR,
        "lead": wording.LEAD,
        "capitals": wording.CAPITALS,
    }


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to run the page's module")
def test_the_script_says_what_the_server_says(tmp_path):
    script = tmp_path / "say.mjs"
    script.write_text(
        f'import {{ plainMessage }} from "{JS.as_uri()}";\n'
        f"const cases = {json.dumps([[m, labels] for m, labels, _ in CASES])};\n"
        "console.log(JSON.stringify(cases.map(([m, labels]) => plainMessage(m, labels))));\n"
    )
    said = subprocess.run(
        ["node", str(script)], capture_output=True, text=True, check=True, timeout=30
    ).stdout

    assert json.loads(said) == [shown for _m, _l, shown in CASES]
