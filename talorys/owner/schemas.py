"""The owner's settings, the connection test and the usage report over the API."""

from __future__ import annotations

import datetime as dt

from ninja import Schema
from pydantic import Field

from talorys.lib.schemas import In
from talorys.owner.models import OwnerSettings
from talorys.owner.selectors import EmbeddingsProviderKind, ModelProviderKind, RecallMode


class SettingsPatch(In):
    """Send only what changes. API keys are write-only: a string sets one, "" clears it."""

    time_zone: str | None = Field(None, min_length=1, max_length=OwnerSettings.TIME_ZONE_MAX)
    model_base_url: str | None = Field(None, max_length=OwnerSettings.URL_MAX)
    model_name: str | None = Field(None, max_length=OwnerSettings.MODEL_NAME_MAX)
    model_api_key: str | None = Field(None, max_length=OwnerSettings.API_KEY_MAX)
    daily_ai_requests: int | None = None
    daily_scheduled_ai_requests: int | None = None
    daily_embedding_requests: int | None = None
    max_steps_per_turn: int | None = None
    max_tool_calls_per_turn: int | None = None
    max_output_tokens: int | None = None
    max_context_tokens: int | None = None
    semantic_enabled: bool | None = None
    embeddings_base_url: str | None = Field(None, max_length=OwnerSettings.URL_MAX)
    embeddings_model: str | None = Field(None, max_length=OwnerSettings.MODEL_NAME_MAX)
    embeddings_api_key: str | None = Field(None, max_length=OwnerSettings.API_KEY_MAX)
    quiet_hours_start: dt.time | None = None
    quiet_hours_end: dt.time | None = None
    calendar_feed_details: bool | None = None


class SettingsOut(Schema):
    """The owner's settings. API keys never leave the server: only whether one is set."""

    time_zone: str
    # False until the owner (or the browser, at the first run) chose the zone.
    time_zone_confirmed: bool
    provider: ModelProviderKind
    model_base_url: str
    model_name: str
    model_api_key_set: bool
    daily_ai_requests: int
    daily_scheduled_ai_requests: int
    daily_embedding_requests: int
    max_steps_per_turn: int
    max_tool_calls_per_turn: int
    max_output_tokens: int
    max_context_tokens: int
    semantic_enabled: bool
    # The embedder semantic recall uses when on ("none": keyword only), and what recall is now.
    embeddings_provider: EmbeddingsProviderKind
    recall_mode: RecallMode
    embeddings_base_url: str
    embeddings_model: str
    embeddings_api_key_set: bool
    quiet_hours_start: dt.time | None
    quiet_hours_end: dt.time | None
    # The calendar feed's secret URL: to the owner's session only, null to an API token.
    calendar_url: str | None = Field(
        description="The calendar feed (iCalendar) to subscribe to; null when asked with a token."
    )
    calendar_feed_details: bool = Field(
        description="Whether the feed carries task details and reminder texts (off by default)."
    )
    updated_at: dt.datetime


class CalendarOut(Schema):
    calendar_url: str = Field(description="The new feed URL; the old one is refused from now on.")


class ConnectionTestIn(In):
    """What to test, unsaved; each one left out is the stored setting's. No key: the stored
    key, and only when the URL is the stored one."""

    base_url: str | None = Field(None, max_length=OwnerSettings.URL_MAX)
    model: str | None = Field(None, max_length=OwnerSettings.MODEL_NAME_MAX)
    api_key: str | None = Field(None, max_length=OwnerSettings.API_KEY_MAX)


class ConnectionTestOut(Schema):
    ok: bool
    provider: str
    base_url: str
    model: str
    reply: str
    kind: str = Field(description="On failure: the provider error's kind (timeout, auth...).")
    code: str = Field(description="On failure: PROVIDER_<KIND>.")
    message: str
    elapsed_ms: int


class UsageCountersOut(Schema):
    ai_requests: int
    scheduled_ai_requests: int
    embedding_requests: int


class UsageDayOut(UsageCountersOut):
    day: dt.date
    input_tokens: int
    output_tokens: int


class UsageOut(Schema):
    today: UsageDayOut
    limits: UsageCountersOut
    remaining: UsageCountersOut
    days: list[UsageDayOut]
