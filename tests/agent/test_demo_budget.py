"""The demo assistant costs nothing: its replies never count against the day's chat budget, and
its help text ends with a paragraph of its own."""

from __future__ import annotations

from talorys.lib.markdown import render_markdown
from talorys.owner.models import UsageDay
from talorys.owner.services.settings import owner_settings_update
from talorys.providers.demo.parse import HELP
from talorys.workspace.models import Task
from tests.agent.test_runner import TURN_DATABASE, kinds, turn

pytestmark = TURN_DATABASE


def spent() -> int:
    return sum(UsageDay.objects.values_list("ai_requests", flat=True))


def test_demo_replies_do_not_spend_the_daily_budget(db):
    owner_settings_update(daily_ai_requests=1)  # one request a day: a second would be refused

    for text in ("hello", "add a task to buy oat milk", "what are my open tasks?", "hi again"):
        result = turn(text=text)
        assert kinds(result)[-1] == "done" and result[-1]["status"] == "complete", result

    assert Task.objects.filter(title__icontains="oat milk").exists(), list(
        Task.objects.values_list("title", flat=True)
    )
    assert spent() == 0


def test_a_configured_model_still_spends_it(db, fake_openai):
    from tests.agent.fake_openai import text
    from tests.agent.test_runner import use_fake

    use_fake(fake_openai, daily_ai_requests=100)
    fake_openai.script(text("Hi."))
    turn(text="hello")
    assert spent() >= 1


def test_the_help_text_ends_with_its_own_paragraph():
    html = render_markdown(HELP)

    last_item = html.split("<li>")[-1]
    assert "Configure a model" not in last_item.split("</li>")[0]
    assert html.rstrip().endswith("</ul>\n<p>Configure a model in Settings to chat freely.</p>")
