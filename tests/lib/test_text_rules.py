"""The rule for control characters, per kind of field (talorys/lib/validation.py): one-line
fields are made one line by the service that stores them, long text keeps its line ends and
tabs, NUL is refused. Through every service that stores one, whatever the entry point."""

from __future__ import annotations

import pytest

from agent.models import Conversation
from agent.services import conversation_title, conversation_title_generated
from talorys.accounts.services import api_token_create
from talorys.lib.errors import ValidationFailed
from talorys.lib.validation import clip, long_text, one_line
from talorys.notifications.channels import channel_create
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace.services.notes import note_create
from talorys.workspace.services.tasks import task_create

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("given", "line"),
    [
        ("Buy\r\nmilk", "Buy milk"),
        ("a\t\t\tb", "a b"),
        ("a\n\x1b\nb", "a b"),  # a dropped character does not split a run of breaks
        ("\x1b[31mred\x1b[0m", "[31mred[0m"),
        ("bell\x07 del\x7f c1\x9b", "bell del c1"),
        ("vt\vff\fnel\x85ls\u2028ps\u2029end", "vt ff nel ls ps end"),
        ("plain – é 漢字 🙂", "plain – é 漢字 🙂"),
    ],
)
def test_one_line_makes_breaks_a_space_and_drops_the_rest(given: str, line: str):
    assert one_line(given) == line
    assert one_line(line) == line


def test_long_text_keeps_line_ends_and_tabs_and_drops_the_rest():
    assert long_text("a\r\nb\rc\n\td\x1b[0m\x07\x0b\x0c\x7f\x85\x9f!") == "a\r\nb\rc\n\td[0m!"


@pytest.mark.parametrize(
    ("text", "shown"),
    [("", ""), ("abcde", "abcde"), ("abcdef", "abcd…"), ("a b c d e f", "a b …")],
)
def test_clip_keeps_what_fits_and_marks_a_cut_within_the_width(text: str, shown: str):
    assert clip(text, 5) == shown
    assert len(clip(text * 3, 5)) <= 5


def test_a_title_or_content_stored_by_a_service_follows_its_rule():
    note = note_create(title="Plan\r\nB\x1b", content="# Plan\r\n\n\t- dig\x1b[1m")

    assert (note.title, note.content) == ("Plan B", "# Plan\r\n\n\t- dig[1m")


def test_nul_is_refused_not_stored():
    with pytest.raises(ValidationFailed, match="NUL"):
        task_create(title="a\x00b")
    with pytest.raises(ValidationFailed, match="NUL"):
        note_create(title="Plan", content="a\x00b")


def test_names_outside_the_backup_are_one_line_too(owner):
    token, _raw = api_token_create(user=owner, name="laptop\r\nscript\x1b")
    channel = channel_create(name="Phone\tntfy", url="ntfy://127.0.0.1:9/t")
    settings = owner_settings_update(model_name="llama\t3\n")

    assert token.name == "laptop script"
    assert channel.name == "Phone ntfy"
    assert settings.model_name == "llama 3"


def test_a_conversations_titles_are_one_line():
    assert conversation_title(text="Hi\x1b[1m\nthere\tyou") == "Hi[1m there you"
    conversation = Conversation.objects.create(title="Hi")

    assert conversation_title_generated(conversation_id=conversation.pk, title="Trip\r\nplans")

    conversation.refresh_from_db()
    assert conversation.title == "Trip plans"
