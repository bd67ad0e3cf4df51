"""Importing the same file again adds nothing; an import is one change-log entry, reverted as
a whole into the bin and restored from there; recall finds what came in once indexed."""

from __future__ import annotations

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agent.models import Conversation, Message
from imports.models import ImportedItem, ImportRun
from imports.services import import_index
from talorys.accounts.services import api_token_create
from talorys.history.models import Change
from talorys.workspace.models import Note
from tests.imports.exports import chatgpt_conversation, chatgpt_zip, post, upload, vault_zip


def _rows() -> tuple[int, int, int, int]:
    return (
        Conversation.objects.count(),
        Message.objects.count(),
        Note.objects.count(),
        ImportedItem.objects.count(),
    )


def test_the_same_file_imported_again_adds_nothing(api):
    export = chatgpt_zip([chatgpt_conversation()])
    assert post(api, export).status_code == 200
    assert post(api, vault_zip()).status_code == 200
    before = _rows()

    preview = post(api, export, dry_run=True).json()
    again = post(api, export).json()
    notes_again = post(api, vault_zip()).json()

    assert preview["here"]["conversations"] == 1 and preview["first"] == []
    assert again["added"] == {"conversations": 0, "messages": 0, "notes": 0, "files": 0}
    assert notes_again["added"]["notes"] == 0 and notes_again["here"]["notes"] == 3
    assert "Nothing new was imported." in again["lines"]
    assert _rows() == before


def test_a_conversation_that_went_on_elsewhere_is_left_as_it_is_and_said(api):
    assert post(api, chatgpt_zip([chatgpt_conversation()])).status_code == 200
    longer = chatgpt_conversation()
    longer["mapping"]["a2"]["children"] = ["u3"]
    longer["mapping"]["u3"] = {
        "id": "u3",
        "parent": "a2",
        "children": [],
        "message": {
            "id": "u3",
            "author": {"role": "user"},
            "create_time": 1_700_000_100,
            "content": {"content_type": "text", "parts": ["One more thing"]},
            "metadata": {},
            "recipient": "all",
        },
    }
    longer["current_node"] = "u3"
    before = _rows()

    report = post(api, chatgpt_zip([longer])).json()

    assert report["here"] == {"conversations": 1, "notes": 0, "files": 0, "changed": 1}
    assert any("newer messages" in line for line in report["lines"])
    assert _rows() == before


def test_an_import_is_one_change_reverted_as_a_whole_and_restored_from_the_bin(api):
    post(api, chatgpt_zip([chatgpt_conversation(), chatgpt_conversation("c-2", "Other")]))
    post(api, vault_zip())
    run = ImportRun.objects.get(source="vault")

    listed = api.get("/api/changes").json()["items"]
    entries = [change for change in listed if change["kind"] == "import"]
    assert len(entries) == 2 and len(listed) == 2
    reverted = api.post(f"/api/changes/{entries[0]['id']}/revert")

    assert reverted.status_code == 200, reverted.content
    assert not Note.objects.live().exists()
    assert Conversation.objects.live().count() == 2  # the other import's are untouched
    assert api.get(f"/api/imports/{run.pk}").json()["reverted"] is True

    restored = api.post(f"/api/bin/import/{run.pk}/restore")

    assert restored.status_code == 204, restored.content
    assert Note.objects.live().count() == 3
    assert api.get(f"/api/imports/{run.pk}").json()["reverted"] is False


def test_recall_indexes_what_came_in_and_shows_its_progress(api):
    response = post(api, chatgpt_zip([chatgpt_conversation()]))
    import_id = response.json()["id"]
    assert api.get(f"/api/imports/{import_id}").json()["indexed"] == 0

    import_index(import_id=import_id)

    shown = api.get(f"/api/imports/{import_id}").json()
    assert (shown["indexed"], shown["total"]) == (4, 4)
    found = api.get("/api/search", {"q": "courgettes"}).json()
    hit = found["items"][0]
    assert hit["kind"] == "message" and "courgettes" in hit["snippet"].lower()
    assert Message.objects.get(pk=hit["id"]).content == "Beans and courgettes."


def test_tokens_read_imports_but_never_import(owner, api):
    post(api, chatgpt_zip([chatgpt_conversation()]))
    script = Client(enforce_csrf_checks=True)
    _read, read_secret = api_token_create(user=owner, name="reader", scope="read")
    _write, write_secret = api_token_create(user=owner, name="writer", scope="write")
    export = chatgpt_zip([chatgpt_conversation("c-9", "Token's")])

    listed = script.get("/api/imports", headers={"Authorization": f"Bearer {read_secret}"})
    refused = [
        script.post(
            "/api/imports",
            {"file": upload(export)},
            headers={"Authorization": f"Bearer {secret}"},
        )
        for secret in (read_secret, write_secret)
    ]

    assert listed.status_code == 200 and listed.json()["count"] == 1
    assert listed.json()["items"][0]["counts"]["conversations"] == 1
    assert [r.status_code in (401, 403) for r in refused] == [True, True]
    assert not Conversation.objects.filter(title="Token's").exists()
    assert Change.objects.filter(kind="import").count() == 1


def test_the_list_of_imports_reads_as_many_queries_for_one_as_for_three(api):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert api.get("/api/imports").status_code == 200
        return len(captured)

    post(api, chatgpt_zip([chatgpt_conversation()]))
    one = queries()
    post(api, chatgpt_zip([chatgpt_conversation("c-2")]))
    post(api, vault_zip())

    assert api.get("/api/imports").json()["count"] == 3
    assert queries() == one


def test_a_conversation_deleted_for_good_comes_back_with_the_next_import(api):
    export = chatgpt_zip([chatgpt_conversation(), chatgpt_conversation("c-2", "Kept")])
    post(api, export)
    gone = Conversation.objects.get(title="Planning the garden")
    assert api.delete(f"/api/conversations/{gone.pk}").status_code == 204
    assert api.delete(f"/api/bin/conversation/{gone.pk}").status_code == 204

    report = post(api, export).json()

    assert report["added"]["conversations"] == 1 and report["first"] == ["Planning the garden"]
    assert sorted(Conversation.objects.values_list("title", flat=True)) == [
        "Kept",
        "Planning the garden",
    ]


def test_an_import_purged_from_the_bin_still_knows_what_it_brought(api):
    export = chatgpt_zip([chatgpt_conversation()])
    import_id = post(api, export).json()["id"]
    conversation = Conversation.objects.get()
    assert (
        api.post(f"/api/changes/{Change.objects.get(kind='import').pk}/revert").status_code == 200
    )
    assert api.post(f"/api/bin/conversation/{conversation.pk}/restore").status_code == 204
    assert api.delete(f"/api/bin/import/{import_id}").status_code == 204

    again = post(api, export).json()

    assert again["added"]["conversations"] == 0 and again["here"]["conversations"] == 1
    assert Conversation.objects.count() == 1
