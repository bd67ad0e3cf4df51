"""GET /api/search: recall's hits of every kind over HTTP."""

from __future__ import annotations

import pytest

from tests.memory.conftest import one_of_each, use_fake_embeddings

pytestmark = pytest.mark.django_db


def test_search_returns_hybrid_hits_of_every_kind(api, fake_openai):
    use_fake_embeddings(fake_openai)
    items = one_of_each("Skopelos")

    body = api.get("/api/search", {"q": "skopelos"}).json()

    assert body["mode"] == "hybrid" and body["error"] == ""
    assert body["count"] == len(body["items"]) == 6
    assert {(hit["kind"], hit["id"]) for hit in body["items"]} == {
        (kind, item.pk) for kind, item in items.items()
    }
    assert all(hit["score"] > 0 and hit["snippet"] for hit in body["items"])
    message = next(hit for hit in body["items"] if hit["kind"] == "message")
    assert message["conversation_id"] == items["message"].conversation_id


@pytest.mark.usefixtures("keyword_recall")
def test_without_an_embedder_search_is_keyword_and_narrowed_by_kinds(api):
    items = one_of_each("Skopelos")

    body = api.get("/api/search", {"q": "skopelos", "kinds": "tasks,automations"}).json()

    assert body["mode"] == "keyword"
    assert sorted((hit["kind"], hit["id"]) for hit in body["items"]) == [
        ("automation", items["automation"].pk),
        ("task", items["task"].pk),
    ]


@pytest.mark.parametrize(
    "params",
    [
        {"q": ""},
        {"q": "x" * 201},
        {"q": "ferry", "kinds": "tasks,pets"},
        {"q": "ferry", "kinds": "tasks," * 50},
        {"q": "a", "limit": 0},
    ],
)
def test_bad_search_input_is_a_clear_error(api, params):
    response = api.get("/api/search", params)

    assert response.status_code in (400, 422)
    assert response.json()["error"]["code"] == "VALIDATION"
    assert response.json()["error"]["message"]


def test_search_needs_the_owner(anon_api):
    assert anon_api.get("/api/search", {"q": "x"}).status_code == 401
