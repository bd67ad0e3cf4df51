"""``/usage/``: requests per day against the daily budgets (``usage_report``, what
/api/usage answers): today's counters and tokens, and the last 30 days as small bar charts,
drawn here as inline SVG (no script) with the same numbers in a table."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpResponse
from django.shortcuts import render

from talorys.lib.timefmt import format_date
from talorys.owner.middleware import OwnerRequest
from talorys.owner.models import UsageDay
from talorys.owner.selectors import UsageReport, usage_report
from talorys.web.pages import owner_page

DAYS = 30
# The chart's drawing box (viewBox units; CSS scales it to the page's width).
BAR_STEP = 10
BAR_WIDTH = 8
CHART_HEIGHT = 100
PLOT_HEIGHT = 90  # the tallest bar; the rest is headroom above the limit line

# kind of request -> (UsageDay counter, what the owner calls it, the CSS class of its bars)
SERIES = [
    ("ai_requests", "Chat requests", "bar-ai"),
    ("scheduled_ai_requests", "Scheduled requests", "bar-scheduled"),
    ("embedding_requests", "Embedding requests", "bar-embedding"),
]


@dataclass(frozen=True)
class Bar:
    x: int
    y: float
    height: float
    count: int
    day: str
    width: int = BAR_WIDTH


@dataclass(frozen=True)
class Chart:
    column: str
    label: str
    css: str
    limit: int
    used_today: int
    remaining: int
    total: int  # over the days shown
    bars: list[Bar]
    limit_y: float | None  # where the limit's line is drawn; None for a limit of 0
    width: int = DAYS * BAR_STEP
    height: int = CHART_HEIGHT


def _chart(column: str, label: str, css: str, days: list[UsageDay], report: UsageReport) -> Chart:
    counts = [getattr(day, column) for day in days]
    limit = report["limits"][column]
    # Scaled to the limit, or to the busiest day when a day went past today's limit (the limit
    # may have been raised since, or lowered).
    scale = max(limit, *counts, 1)
    bars = []
    for n, (day, count) in enumerate(zip(days, counts, strict=True)):
        height = round(count / scale * PLOT_HEIGHT, 1)
        bars.append(
            Bar(
                x=n * BAR_STEP + (BAR_STEP - BAR_WIDTH) // 2,
                y=round(CHART_HEIGHT - height, 1),
                height=height,
                count=count,
                day=format_date(day.day),
            )
        )
    return Chart(
        column=column,
        label=label,
        css=css,
        limit=limit,
        used_today=counts[-1],
        remaining=report["remaining"][column],
        total=sum(counts),
        bars=bars,
        limit_y=round(CHART_HEIGHT - limit / scale * PLOT_HEIGHT, 1) if limit else None,
    )


@owner_page("GET")
def usage_page(request: OwnerRequest) -> HttpResponse:
    report = usage_report(owner_settings=request.owner_settings, days=DAYS)
    days = list(reversed(report["days"]))  # oldest first, left to right
    charts = [_chart(column, label, css, days, report) for column, label, css in SERIES]
    return render(
        request,
        "owner/usage.html",
        {
            "charts": charts,
            "today": report["today"],
            "days": report["days"],
            "first_day": days[0].day,
            "last_day": days[-1].day,
        },
    )
