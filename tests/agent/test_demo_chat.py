"""The demo model keeps the promises of its help through real chat turns (/api/chat, the real
tools): a task named by its exact title or one clear match is the one deleted (after the owner's
approval) or completed, weak neighbours a ranked search returns are never candidates, the
question about several lists only the real ones, and a demo conversation gets a short title
(talorys/providers/demo/choosing.py, titles.py). Its facts are in
tests/memory/test_fact_updates.py.
"""

from __future__ import annotations

import pytest

from agent.models import Conversation
from approvals.models import PendingAction
from talorys.lib.markdown import render_markdown
from talorys.providers.demo.parse import HELP
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.agent.test_runner import TURN_DATABASE
from tests.memory.test_turn_recall import say

pytestmark = TURN_DATABASE

DENTIST = [
    "Call the dentist",
    "Book the dentist",
    "Pay the dentist bill",
    "Dentist: ask about X-ray",
]


def tasks(*titles: str) -> dict[str, Task]:
    return {title: services.task_create(title=title) for title in titles}


@pytest.mark.parametrize(
    ("titles", "text", "target"),
    [
        (DENTIST, "delete the task book the dentist", "Book the dentist"),
        (DENTIST, "Delete the task “Book the dentist.”", "Book the dentist"),
        (DENTIST, "remove task BOOK THE DENTIST", "Book the dentist"),
        (["Buy milk", "Buy milk powder", "Buy oat milk"], "delete the task buy milk", "Buy milk"),
        (["Renew passport", "Call the bank"], "delete the task passport", "Renew passport"),
    ],
)
def test_delete_takes_the_exact_title_or_the_one_clear_match_and_waits_for_approval(
    api, titles, text, target
):
    made = tasks(*titles)

    _, reply = say(api, text)

    action = PendingAction.objects.get()
    assert (action.tool, action.target_id, action.status) == (
        "delete_task",
        made[target].pk,
        "pending",
    )
    assert reply == f"I've asked for your approval to delete the task “{target}”."
    assert Task.objects.live().count() == len(titles)  # nothing goes before the owner approves


def test_with_semantic_recall_the_exact_title_still_wins(api, local_embeddings):
    made = tasks(*DENTIST, "See the doctor", "Book a haircut")

    _, reply = say(api, "delete the task book the dentist")

    assert PendingAction.objects.get().target_id == made["Book the dentist"].pk
    assert "approval" in reply


def test_the_question_lists_only_real_candidates_each_on_its_own_line(api):
    made = tasks("Buy milk powder", "Buy oat milk", "Call the dairy", "Buy bread")

    _, reply = say(api, "delete the task buy milk")

    assert not PendingAction.objects.exists()
    powder, oat = made["Buy milk powder"].pk, made["Buy oat milk"].pk
    intro, *lines, blank, question = reply.split("\n")
    assert (intro, blank) == ("Several tasks match “buy milk”:", "")
    assert sorted(lines) == [f"- Buy milk powder (#{powder})", f"- Buy oat milk (#{oat})"]
    assert question == "Which one should I delete? Use more of its title."
    html = render_markdown(reply)
    assert html.count("<li>") == 2
    assert "<p>Which one should I delete? Use more of its title.</p>" in html


def test_two_tasks_of_the_same_title_are_told_apart_by_number(api):
    first, second = (services.task_create(title="Buy milk") for _ in range(2))

    conversation, reply = say(api, "delete the task buy milk")
    assert not PendingAction.objects.exists()
    assert f"- Buy milk (#{first.pk})" in reply and f"- Buy milk (#{second.pk})" in reply
    listed_first = reply.split("(#")[1].split(")")[0]  # the example is the first one listed
    assert reply.endswith(
        f"Use more of its title, or its number (“delete the task #{listed_first}”)."
    )

    say(api, f"delete the task #{second.pk}", conversation)
    assert PendingAction.objects.get().target_id == second.pk


@pytest.mark.parametrize(
    ("titles", "text", "target"),
    [
        (["File taxes", "File the taxes report"], "complete the task File taxes", "File taxes"),
        (["File taxes", "Call Ana"], "complete task file taxes.", "File taxes"),
        (["Water the plants", "Buy plant food"], "mark water the plants done", "Water the plants"),
        (["Water the plants"], "mark the plants as done", "Water the plants"),
        (["Call Ana", "Call Ana's school"], "mark done call Ana", "Call Ana"),
        (DENTIST, "finish the task book the dentist", "Book the dentist"),
        (["Buy milk", "Buy milk powder", "Buy bread"], "I bought the milk", "Buy milk"),
        (["Buy the milk", "Call the dairy"], "I bought the milk", "Buy the milk"),
        (["Pay rent", "Call the landlord"], "I've paid the rent", "Pay rent"),
        (["Call Ana", "Email Ana"], "I called Ana", "Call Ana"),
        (["Write the report", "Read the report"], "done with write the report", "Write the report"),
        (["Book flights"], "I'm done with the flights", "Book flights"),
    ],
)
def test_completing_by_chat_marks_the_named_task_done(api, titles, text, target):
    made = tasks(*titles)

    _, reply = say(api, text)

    done = set(Task.objects.filter(status="done").values_list("pk", flat=True))
    assert done == {made[target].pk}
    assert reply == f"Marked the task “{target}” as done."


@pytest.mark.parametrize(
    ("titles", "text", "reply"),
    [
        (
            ["Call the dairy"],
            "I bought the milk",
            "I couldn't find an open task matching “bought milk”.",
        ),
        (
            ["Sell the milk"],
            "I bought the milk",
            "I couldn't find an open task matching “bought milk”.",
        ),
        (
            ["Book the dentist"],
            "mark book the doctor done",
            "I couldn't find an open task matching “book the doctor”.",
        ),
        (["Start the report"], "I started the report", HELP),  # not a task done
    ],
)
def test_completing_never_guesses(api, titles, text, reply):
    tasks(*titles)

    _, said = say(api, text)

    assert said == reply
    assert not Task.objects.filter(status="done").exists()


def test_an_open_task_is_completed_before_a_done_one_of_the_same_title(api):
    old = services.task_create(title="Buy milk")
    services.task_complete(task_id=old.pk)
    new = services.task_create(title="Buy milk")

    _, reply = say(api, "I bought the milk")
    _, again = say(api, "mark buy milk done")

    assert set(Task.objects.filter(status="done").values_list("pk", flat=True)) == {old.pk, new.pk}
    assert reply == "Marked the task “Buy milk” as done."
    assert again == "The task “Buy milk” is already done."


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("add a task to buy milk", "Add task: buy milk"),
        ("Please add a task to buy milk.", "Add task: buy milk"),
        ("remind me to call Sam in 20 minutes", "Reminder: call Sam"),
        ("I live in Berlin", "Remember: lives in Berlin"),
        ("what are my open tasks?", "Open tasks"),
        ("mark buy milk done", "Done: buy milk"),
        ("create a note Groceries: eggs, bread", "New note: Groceries"),
        ("What's the capital of France?", "What's the capital of France"),
        (
            "Could you please tell me everything you know about the history of Rome?",
            "Could you please tell me everything you",
        ),
    ],
)
def test_a_demo_conversation_gets_a_short_title(api, text, title):
    conversation_id, _ = say(api, text)

    conversation = Conversation.objects.get(pk=conversation_id)
    assert (conversation.title, conversation.title_source) == (title, "message")
    assert len(title) <= 40
    listed = api.get("/api/conversations").json()["items"]
    assert [item["title"] for item in listed] == [title]
