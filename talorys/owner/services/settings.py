"""The owner's settings (one row): check and change them (owner.selectors reads them)."""

from __future__ import annotations

import datetime as dt
from typing import Any, TypedDict, Unpack

from django.core.exceptions import ValidationError
from django.db import transaction

from talorys.lib.errors import Forbidden, ValidationFailed, field_refused
from talorys.lib.validation import HEADER_SAFE_TEXT, header_safe, one_line
from talorys.owner.models import SETTINGS_BOUNDS, OwnerSettings
from talorys.owner.selectors import owner_settings_get


class OwnerSettingsChanges(TypedDict, total=False):
    """What owner_settings_update may change (SETTINGS_FIELDS; a test keeps the two equal); a
    setting left out keeps its value. A key's ``None`` or "" clears it."""

    time_zone: str
    model_base_url: str | None
    model_name: str | None
    model_api_key: str | None
    daily_ai_requests: int
    daily_scheduled_ai_requests: int
    daily_embedding_requests: int
    max_steps_per_turn: int
    max_tool_calls_per_turn: int
    max_output_tokens: int
    max_context_tokens: int
    model_sees_images: bool
    semantic_enabled: bool
    embeddings_base_url: str | None
    embeddings_model: str | None
    embeddings_api_key: str | None
    quiet_hours_start: dt.time | None
    quiet_hours_end: dt.time | None
    calendar_feed_details: bool


# Every owner setting is settable, except the row's id, its timestamp and version, whether the
# zone was chosen (set with the zone itself: any change of ``time_zone`` confirms it) and the
# calendar feed's secret (made here, only ever replaced by a rotation: talorys/owner/services/calendar.py).
SETTINGS_FIELDS = frozenset(
    field.name
    for field in OwnerSettings._meta.concrete_fields
    if field.name not in {"id", "updated_at", "version", "time_zone_confirmed", "calendar_secret"}
)


def owner_settings_check(**changes: Unpack[OwnerSettingsChanges]) -> None:
    """Raise ValidationFailed for settings the model fields alone would accept but we do not.

    Also used by the admin form, so the operator meets the same rules as the owner.
    """
    values: dict[str, Any] = dict(changes)  # read by name below
    unknown = set(values) - SETTINGS_FIELDS
    if unknown:
        raise ValidationFailed(f"Unknown settings: {', '.join(sorted(unknown))}.")
    _addresses_check(values)
    for key, (low, high) in SETTINGS_BOUNDS.items():
        value = values.get(key)
        if value is not None and (not isinstance(value, int) or not low <= value <= high):
            raise field_refused(f"{key} must be between {low} and {high}.", field=key)
    for key in ("quiet_hours_start", "quiet_hours_end"):
        # Wall-clock times in the owner's zone: an offset would mean another zone (and a time
        # with one could not be stored or shown).
        value = values.get(key)
        if value is not None and getattr(value, "tzinfo", None) is not None:
            raise field_refused(
                f"{key} is a time of day in your time zone, without an offset.", field=key
            )
    if {"quiet_hours_start", "quiet_hours_end"} <= set(values):
        _quiet_hours_check(values["quiet_hours_start"], values["quiet_hours_end"])


def _addresses_check(values: dict[str, Any]) -> None:
    """The providers' URLs and keys, as every request will send them."""
    for key in ("model_base_url", "embeddings_base_url"):
        url = (values.get(key) or "").strip()
        if url and not url.startswith(("http://", "https://")):
            raise field_refused(f"{key} must start with http:// or https://.", field=key)
        if any(char <= " " or char == "\x7f" for char in url):
            raise field_refused(
                f"{key} must not contain spaces, line breaks or control characters.", field=key
            )
    for key in ("model_api_key", "embeddings_api_key"):
        # Sent as a header with every request: checked as saved (stripped, like a paste's
        # trailing newline is), else every chat would fail until the key is entered again.
        value = values.get(key)
        if isinstance(value, str) and not header_safe(value.strip()):
            raise field_refused(f"{key} {HEADER_SAFE_TEXT}.", field=key)


QUIET_HOURS_HALF = (
    "Quiet hours need both a start and an end: set both times, or clear both for no quiet hours."
)


def _quiet_hours_check(start: dt.time | None, end: dt.time | None) -> None:
    # A range with one end would be saved as "no quiet hours" in effect while the page said
    # they were saved: both or neither.
    if (start is None) != (end is None):
        raise ValidationFailed(QUIET_HOURS_HALF)


# Where the model and embedding requests go, and with which key: only the owner's session may
# change these. A token that could point model_base_url elsewhere would have the stored key sent
# there with the next chat. Nor may a token widen what the calendar feed's URL shows to whoever
# holds it (the token itself never sees that URL).
SESSION_ONLY_SETTINGS = frozenset(
    {
        "model_base_url",
        "model_name",
        "model_api_key",
        "semantic_enabled",
        "embeddings_base_url",
        "embeddings_model",
        "embeddings_api_key",
        "calendar_feed_details",
    }
)
# A stored key belongs to its provider: a new URL drops it unless a key comes with the change.
PROVIDER_URL_KEYS = {"model_base_url": "model_api_key", "embeddings_base_url": "embeddings_api_key"}


def owner_settings_update(
    *, by_token: bool = False, **changes: Unpack[OwnerSettingsChanges]
) -> OwnerSettings:
    """Apply the given settings, all or none. An empty or null key clears it.

    by_token: the change comes with an API token, which may not touch SESSION_ONLY_SETTINGS.
    Setting ``time_zone`` (even to the zone it holds) marks it chosen: the first run stops asking.
    Changing a provider URL without sending its key clears the stored key (PROVIDER_URL_KEYS).
    """
    if by_token and SESSION_ONLY_SETTINGS & set(changes):
        raise Forbidden(
            "Provider settings, keys and the calendar feed's details need the owner's session: "
            + ", ".join(sorted(SESSION_ONLY_SETTINGS & set(changes)))
            + "."
        )
    owner_settings_check(**changes)
    values: dict[str, Any] = dict(changes)  # read and completed by name below
    with transaction.atomic():
        # save() writes every column: the lock stops two concurrent patches of different
        # settings from undoing each other.
        row = OwnerSettings.objects.select_for_update().get(pk=owner_settings_get().pk)
        for url_field, key_field in PROVIDER_URL_KEYS.items():
            new_url = (values.get(url_field) or "").strip()
            if (
                url_field in values
                and key_field not in values
                and new_url != getattr(row, url_field)
            ):
                values[key_field] = ""
        for key, value in values.items():
            if value is None and isinstance(getattr(row, key), str):
                value = ""
            if key in ("model_name", "embeddings_model"):
                value = one_line(value)  # a name, one line as every name (lib/validation.py)
            setattr(row, key, value.strip() if isinstance(value, str) else value)
        if "time_zone" in values:
            row.time_zone_confirmed = True
        if {"quiet_hours_start", "quiet_hours_end"} & set(values):
            # A PATCH of one end keeps the other as stored: the range as it would be saved. (A
            # half range saved before this check stays until quiet hours are changed.)
            _quiet_hours_check(row.quiet_hours_start, row.quiet_hours_end)
        try:
            row.full_clean()
        except ValidationError as exc:
            raise ValidationFailed(
                "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
            ) from exc
        row.save()
    return row
