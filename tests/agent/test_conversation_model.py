"""A model per conversation: GET /api/models (the server's list, kept a while, the default alone
when it cannot be read), PATCH /api/conversations/{id} {"model"}, and the turns and titles that
ask the chosen model, against the fake model server (which lists two)."""

from __future__ import annotations

import pytest

from agent.models import Conversation
from tests.agent.fake_openai import completion, error, text
from tests.agent.test_chat_api import read_events
from tests.agent.test_runner import TURN_DATABASE, conversation_with, use_fake

pytestmark = TURN_DATABASE


def test_the_demo_lists_its_one_model(api):
    assert api.get("/api/models").json() == {
        "default": "demo",
        "models": ["demo"],
        "available": True,
        "problem": "",
    }


def test_the_servers_models_are_listed_default_first_and_kept_a_while(api, fake_openai):
    fake_openai.models = ["fake-model-large", "fake-model"]
    use_fake(fake_openai)

    first = api.get("/api/models").json()
    again = api.get("/api/models").json()

    assert first == {
        "default": "fake-model",
        "models": ["fake-model", "fake-model-large"],
        "available": True,
        "problem": "",
    }
    assert again == first
    assert fake_openai.models_asked == 1  # the second answer came from the cache


@pytest.mark.parametrize(
    "reply",
    [error(500, "models are down"), completion("not a list")],
    ids=["server error", "not a model list"],
)
def test_a_list_that_cannot_be_read_leaves_the_default_alone(api, fake_openai, reply):
    fake_openai.models_reply = reply
    use_fake(fake_openai)

    answer = api.get("/api/models")

    assert answer.status_code == 200
    body = answer.json()
    assert body["default"] == "fake-model" and body["models"] == ["fake-model"]
    assert body["available"] is False
    assert body["problem"].startswith("PROVIDER_")


def test_an_unreachable_server_leaves_the_default_alone(api):
    from talorys.owner.services.settings import owner_settings_update

    owner_settings_update(model_base_url="http://127.0.0.1:9/v1", model_name="far-model")

    body = api.get("/api/models").json()

    assert body["models"] == ["far-model"] and body["available"] is False
    assert "PROVIDER_UNREACHABLE" in body["problem"]


