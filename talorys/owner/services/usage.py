"""The day's request budgets: reserve before a provider call, record tokens after.

A day is the owner's local date at the time of use (selectors.usage_day): the budget resets at
the owner's midnight and /usage/ shows the days the owner lives in. The reservation path reads
the zone from the settings row it reads for the limit anyway, so a turn costs no extra query.
"""

from __future__ import annotations

import datetime as dt

from django.db import IntegrityError, transaction
from django.db.models import F

from talorys.lib.errors import BudgetExhausted
from talorys.owner.models import OwnerSettings, UsageDay
from talorys.owner.selectors import USAGE_KINDS, owner_settings_get, usage_day, usage_remaining


def _usage_today(day: dt.date) -> UsageDay:
    row = UsageDay.objects.filter(day=day).first()
    if row is None:
        try:
            with transaction.atomic():
                row = UsageDay.objects.create(day=day)
        except IntegrityError:
            row = UsageDay.objects.get(day=day)
    return row


def usage_reserve(
    *, kind: str, count: int = 1, owner_settings: OwnerSettings | None = None
) -> None:
    """Reserve ``count`` requests of ``kind`` before a provider call, or raise BudgetExhausted.

    A conditional UPDATE, so concurrent turns and workers can never overspend the day's budget.
    It is one query on the hot path (with ``owner_settings`` read already: the limit); the day's
    row is made only when the first try finds none.
    """
    column, limit_field = USAGE_KINDS[kind]
    owner_settings = owner_settings or owner_settings_get()
    limit = getattr(owner_settings, limit_field)
    day = usage_day(owner_settings)
    within = {"day": day, f"{column}__lte": limit - count}
    spend = {column: F(column) + count}
    updated = UsageDay.objects.filter(**within).update(**spend)
    if not updated:
        _usage_today(day)
        updated = UsageDay.objects.filter(**within).update(**spend)
    if not updated:
        raise _exhausted(kind, limit)


def usage_check(*, kind: str, owner_settings: OwnerSettings | None = None) -> None:
    """Raise BudgetExhausted, as ``usage_reserve`` would, when no request of ``kind`` is left
    today; reserve nothing. A pure read, for a caller that must refuse before it writes
    anything (/v1, agent/completions/admission.py): the reservation still comes before the
    provider call."""
    owner_settings = owner_settings or owner_settings_get()
    if usage_remaining(kind=kind, owner_settings=owner_settings) < 1:
        raise _exhausted(kind, getattr(owner_settings, USAGE_KINDS[kind][1]))


def _exhausted(kind: str, limit: int) -> BudgetExhausted:
    return BudgetExhausted(f"Today's {kind.replace('_', ' ')} request budget ({limit}) is used up.")


def usage_record_tokens(*, input_tokens: int, output_tokens: int) -> None:
    day = _usage_today(usage_day(owner_settings_get()))
    UsageDay.objects.filter(pk=day.pk).update(
        input_tokens=F("input_tokens") + max(0, input_tokens),
        output_tokens=F("output_tokens") + max(0, output_tokens),
    )
