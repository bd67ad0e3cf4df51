"""The owner's settings (one row: the time zone, the model provider, budgets, quiet hours) and
the day's usage against the budgets.

The tables keep the names they had in the talorys app (db_table): the models moved here from
the workspace without a change to the database.
"""

from __future__ import annotations

import secrets
from typing import Any
from zoneinfo import available_timezones

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q


def validate_time_zone(value: str) -> None:
    if value not in available_timezones():
        raise ValidationError(f"Unknown time zone {value!r}; use an IANA name like Europe/Paris.")


# The bounds of the limits: a turn needs at least one step, and no single setting may make a turn
# unbounded. The fields' validators (forms, full_clean) and the table's constraints read them; so
# do the settings service's message and the settings page's inputs.
SETTINGS_BOUNDS = {
    "daily_ai_requests": (0, 1_000_000),
    "daily_scheduled_ai_requests": (0, 1_000_000),
    "daily_embedding_requests": (0, 10_000_000),
    "max_steps_per_turn": (1, 50),
    "max_tool_calls_per_turn": (0, 200),
    "max_output_tokens": (16, 1_000_000),
    "max_context_tokens": (256, 10_000_000),
}


def _limit(name: str, default: int, *, small: bool = False) -> models.IntegerField:
    """The field of one limit, bounded as SETTINGS_BOUNDS says."""
    low, high = SETTINGS_BOUNDS[name]
    field = models.PositiveSmallIntegerField if small else models.PositiveIntegerField
    return field(default=default, validators=[MinValueValidator(low), MaxValueValidator(high)])


def new_calendar_secret() -> str:
    """A fresh secret for the calendar feed's URL: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def new_settings_version() -> int:
    """A fresh version of the settings row: random, so a row deleted and made again never
    repeats the version a process keeps its copy under (owner_settings_current)."""
    return secrets.randbits(62)


class OwnerSettings(models.Model):
    """One row (pk=1). Model choices here override the environment's."""

    # The limits of each text setting, read by the API's schema.
    TIME_ZONE_MAX = 64
    URL_MAX = 500
    MODEL_NAME_MAX = 200
    API_KEY_MAX = 500

    time_zone = models.CharField(
        max_length=TIME_ZONE_MAX, default="UTC", validators=[validate_time_zone]
    )
    # Whether the owner (or the browser, at the first run) chose the zone: until then the pages
    # take it from the browser once (static/talorys/js/first-run.js). Set by the settings service.
    time_zone_confirmed = models.BooleanField(default=False)
    model_base_url = models.CharField(max_length=URL_MAX, blank=True, default="")
    model_name = models.CharField(max_length=MODEL_NAME_MAX, blank=True, default="")
    model_api_key = models.CharField(max_length=API_KEY_MAX, blank=True, default="")
    # Limits per day and per turn: defaults of our own choosing, which the owner's settings change.
    daily_ai_requests = _limit("daily_ai_requests", 200)
    daily_scheduled_ai_requests = _limit("daily_scheduled_ai_requests", 50)
    daily_embedding_requests = _limit("daily_embedding_requests", 1000)
    max_steps_per_turn = _limit("max_steps_per_turn", 6, small=True)
    max_tool_calls_per_turn = _limit("max_tool_calls_per_turn", 12, small=True)
    max_output_tokens = _limit("max_output_tokens", 1024)
    max_context_tokens = _limit("max_context_tokens", 8000)
    # Whether the model sees images: an image attached to a message then goes to it as an image
    # part (agent/runner/messages.py); off, the model is told an image it cannot see is there.
    # Off by default: a text-only model server may refuse the whole request over one.
    model_sees_images = models.BooleanField(default=False)
    # Semantic recall: on by default, with the local embedder (nothing leaves the machine).
    semantic_enabled = models.BooleanField(default=True)
    embeddings_base_url = models.CharField(max_length=URL_MAX, blank=True, default="")
    embeddings_model = models.CharField(max_length=MODEL_NAME_MAX, blank=True, default="")
    embeddings_api_key = models.CharField(max_length=API_KEY_MAX, blank=True, default="")
    # Quiet hours hold pushes (not notifications) in the owner's time zone.
    quiet_hours_start = models.TimeField(null=True, blank=True)
    quiet_hours_end = models.TimeField(null=True, blank=True)
    # The capability in the calendar feed's URL (/calendar/<secret>.ics): whoever has the URL
    # reads the feed, so it is shown to the session only, never exported, and rotated to end it.
    calendar_secret = models.CharField(max_length=64, default=new_calendar_secret)
    # Whether the feed carries what a task or reminder says beyond its name and time (a task's
    # details, a reminder's text): off unless the owner turns it on, since anyone with the URL
    # reads the feed. Not in a backup, as the secret is not: the feed belongs to this install.
    calendar_feed_details = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)
    # Changed by every write of the row (``save``; the writes by ``update()``, and the backup
    # import's, change it themselves): a turn reads it in a statement it makes anyway and keeps
    # the rest of the row in memory while it holds (talorys/owner/services/settings.py).
    version = models.BigIntegerField(default=new_settings_version)

    class Meta:
        db_table = "talorys_ownersettings"
        verbose_name_plural = "owner settings"
        constraints = [
            models.CheckConstraint(condition=Q(pk=1), name="owner_settings_single_row"),
            *(
                models.CheckConstraint(
                    condition=Q(**{f"{name}__gte": low, f"{name}__lte": high}),
                    name=f"owner_settings_{name}_bounds",
                )
                for name, (low, high) in SETTINGS_BOUNDS.items()
            ),
        ]

    def __str__(self) -> str:
        return "Owner settings"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Every save is a new ``version`` (with ``update_fields`` too)."""
        self.version = new_settings_version()
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "version"}
        super().save(*args, **kwargs)


class UsageDay(models.Model):
    """Requests spent on one day, the owner's local date at the time of use (usage_day).
    Reserved with a conditional UPDATE before each call."""

    day = models.DateField(unique=True)
    ai_requests = models.PositiveIntegerField(default=0)
    scheduled_ai_requests = models.PositiveIntegerField(default=0)
    embedding_requests = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)

    class Meta:
        db_table = "talorys_usageday"
        ordering = ["-day"]

    def __str__(self) -> str:
        return f"Usage {self.day}"