def test_a_chosen_model_answers_the_next_turn_and_its_title(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with()
    fake_openai.script(text("Hello from the large one."))

    patched = api.patch(f"/api/conversations/{conversation.pk}", {"model": "fake-model-large"})

    assert patched.status_code == 200
    assert patched.json()["model"] == "fake-model-large"
    assert patched.json()["title"] == "Earlier"  # a model alone leaves the title
    listed = api.get("/api/conversations").json()["items"]
    assert [item["model"] for item in listed] == ["fake-model-large"]

    stream = read_events(
        api.stream("/api/chat", {"conversation_id": conversation.pk, "text": "hello"})
    )
    assert stream[-1][1]["status"] == "complete"
    assert fake_openai.requests[-1]["model"] == "fake-model-large"
    # The title is asked of the conversation's model too (its first reply).
    assert [request["model"] for request in fake_openai.json_requests] == ["fake-model-large"]


def test_null_or_empty_goes_back_to_the_default(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(model="fake-model-large")

    for reset in (None, ""):
        Conversation.objects.filter(pk=conversation.pk).update(model="fake-model-large")
        answer = api.patch(f"/api/conversations/{conversation.pk}", {"model": reset})
        assert answer.status_code == 200 and answer.json()["model"] is None
        assert Conversation.objects.get(pk=conversation.pk).model == ""

    fake_openai.script(text("Default here."))
    api.stream("/api/chat", {"conversation_id": conversation.pk, "text": "hi"})
    assert fake_openai.requests[-1]["model"] == "fake-model"


def test_a_model_the_server_does_not_list_is_refused_and_changes_nothing(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(model="fake-model-large")

    answer = api.patch(
        f"/api/conversations/{conversation.pk}", {"model": "gpt-9", "title": "New title"}
    )

    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "VALIDATION"
    assert answer.json()["error"]["details"]["field"] == "model"
    assert "gpt-9" in answer.json()["error"]["message"]
    kept = Conversation.objects.get(pk=conversation.pk)
    assert (kept.model, kept.title) == ("fake-model-large", "Earlier")


def test_a_refused_title_leaves_the_model_as_it_was(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with()

    answer = api.patch(
        f"/api/conversations/{conversation.pk}", {"model": "fake-model-large", "title": "   "}
    )

    assert answer.status_code == 422
    assert Conversation.objects.get(pk=conversation.pk).model == ""


@pytest.mark.parametrize(
    "body",
    [{}, {"title": None}, {"model": "x" * 201}, {"model": 5}, {"colour": "red"}],
    ids=["nothing", "null title", "too long", "not text", "unknown field"],
)
def test_bad_patches_are_refused(api, body):
    conversation = conversation_with()

    answer = api.patch(f"/api/conversations/{conversation.pk}", body)

    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "VALIDATION"
    assert Conversation.objects.get(pk=conversation.pk).model == ""


def test_the_demo_refuses_another_model(api):
    conversation = conversation_with()

    answer = api.patch(f"/api/conversations/{conversation.pk}", {"model": "fake-model"})

    assert answer.status_code == 422
    assert api.patch(f"/api/conversations/{conversation.pk}", {"model": "demo"}).status_code == 200


def test_a_binned_or_missing_conversation_is_not_found(api, fake_openai):
    use_fake(fake_openai)

    answer = api.patch("/api/conversations/999", {"model": "fake-model"})

    assert answer.status_code == 404


def test_a_v1_client_may_name_any_listed_model(live_server_url, owner, fake_openai):
    import openai

    from tests.agent.test_openai_endpoint import client

    use_fake(fake_openai)
    ai = client(live_server_url, owner)

    assert [model.id for model in ai.models.list()] == ["talorys", "fake-model", "fake-model-large"]
    assert ai.models.retrieve("fake-model-large").id == "fake-model-large"
    fake_openai.script(text("Large says hi."), text("Default says hi."))
    said = [{"role": "user", "content": "hello"}]
    answer = ai.chat.completions.create(model="fake-model-large", messages=said)
    assert answer.choices[0].message.content == "Large says hi."
    assert fake_openai.requests[-1]["model"] == "fake-model-large"
    assert Conversation.objects.get().model == "fake-model-large"

    # The same chat continued as ``talorys``: the conversation goes back to the default.
    again = [
        *said,
        {"role": "assistant", "content": "Large says hi."},
        {"role": "user", "content": "and you?"},
    ]
    ai.chat.completions.create(model="talorys", messages=again)
    assert fake_openai.requests[-1]["model"] == "fake-model"
    assert Conversation.objects.get().model == ""

    with pytest.raises(openai.NotFoundError) as unknown:
        ai.chat.completions.create(model="gpt-9", messages=said)
    assert unknown.value.code == "model_not_found"
    assert Conversation.objects.count() == 1


def test_a_v1_answer_names_the_model_its_request_named(live_server_url, owner, fake_openai):
    from tests.agent.test_openai_endpoint import client

    use_fake(fake_openai)
    ai = client(live_server_url, owner)
    fake_openai.script(text("Large, whole."), text("Large, streamed."), text("Default, whole."))
    said = [{"role": "user", "content": "hello"}]

    key = {"Idempotency-Key": "named-1"}
    whole = ai.chat.completions.create(model="fake-model-large", messages=said, extra_headers=key)
    replayed = ai.chat.completions.create(
        model="fake-model-large", messages=said, extra_headers=key
    )
    chunks = list(
        ai.chat.completions.create(
            model="fake-model-large",
            messages=[{"role": "user", "content": "again"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    alias = ai.chat.completions.create(
        model="talorys", messages=[{"role": "user", "content": "hi"}]
    )

    assert whole.model == "fake-model-large"
    assert replayed.model_dump() == whole.model_dump()  # the first answer again, as named
    assert len(chunks) > 2 and {chunk.model for chunk in chunks} == {"fake-model-large"}
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Large, streamed."
    )
    # The alias is answered as the alias: the name the client chose (replies.model_named).
    assert alias.model == "talorys"


def test_a_new_conversation_may_begin_with_a_chosen_model(api, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text("Large here."))

    stream = read_events(api.stream("/api/chat", {"text": "hello", "model": "fake-model-large"}))

    assert stream[-1][1]["status"] == "complete"
    assert Conversation.objects.get().model == "fake-model-large"
    assert fake_openai.requests[-1]["model"] == "fake-model-large"


@pytest.mark.parametrize("existing", [False, True], ids=["unlisted", "existing conversation"])
def test_a_chat_with_a_model_it_cannot_take_changes_nothing(api, fake_openai, existing):
    use_fake(fake_openai)
    conversation = conversation_with(("user", "hi"), ("assistant", "Hello!")) if existing else None
    body = {"text": "hello", "model": "fake-model-large" if existing else "gpt-9"}
    if conversation is not None:
        body["conversation_id"] = conversation.pk

    answer = api.stream("/api/chat", body)

    assert answer.status_code == 422
    assert answer.json()["error"]["details"]["field"] == "model"
    assert Conversation.objects.count() == (1 if existing else 0)
    assert fake_openai.requests == []


def test_without_redis_the_list_is_read_each_time(fake_openai):
    from django.test import override_settings

    from talorys.owner.selectors import model_choices, owner_settings_get

    use_fake(fake_openai)
    away = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens there
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }
    with override_settings(CACHES={"default": away}):
        first = model_choices(owner_settings=owner_settings_get())
        again = model_choices(owner_settings=owner_settings_get())

    assert first.models == again.models == ["fake-model", "fake-model-large"]
    assert fake_openai.models_asked == 2
