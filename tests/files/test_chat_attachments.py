"""Files attached to a chat message: POST /api/chat takes ``attachments``, refuses an id that is
not a live file (nothing saved), the message shows its files on reload, and the turn gives the
model the files' text: the demo quotes the passage with its page link, a fake model sees it in
its prompt, and a fake model that calls search_files answers with the hit's link. The socket's
send frame takes the same field."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from agent.models import Conversation, Message
from files import services
from talorys.lib.markdown import render_markdown
from tests.agent.fake_openai import text, tool_calls
from tests.agent.test_chat_api import read_events
from tests.agent.test_runner import TURN_DATABASE, use_fake
from tests.agent.test_socket_frames import communicator
from tests.conftest import OWNER_PASSWORD
from tests.files.makers import text_pdf
from tests.waiting import HANG_SECONDS

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

REPORT = text_pdf(
    [
        ["Quarterly report", "Sales grew in every region this quarter."],
        ["Staffing", "The Lisbon office hired twelve engineers in March."],
        ["Costs", "Travel costs fell by a third after the new policy."],
    ]
)


def ask(api: Any, words: str, attachments: list[int], **more: Any) -> tuple[Any, list]:
    response = api.stream("/api/chat", {"text": words, "attachments": attachments, **more})
    return response, read_events(response) if response.status_code == 200 else []


def reply_of(events: list) -> str:
    assert events[-1][1]["status"] == "complete", events
    return "".join(data["delta"] for name, data in events if name == "text")


def test_the_demo_answers_from_the_attached_pdf_with_a_quote_and_its_page_link(api, upload):
    report = upload("report.pdf", REPORT)
    assert report.status == "ready"

    _, events = ask(api, "How many engineers did the Lisbon office hire?", [report.pk])

    reply = reply_of(events)
    link = f"[report.pdf, p. 2](/files/{report.pk}/content#page=2)"
    assert "twelve engineers" in reply and link in reply
    assert f'href="/files/{report.pk}/content#page=2"' in render_markdown(reply)
    # The owner's message keeps its file, and the conversation shows it on reload.
    conversation = api.get(f"/api/conversations/{events[0][1]['conversation_id']}").json()
    owner, answer = conversation["messages"]
    assert [(f["id"], f["name"], f["url"]) for f in owner["attachments"]] == [
        (report.pk, "report.pdf", f"/files/{report.pk}/content")
    ]
    assert answer["attachments"] == []


def test_a_fake_model_is_given_the_files_text_labelled_and_the_citation_rule(
    api, upload, fake_openai
):
    use_fake(fake_openai)
    fake_openai.script(text("Twelve."))
    report = upload("report.pdf", REPORT)

    ask(api, "How many engineers?", [report.pk])

    system = fake_openai.requests[-1]["messages"][0]["content"]
    assert f"[file {report.pk}: report.pdf, p. 2]\nStaffing" in system
    assert "Cite each passage you use" in system


def test_a_file_still_being_read_is_named_as_such(api, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text("It is not ready."))
    pending = services.file_create(name="notes.txt", stream=io.BytesIO(b"Some notes.\n"))

    ask(api, "What do the notes say?", [pending.pk])

    system = fake_openai.requests[-1]["messages"][0]["content"]
    assert f"[file {pending.pk}: notes.txt] is still being read" in system


def test_an_unknown_or_binned_file_is_refused_and_nothing_is_saved(api, upload):
    report = upload("report.pdf", REPORT)
    binned = upload("old.pdf", text_pdf([["Old"]]))
    services.file_delete(file_id=binned.pk)

    for ids in ([report.pk, 999_999], [binned.pk], list(range(1, 12))):
        response, _ = ask(api, "What does it say?", ids)

        assert response.status_code == 422, ids
        error = response.json()["error"]
        assert "attachments" in json.dumps(error["details"]), error
    assert not Conversation.objects.exists() and not Message.objects.exists()


def test_a_fake_model_searches_the_files_and_cites_the_hit(api, upload, fake_openai):
    use_fake(fake_openai)
    report = upload("report.pdf", REPORT)
    fake_openai.script(
        tool_calls(("search_files", json.dumps({"query": "travel costs"}))),
        text(
            f"Travel costs fell by a third ([report.pdf, p. 3](/files/{report.pk}/content#page=3))."
        ),
    )

    _, events = ask(api, "What happened to travel costs?", [])

    # What the model was given to cite is the link it answered with.
    hit = json.loads(fake_openai.requests[-1]["messages"][-1]["content"])["hits"][0]
    assert (hit["cite"], hit["url"]) == ("report.pdf, p. 3", f"/files/{report.pk}/content#page=3")
    assert f'href="{hit["url"]}"' in events[-1][1]["html"]


@pytest.fixture
def cookie(owner) -> bytes:
    client = Client()
    assert client.login(username="owner", password=OWNER_PASSWORD)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def test_the_socket_send_frame_attaches_files_and_refuses_a_binned_one(cookie, upload):
    report = upload("report.pdf", REPORT)
    binned = upload("old.pdf", text_pdf([["Old"]]))
    services.file_delete(file_id=binned.pk)

    async def scenario() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        ws = communicator("/ws/chat/", cookie)
        assert (await ws.connect())[0]
        try:
            await ws.send_json_to({"type": "send", "text": "Costs?", "attachments": [binned.pk]})
            refused = await ws.receive_json_from(timeout=HANG_SECONDS)
            await ws.send_json_to(
                {"type": "send", "text": "What about travel costs?", "attachments": [report.pk]}
            )
            events = [await ws.receive_json_from(timeout=HANG_SECONDS)]
            while events[-1]["type"] != "done":
                events.append(await ws.receive_json_from(timeout=HANG_SECONDS))
            return refused, events
        finally:
            await ws.disconnect()

    refused, events = async_to_sync(scenario)()

    assert (refused["type"], refused["code"]) == ("error", "VALIDATION")
    assert "No such file" in refused["message"]
    assert events[-1]["status"] == "complete"
    reply = "".join(event["delta"] for event in events if event["type"] == "text")
    assert f"(/files/{report.pk}/content#page=3)" in reply
    owner = Message.objects.get(role=Message.Role.USER)
    assert list(owner.attachments.values_list("pk", flat=True)) == [report.pk]


PNG = b"\x89PNG\r\n\x1a\n" + b"\1" * 100


def test_an_image_goes_to_a_model_that_sees_images_as_an_image_part(api, upload, fake_openai):
    use_fake(fake_openai, model_sees_images=True)
    fake_openai.script(text("A photo."))
    photo = upload("photo.png", PNG)

    ask(api, "What is in the photo?", [photo.pk])

    request = fake_openai.requests[-1]["messages"]
    text_part, image_part = request[-1]["content"]
    assert text_part == {"type": "text", "text": "What is in the photo?"}
    url = image_part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,") and base64.b64decode(url.split(",")[1]) == PNG
    assert f"[file {photo.pk}: photo.png] is an image, shown to you" in request[0]["content"]


def test_a_model_that_does_not_see_images_is_told_one_is_there(api, upload, fake_openai):
    use_fake(fake_openai)  # model_sees_images is off by default
    fake_openai.script(text("I cannot see it."))
    photo = upload("photo.png", PNG)

    ask(api, "What is in the photo?", [photo.pk])

    request = fake_openai.requests[-1]["messages"]
    assert request[-1]["content"] == "What is in the photo?"
    assert f"[file {photo.pk}: photo.png] is an image" in request[0]["content"]
    assert "data:image" not in json.dumps(request)
