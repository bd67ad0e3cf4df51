"""/imports/: linked from the backup page; lists past imports with Revert, which moves what
the import added to the bin."""

from __future__ import annotations

from agent.models import Conversation
from imports.models import ImportRun
from tests.imports.exports import chatgpt_conversation, chatgpt_zip, post


def test_the_backup_page_links_to_the_import_page(client, owner):
    client.force_login(owner)

    body = client.get("/backup/").content.decode()
    page = client.get("/imports/").content.decode()

    assert 'href="/imports/"' in body
    assert 'id="import-file"' in page and "No imports yet." in page


def test_a_past_import_is_listed_and_reverted_from_the_page(client, owner, api):
    post(api, chatgpt_zip([chatgpt_conversation()]), name="chatgpt-export.zip")
    run = ImportRun.objects.get()
    client.force_login(owner)

    listed = client.get("/imports/").content.decode()
    done = client.post(f"/imports/{run.pk}/revert/", follow=True).content.decode()

    assert "ChatGPT export: chatgpt-export.zip" in listed
    assert "1 conversation, 4 messages, 0 notes" in listed
    assert "Import reverted" in done and "Reverted (in the bin" in done
    assert not Conversation.objects.live().exists()


def test_the_change_log_and_the_bin_show_an_import_by_its_name(client, owner, api):
    post(api, chatgpt_zip([chatgpt_conversation()]), name="chatgpt-export.zip")
    run = ImportRun.objects.get()
    client.force_login(owner)

    changes = client.get("/changes/")
    client.post(f"/imports/{run.pk}/revert/")
    binned = client.get("/bin/")

    assert changes.status_code == 200 and binned.status_code == 200
    title = "Import of chatgpt-export.zip (1 conversation)"
    assert title in changes.content.decode()
    assert title in binned.content.decode()
    assert "Planning the garden" in binned.content.decode()
