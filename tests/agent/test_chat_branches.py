"""Branches: an edit of any owner message starts a branch from there, the old one is kept and
reachable, and the model, the page and recall see the active branch only (agent/branches.py)."""

from __future__ import annotations

from agent import selectors
from agent.models import Conversation, Message
from agent.services import turn_claim
from tests.agent.fake_openai import text
from tests.agent.test_chat_api import read_events
from tests.agent.test_runner import (
    TURN_DATABASE,
    conversation_with,
    sent_messages,
    turn,
    use_fake,
)

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

FRUIT = (
    ("user", "name a fruit"),
    ("assistant", "Banana."),
    ("user", "a red one"),
    ("assistant", "Cherry."),
    ("user", "and a green one"),
    ("assistant", "Kiwi."),
)


def page(api, conversation: Conversation) -> list[dict]:
    return api.get(f"/api/conversations/{conversation.pk}").json()["messages"]


def contents(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages]


def switch(api, conversation: Conversation, message_id: int):
    return api.post(f"/api/conversations/{conversation.pk}/branch", {"message_id": message_id})


def edit(api, fake_openai, conversation: Conversation, message: Message, new: str, reply: str):
    fake_openai.script(text(reply))
    response = api.stream(
        "/api/chat",
        {"conversation_id": conversation.pk, "edit": True, "message_id": message.pk, "text": new},
    )
    return dict(read_events(response))


