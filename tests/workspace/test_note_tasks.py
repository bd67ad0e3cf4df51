"""A note's Markdown task list: "- [ ] cheese" renders as a checkbox (kept safe by nh3), and the
owner ticks it over the API, by its place and the note's version, as an edit like any other."""

from __future__ import annotations

from html.parser import HTMLParser

import nh3
import pytest

from talorys.history.models import Change
from talorys.lib.markdown import _CLEAN, render_markdown, task_items
from talorys.workspace import services
from talorys.workspace.models import Note

SHOPPING = "Shopping\n\n- [ ] cheese\n- [x] milk\n  - [ ] oat, not cow\n\n> 1. [X] bread\n"


class Elements(HTMLParser):
    """Each start tag with its attributes (nh3 writes them in no fixed order), and the text."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text += data


BOX = {"class": "task-check", "type": "checkbox", "disabled": ""}


def test_task_list_items_render_as_checkboxes_and_the_rest_as_text():
    shown = Elements(render_markdown("- [ ] cheese *aged*\n- [x] milk\n- [y] no\n- [ ]\n- plain"))

    assert shown.tags == [
        ("ul", {}),
        ("li", {"class": "task-item"}),
        ("label", {}),
        ("input", BOX),
        ("em", {}),
        ("li", {"class": "task-item"}),
        ("label", {}),
        ("input", BOX | {"checked": ""}),
        ("li", {}),
        ("li", {}),
        ("li", {}),
    ]
    assert shown.text.split() == ["cheese", "aged", "milk", "[y]", "no", "[", "]", "plain"]
    assert "<input" not in render_markdown("[ ] not in a list\n\n    - [ ] code\n")


def test_a_checkbox_is_only_ever_a_disabled_checkbox():
    # Raw HTML is off (an <input> typed in the text is text), and nh3 forces the type and
    # disabled on any input that would get through, with only its class and checked kept.
    shown = Elements(render_markdown('- [x] <input type="text" onfocus="alert(1)" autofocus>'))
    assert [attrs for tag, attrs in shown.tags if tag == "input"] == [BOX | {"checked": ""}]
    assert '<input type="text" onfocus="alert(1)" autofocus>' in shown.text

    cleaned = nh3.clean('<input type="submit" formaction="https://x" value="Go" checked>', **_CLEAN)
    assert Elements(cleaned).tags == [
        ("input", {"type": "checkbox", "disabled": "", "checked": ""})
    ]


def test_the_items_are_listed_in_the_order_they_are_shown():
    assert [(item.line, item.ticked) for item in task_items(SHOPPING)] == [
        (2, False),
        (3, True),
        (4, False),
        (6, True),
    ]


@pytest.mark.parametrize(
    ("index", "ticked", "expected"),
    [
        (0, True, "Shopping\n\n- [x] cheese\n- [x] milk\n  - [ ] oat, not cow\n\n> 1. [X] bread\n"),
        (
            1,
            False,
            "Shopping\n\n- [ ] cheese\n- [ ] milk\n  - [ ] oat, not cow\n\n> 1. [X] bread\n",
        ),
        (2, True, "Shopping\n\n- [ ] cheese\n- [x] milk\n  - [x] oat, not cow\n\n> 1. [X] bread\n"),
        (3, False, "Shopping\n\n- [ ] cheese\n- [x] milk\n  - [ ] oat, not cow\n\n> 1. [ ] bread"),
    ],
)
def test_the_owner_ticks_one_line_and_the_change_log_keeps_it(api, index, ticked, expected):
    note = services.note_create(title="Shopping", content=SHOPPING)

    response = api.post(
        f"/api/notes/{note.pk}/tasks/{index}", {"ticked": ticked, "version": note.version}
    )

    assert response.status_code == 200, response.content
    assert response.json()["content"] == expected.strip()
    assert response.json()["version"] == note.version + 1
    change = Change.objects.filter(kind="note", object_id=note.pk).latest("pk")
    assert change.action == Change.Action.UPDATE
    assert change.before is not None and change.after is not None
    assert change.before["content"] == SHOPPING.strip()
    assert change.after["content"] == expected.strip()


def test_windows_line_ends_are_kept(api):
    note = services.note_create(title="List", content="- [ ] a\r\n- [ ] b\r\n\r\ntext")
    response = api.post(f"/api/notes/{note.pk}/tasks/1", {"ticked": True, "version": 1})
    assert response.json()["content"] == "- [ ] a\r\n- [x] b\r\n\r\ntext"


def test_a_tick_from_a_stale_page_is_refused_and_changes_nothing(api):
    note = services.note_create(title="Shopping", content=SHOPPING)
    services.note_update(note_id=note.pk, content="- [ ] eggs\n" + SHOPPING)  # version 2

    response = api.post(f"/api/notes/{note.pk}/tasks/0", {"ticked": True, "version": 1})

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "CONFLICT"
    assert "has changed since you read it" in response.json()["error"]["message"]
    note.refresh_from_db()
    assert (note.version, note.content) == (2, ("- [ ] eggs\n" + SHOPPING).strip())
    assert Change.objects.filter(kind="note", object_id=note.pk).count() == 2


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("tasks/4", {"ticked": True, "version": 1}, 422),  # four boxes: 0-3
        ("tasks/0", {"ticked": True}, 422),  # the version is required
        ("tasks/0", {"ticked": "maybe", "version": 1}, 422),
        ("tasks/-1", {"ticked": True, "version": 1}, 404),
    ],
)
def test_bad_ticks_are_refused_and_change_nothing(api, path, body, status):
    note = services.note_create(title="Shopping", content=SHOPPING)

    response = api.post(f"/api/notes/{note.pk}/{path}", body)

    assert response.status_code == status, response.content
    if path == "tasks/4":
        assert response.json()["error"]["message"] == (
            "The note has no checkbox number 5 (it has 4). Reload the page and tick again."
        )
    assert Note.objects.get().version == 1
    assert api.post("/api/notes/999999/tasks/0", {"ticked": True, "version": 1}).status_code == 404
