"""One way to show a time : "1 Dec 2026, 22:14" in the owner's zone on the
pages (the ``when`` filter), in the admin (settings' formats), with relative times for lists;
and usage days are the owner's days, at a UTC day boundary too."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.template import Context, Template
from django.urls import reverse
from django.utils import timezone

from talorys.lib.errors import BudgetExhausted
from talorys.lib.timefmt import format_datetime, format_relative
from talorys.notifications.services import notification_create
from talorys.owner.models import UsageDay
from talorys.owner.selectors import owner_settings_get, usage_report
from talorys.owner.services.settings import owner_settings_update
from talorys.owner.services.usage import usage_record_tokens, usage_reserve

AUCKLAND = ZoneInfo("Pacific/Auckland")  # UTC+13 in December
# 1 Dec 2026, 22:14 in Auckland.
AT = dt.datetime(2026, 12, 1, 22, 14, tzinfo=AUCKLAND)


def render(source: str, **context) -> str:
    return Template(source).render(Context(context))


def test_the_full_format_is_the_owner_s_wall_clock():
    with timezone.override(AUCKLAND):
        assert format_datetime(AT.astimezone(dt.UTC)) == "1 Dec 2026, 22:14"
    with timezone.override(ZoneInfo("America/Los_Angeles")):
        assert format_datetime(AT) == "1 Dec 2026, 01:14"  # the same instant, 21 h behind


@pytest.mark.parametrize(
    ("then", "shown"),
    [
        (AT - dt.timedelta(seconds=20), "just now"),
        (AT - dt.timedelta(minutes=5), "5 min ago"),
        (AT + dt.timedelta(minutes=59), "in 59 min"),
        (AT - dt.timedelta(hours=3), "today 19:14"),
        (AT - dt.timedelta(hours=23), "yesterday 23:14"),
        (AT + dt.timedelta(hours=3), "tomorrow 01:14"),
        (AT - dt.timedelta(days=3), "28 Nov 2026, 22:14"),
    ],
)
def test_relative_times_for_lists(then, shown):
    with timezone.override(AUCKLAND):
        assert format_relative(then, now=AT) == shown


def test_the_when_filter_gives_one_time_element_with_the_full_time_in_its_title():
    with timezone.override(AUCKLAND):
        full = render("{{ t|when }}", t=AT.astimezone(dt.UTC))
        date = render('{{ t|when:"date" }}', t=AT.date())
        text = render("<b title=\"{{ t|when:'text' }}\">", t=AT)
    assert full == (
        '<time datetime="2026-12-01T22:14:00+13:00" title="1 Dec 2026, 22:14">'
        "1 Dec 2026, 22:14</time>"
    )
    assert date == '<time datetime="2026-12-01" title="1 Dec 2026">1 Dec 2026</time>'
    assert text == '<b title="1 Dec 2026, 22:14">'
    assert render("{{ t|when }}", t=None) == ""
    recent = render('{{ t|when:"relative" }}', t=timezone.now() - dt.timedelta(minutes=5))
    assert 'data-when="relative">5 min ago</time>' in recent


def test_no_template_formats_a_date_of_its_own():
    """Every shown time goes through |when; |date stays only for machine values (inputs)."""
    from pathlib import Path

    shown = []
    for path in Path("templates").rglob("*.html"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for part in line.split("|date:")[1:]:
                if not part.startswith(("'Y-m-d'", "'Y-m-d\\TH:i'")):
                    shown.append(f"{path}:{number}")
    assert shown == []


def test_the_admin_shows_times_as_the_pages_do_in_the_owner_zone(client, owner):
    owner_settings_update(time_zone="Pacific/Auckland")
    with time_machine.travel(AT, tick=False):
        notification_create(title="Call Sam")
    client.force_login(owner)

    page = client.get(reverse("admin:notifications_notification_changelist")).content.decode()

    assert "1 Dec 2026, 22:14" in page
    assert "p.m." not in page and "Dec. 1" not in page


# --- usage days -------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("zone", "before", "after", "days"),
    [
        # Auckland's midnight is 11:00 UTC: the UTC date stays 1 Dec, the owner's turns to 2 Dec.
        (
            "Pacific/Auckland",
            dt.datetime(2026, 12, 1, 10, 59, tzinfo=dt.UTC),
            dt.datetime(2026, 12, 1, 11, 1, tzinfo=dt.UTC),
            (dt.date(2026, 12, 1), dt.date(2026, 12, 2)),
        ),
        # Los Angeles' midnight is 08:00 UTC: the UTC date turned at 00:00, the owner's not yet.
        (
            "America/Los_Angeles",
            dt.datetime(2026, 12, 2, 7, 59, tzinfo=dt.UTC),
            dt.datetime(2026, 12, 2, 8, 1, tzinfo=dt.UTC),
            (dt.date(2026, 12, 1), dt.date(2026, 12, 2)),
        ),
    ],
)
def test_a_usage_day_is_the_owner_s_day_at_a_utc_boundary(zone, before, after, days):
    owner_settings_update(time_zone=zone, daily_ai_requests=1)

    with time_machine.travel(before, tick=False):
        usage_reserve(kind="ai")
        usage_record_tokens(input_tokens=10, output_tokens=2)
        with pytest.raises(BudgetExhausted):  # the owner's day's one request is spent
            usage_reserve(kind="ai", owner_settings=owner_settings_get())
    with time_machine.travel(after, tick=False):
        usage_reserve(kind="ai", owner_settings=owner_settings_get())  # a new day: allowed
        report = usage_report(owner_settings=owner_settings_get(), days=2)

    rows = {row.day: (row.ai_requests, row.input_tokens) for row in UsageDay.objects.all()}
    assert rows == {days[0]: (1, 10), days[1]: (1, 0)}
    assert [day.day for day in report["days"]] == [days[1], days[0]]
    assert report["remaining"]["ai_requests"] == 0