def test_editing_an_earlier_message_starts_a_branch_and_keeps_the_old_one(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(*FRUIT)
    red = conversation.messages.get(content="a red one")

    stream = edit(api, fake_openai, conversation, red, "a yellow one", "Lemon.")

    assert stream["done"]["status"] == "complete"
    old_ids = list(
        conversation.messages.filter(pk__gte=red.pk).order_by("pk").values_list("pk", flat=True)
    )[:4]
    assert stream["start"]["replaced_message_ids"] == old_ids
    # The model saw the path to the edited message only: nothing said after it.
    assert sent_messages(fake_openai.requests[0])[1:] == [
        ("user", "name a fruit"),
        ("assistant", "Banana."),
        ("user", "a yellow one"),
    ]
    shown = page(api, conversation)
    assert contents(shown) == ["name a fruit", "Banana.", "a yellow one", "Lemon."]
    yellow = shown[2]
    assert yellow["siblings"] == [red.pk, yellow["id"]]  # the old version first
    assert [len(m["siblings"]) for m in shown] == [1, 1, 2, 1]
    # Nothing is lost: every old message is still stored, out of recall while off the branch.
    assert Message.objects.filter(conversation=conversation).count() == 8
    recallable = set(selectors.recallable_messages().values_list("content", flat=True))
    assert "Cherry." not in recallable and "Lemon." in recallable

    # The next turn on the new branch sees it only.
    fake_openai.script(text("Sure."))
    turn(conversation_id=conversation.pk, text="thanks")
    assert ("assistant", "Cherry.") not in sent_messages(fake_openai.requests[1])
    assert ("assistant", "Lemon.") in sent_messages(fake_openai.requests[1])


def test_a_switch_shows_the_old_branch_again_and_back(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(*FRUIT)
    red = conversation.messages.get(content="a red one")
    edit(api, fake_openai, conversation, red, "a yellow one", "Lemon.")
    yellow = conversation.messages.get(content="a yellow one")

    back = switch(api, conversation, red.pk)

    assert back.status_code == 200
    assert contents(back.json()["messages"]) == [c for _r, c in FRUIT]  # down to its last reply
    assert contents(page(api, conversation)) == [c for _r, c in FRUIT]  # persisted
    # The model now sees the old branch, and not the edit.
    fake_openai.script(text("Green apple too."))
    turn(conversation_id=conversation.pk, text="another green one")
    seen = sent_messages(fake_openai.requests[1])
    assert ("assistant", "Kiwi.") in seen and ("user", "a yellow one") not in seen

    forth = switch(api, conversation, yellow.pk)

    assert contents(forth.json()["messages"]) == [
        "name a fruit",
        "Banana.",
        "a yellow one",
        "Lemon.",
    ]
    # And back to the old branch: to where the owner last was on it, the new turn included.
    again = switch(api, conversation, red.pk).json()["messages"]
    assert contents(again)[-2:] == ["another green one", "Green apple too."]


def test_regenerate_on_a_branch_adds_a_version_of_its_reply(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(*FRUIT)
    red = conversation.messages.get(content="a red one")
    edit(api, fake_openai, conversation, red, "a yellow one", "Lemon.")
    lemon = conversation.messages.get(content="Lemon.")
    fake_openai.script(text("Banana, again."))

    response = api.stream(
        "/api/chat",
        {"conversation_id": conversation.pk, "regenerate": True, "message_id": lemon.pk},
    )

    assert dict(read_events(response))["done"]["status"] == "complete"
    shown = page(api, conversation)
    assert contents(shown) == ["name a fruit", "Banana.", "a yellow one", "Banana, again."]
    assert shown[3]["siblings"] == [lemon.pk, shown[3]["id"]]
    assert shown[2]["siblings"] == [red.pk, shown[2]["id"]]
    assert contents(switch(api, conversation, lemon.pk).json()["messages"])[-1] == "Lemon."


def test_editing_the_first_message_makes_a_second_first_message(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(*FRUIT)
    first = conversation.messages.get(content="name a fruit")

    edit(api, fake_openai, conversation, first, "name a vegetable", "Leek.")

    shown = page(api, conversation)
    assert contents(shown) == ["name a vegetable", "Leek."]
    assert shown[0]["siblings"] == [first.pk, shown[0]["id"]]
    assert contents(switch(api, conversation, first.pk).json()["messages"]) == [
        c for _r, c in FRUIT
    ]


def test_a_summary_of_messages_off_the_new_branch_is_dropped(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(*FRUIT)
    cherry = conversation.messages.get(content="Cherry.")
    banana = conversation.messages.get(content="Banana.")
    red = conversation.messages.get(content="a red one")
    # A summary up to Banana (before the edit) still holds on the new branch: kept.
    Conversation.objects.filter(pk=conversation.pk).update(
        summary="Fruit talk.", summary_upto=banana.pk
    )
    edit(
        api,
        fake_openai,
        conversation,
        conversation.messages.get(content="and a green one"),
        "a blue one",
        "Blueberry.",
    )
    assert Conversation.objects.get().summary == "Fruit talk."
    # One up to Cherry speaks of messages the branch from "a red one" does not hold: dropped.
    Conversation.objects.filter(pk=conversation.pk).update(
        summary="Red fruit.", summary_upto=cherry.pk
    )

    edit(api, fake_openai, conversation, red, "a yellow one", "Lemon.")

    assert "Red fruit." not in fake_openai.requests[-1]["messages"][0]["content"]
    assert (Conversation.objects.get().summary, Conversation.objects.get().summary_upto) == (
        "",
        None,
    )
    # A switch does the same.
    Conversation.objects.filter(pk=conversation.pk).update(
        summary="Yellow.", summary_upto=conversation.messages.get(content="Lemon.").pk
    )
    switch(api, conversation, red.pk)
    assert Conversation.objects.get().summary == ""
    # And a regenerate of a reply the summary covers (the branch's last: Blueberry).
    blueberry = conversation.messages.get(content="Blueberry.")
    assert blueberry.replaced_at is None  # where the owner last was on that branch
    Conversation.objects.filter(pk=conversation.pk).update(
        summary="Blue.", summary_upto=blueberry.pk
    )
    fake_openai.script(text("Blackberry."))
    read_events(api.stream("/api/chat", {"conversation_id": conversation.pk, "regenerate": True}))
    assert Conversation.objects.get().summary == ""


def test_a_switch_is_refused_while_a_reply_is_written_or_for_another_conversation(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(*FRUIT)
    red = conversation.messages.get(content="a red one")
    edit(api, fake_openai, conversation, red, "a yellow one", "Lemon.")
    other = conversation_with(("user", "elsewhere"), ("assistant", "Yes."))
    before = list(Message.objects.order_by("pk").values_list("pk", "replaced_at"))

    assert switch(api, conversation, other.messages.first().pk).status_code == 404
    assert switch(api, conversation, 10**9).status_code == 404
    turn_claim(conversation_id=conversation.pk, turn_id="a-running-turn")
    busy = switch(api, conversation, red.pk)

    assert busy.status_code == 409
    assert busy.json()["error"]["code"] == "CONFLICT"
    assert list(Message.objects.order_by("pk").values_list("pk", "replaced_at")) == before
    assert Conversation.objects.get(pk=conversation.pk).turn_id == "a-running-turn"


def test_a_message_off_the_branch_cannot_be_edited(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(*FRUIT)
    red = conversation.messages.get(content="a red one")
    edit(api, fake_openai, conversation, red, "a yellow one", "Lemon.")
    before = list(Message.objects.order_by("pk").values_list("pk", "replaced_at", "content"))
    requests = len(fake_openai.requests)

    response = api.post(
        "/api/chat",
        {
            "conversation_id": conversation.pk,
            "edit": True,
            "message_id": red.pk,
            "text": "a pink one",
        },
    )

    assert response.status_code == 422
    assert "Only your own messages" in response.json()["error"]["message"]
    assert (
        list(Message.objects.order_by("pk").values_list("pk", "replaced_at", "content")) == before
    )
    assert len(fake_openai.requests) == requests


def test_a_binned_conversation_keeps_every_branch(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(*FRUIT)
    red = conversation.messages.get(content="a red one")
    edit(api, fake_openai, conversation, red, "a yellow one", "Lemon.")

    assert api.delete(f"/api/conversations/{conversation.pk}").status_code == 204
    assert switch(api, conversation, red.pk).status_code == 404
    assert api.post(f"/api/bin/conversation/{conversation.pk}/restore").status_code in (200, 204)

    assert Message.objects.filter(conversation=conversation).count() == 8
    assert contents(switch(api, conversation, red.pk).json()["messages"]) == [c for _r, c in FRUIT]
