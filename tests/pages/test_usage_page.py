"""/usage/: requests per day against the budgets, as inline SVG charts with a table of the
same numbers, and today's counters against the limits."""

from __future__ import annotations

import datetime as dt
import re

from django.utils import timezone

from talorys.owner.models import UsageDay
from talorys.owner.services.settings import owner_settings_update


def test_today_s_counters_against_the_limits_and_the_tokens(signed_in):
    owner_settings_update(daily_ai_requests=40)
    today = timezone.now().date()
    UsageDay.objects.create(
        day=today, ai_requests=12, embedding_requests=1000, input_tokens=345, output_tokens=67
    )

    body = signed_in.get("/usage/").content.decode()

    assert re.search(r"<strong>12</strong> of 40\s*</span>", body)
    assert "28 left" in body
    assert "Budget used up" in body  # 1000 of 1000 embedding requests
    assert "<strong>345</strong> in" in body and "<strong>67</strong> out" in body


def test_the_charts_draw_a_bar_per_day_that_had_requests_and_the_budget_line(signed_in):
    owner_settings_update(daily_ai_requests=100)
    today = timezone.now().date()
    UsageDay.objects.create(day=today, ai_requests=50)
    UsageDay.objects.create(day=today - dt.timedelta(days=3), ai_requests=150)  # over budget
    UsageDay.objects.create(day=today - dt.timedelta(days=45), ai_requests=7)  # not shown

    body = signed_in.get("/usage/").content.decode()
    chart = body[body.index('aria-labelledby="chart-ai_requests-title"') :]
    chart = chart[: chart.index("</svg>")]

    bars = re.findall(
        r'<rect class="bar bar-ai( over)?" x="(\d+)" y="([\d.]+)" width="8" height="([\d.]+)"',
        chart,
    )
    # Scaled to the busiest day (150): today's 50 is a third of its height, drawn rightmost.
    assert [(over, x, height) for over, x, _y, height in bars] == [
        (" over", "261", "90.0"),
        ("", "291", "30.0"),
    ]
    assert 'class="limit-line"' in chart and 'y1="40.0"' in chart  # 100 of 150
    assert (
        '<title id="chart-ai_requests-title">Chat requests per day, the last 30 days: 200 in all'
        in chart
    )
    assert 'style="' not in body  # the CSP allows no inline style: colours are classes


def test_the_numbers_are_in_a_table_too_newest_first(signed_in):
    today = timezone.now().date()
    UsageDay.objects.create(day=today - dt.timedelta(days=1), scheduled_ai_requests=9)

    body = signed_in.get("/usage/").content.decode()
    table = body[body.index('<table class="list usage-days">') :]
    rows = re.findall(
        r"<tr><th scope=\"row\"><time[^>]*>([^<]+)</time></th><td>(\d+)</td><td>(\d+)</td>", table
    )

    assert len(rows) == 30
    assert rows[1][2] == "9" and rows[0][2] == "0"


def test_the_page_is_the_owner_s_only(client, db):
    assert client.get("/usage/").status_code == 302
