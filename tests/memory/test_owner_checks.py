"""Owner-typed memories are checked too: the API, the /memories/ page and the
Django admin run the conflict check (the demo's verdicts here) before storing; ``updates``
supersedes (revertable), ``contradicts`` marks both, ``duplicate`` stores nothing and says so.
Bad input changes nothing. Backup imports are data and are not checked (tests/backup)."""

from __future__ import annotations

from django.test import Client

from memory import services
from memory.models import Memory, MemoryRevision
from talorys.history.models import Change
from tests.agent.fake_openai import verdict
from tests.agent.test_runner import TURN_DATABASE, use_fake
from tests.memory.test_conflict import sent_facts

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only


def current_texts() -> list[str]:
    return sorted(Memory.objects.filter(superseded_by=None).values_list("text", flat=True))


def test_the_api_supersedes_an_older_home_and_says_so(api):
    berlin = api.post("/api/memories", {"text": "I live in Berlin", "category": "place"}).json()
    assert berlin["conflict_check"]["verdict"] == "unrelated"

    answer = api.post("/api/memories", {"text": "I moved to Lisbon", "category": "fact"})

    assert answer.status_code == 201
    body = answer.json()
    assert body["conflict_check"]["verdict"] == "updates"
    assert body["conflict_check"]["memory_id"] == berlin["id"]
    assert current_texts() == ["I moved to Lisbon"]
    old = api.get(f"/api/memories/{berlin['id']}").json()
    assert old["superseded_by"] == body["id"]
    change = Change.objects.filter(kind="memory", object_id=berlin["id"]).latest("id")
    assert api.post(f"/api/changes/{change.pk}/revert").status_code == 200
    assert current_texts() == ["I live in Berlin", "I moved to Lisbon"]


def test_the_api_stores_no_duplicate_and_says_so(api):
    first = api.post("/api/memories", {"text": "Lives in Lisbon", "category": "place"}).json()

    answer = api.post("/api/memories", {"text": "I'm living in Lisbon now"})

    assert answer.status_code == 200
    body = answer.json()
    assert body["id"] == first["id"] and body["conflict_check"]["verdict"] == "duplicate"
    assert Memory.objects.count() == 1 and MemoryRevision.objects.count() == 1


def test_the_api_marks_a_contradiction_for_the_owner(api):
    coffee = api.post("/api/memories", {"text": "Likes coffee"}).json()

    body = api.post("/api/memories", {"text": "Does not like coffee"}).json()

    assert body["conflict_check"] == {
        "verdict": "contradicts",
        "memory_id": coffee["id"],
        "checked": True,
        "reason": "The same statement, negated.",
    }
    assert body["contradicts"] == coffee["id"]
    assert current_texts() == ["Does not like coffee", "Likes coffee"]


def test_an_api_edit_is_checked_and_a_duplicate_edit_is_not_applied(api):
    api.post("/api/memories", {"text": "Works at Acme"})
    other = api.post("/api/memories", {"text": "Likes tea"}).json()

    answer = api.patch(f"/api/memories/{other['id']}", {"text": "I work at Acme"})

    assert answer.status_code == 200
    assert answer.json()["conflict_check"]["verdict"] == "duplicate"
    assert Memory.objects.get(pk=other["id"]).text == "Likes tea"
    moved = api.patch(f"/api/memories/{other['id']}", {"text": "I started working at Globex"})
    assert moved.json()["conflict_check"]["verdict"] == "updates"
    assert current_texts() == ["I started working at Globex"]


def test_bad_input_is_refused_before_the_check_and_changes_nothing(api, fake_openai):
    api.post("/api/memories", {"text": "Lives in Berlin"})
    use_fake(fake_openai)

    answers = [
        api.post("/api/memories", {"text": "  "}),
        api.post("/api/memories", {"text": "x" * (Memory.TEXT_MAX + 1)}),
        api.post("/api/memories", {"text": "Lives in Rome", "category": "planet"}),
    ]

    assert {answer.status_code for answer in answers} == {422}
    assert fake_openai.json_requests == [] and current_texts() == ["Lives in Berlin"]


def test_a_models_verdict_applies_to_the_owners_write(api, fake_openai, local_embeddings):
    berlin = api.post("/api/memories", {"text": "Home: Berlin"}).json()
    use_fake(fake_openai)
    fake_openai.script_json(verdict("updates", berlin["id"], "moved"))

    body = api.post("/api/memories", {"text": "The owner relocated to Lisbon"}).json()

    assert body["conflict_check"]["verdict"] == "updates"
    shown = sent_facts(fake_openai.json_requests[-1])["remembered"]
    assert {"id": berlin["id"], "text": "Home: Berlin"} in shown
    assert current_texts() == ["The owner relocated to Lisbon"]


def test_the_page_supersedes_and_says_so(owner):
    signed_in = Client()
    signed_in.force_login(owner)
    services.memory_create_unchecked(text="Lives in Berlin", category="place")

    page = signed_in.post("/memories/", {"text": "I moved to Lisbon"}, follow=True)

    html = page.content.decode()
    assert "It replaces “Lives in Berlin”" in html
    assert current_texts() == ["I moved to Lisbon"]
    again = signed_in.post("/memories/", {"text": "Lives in Lisbon"}, follow=True)
    assert "Already remembered as “I moved to Lisbon”" in again.content.decode()
    assert Memory.objects.count() == 2


def test_the_admin_checks_before_it_stores(owner):
    client = Client()
    client.force_login(owner)
    services.memory_create_unchecked(text="Allergic to peanuts")
    inline = {
        f"revisions-{name}": "0" for name in ("TOTAL_FORMS", "INITIAL_FORMS", "MIN_NUM_FORMS")
    }

    added = client.post(
        "/admin/memory/memory/add/",
        {"text": "I'm no longer allergic to peanuts", "category": "fact", **inline},
    )

    assert added.status_code == 302
    assert current_texts() == ["I'm no longer allergic to peanuts"]
    old = Memory.objects.get(text="Allergic to peanuts")
    assert old.superseded_by is not None and old.deleted_at is None
