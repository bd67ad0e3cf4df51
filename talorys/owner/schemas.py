"""The owner's settings, the connection test, the usage report and the models over the API."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any
from zoneinfo import available_timezones

from ninja import Schema
from pydantic import Field, WithJsonSchema

from talorys.owner.models import SETTINGS_BOUNDS, OwnerSettings
from talorys.owner.selectors import EmbeddingsProviderKind, ModelProviderKind, RecallMode
from talorys.web.schemas import In

# What the settings service checks (owner_settings_check), said in the schema: a URL is empty or
# http(s) without spaces or control characters; a key is printable ASCII (a header's value); a
# time of day has no offset; surrounding whitespace is stripped first, as the service does.
URL_PATTERN = r"^\s*(https?://[^\x00-\x20\x7f]*)?\s*$"
KEY_PATTERN = r"^\s*[!-~]*\s*$"
TIME_OF_DAY = r"^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?$"
TimeZoneName = Annotated[
    str | None, WithJsonSchema({"type": "string", "enum": sorted(available_timezones())})
]
TimeOfDay = Annotated[dt.time, WithJsonSchema({"type": "string", "pattern": TIME_OF_DAY})]


# Said in the schema only: the service checks each and refuses in its own words.
Url = Annotated[
    str, Field(max_length=OwnerSettings.URL_MAX, json_schema_extra={"pattern": URL_PATTERN})
]
Key = Annotated[
    str, Field(max_length=OwnerSettings.API_KEY_MAX, json_schema_extra={"pattern": KEY_PATTERN})
]


def _bounds(name: str) -> Any:
    """A limit's bounds; left out keeps it, null is refused (the schema has no null)."""
    low, high = SETTINGS_BOUNDS[name]
    return WithJsonSchema({"type": "integer", "minimum": low, "maximum": high})


class SettingsPatch(In):
    """Send only what changes. API keys are write-only: a string sets one, "" clears it."""

    time_zone: TimeZoneName = None  # left out keeps it; null is refused (the schema has no null)
    model_base_url: Url | None = None
    model_name: str | None = Field(None, max_length=OwnerSettings.MODEL_NAME_MAX)
    model_api_key: Key | None = None
    daily_ai_requests: Annotated[int | None, _bounds("daily_ai_requests")] = None
    daily_scheduled_ai_requests: Annotated[int | None, _bounds("daily_scheduled_ai_requests")] = (
        None
    )
    daily_embedding_requests: Annotated[int | None, _bounds("daily_embedding_requests")] = None
    max_steps_per_turn: Annotated[int | None, _bounds("max_steps_per_turn")] = None
    max_tool_calls_per_turn: Annotated[int | None, _bounds("max_tool_calls_per_turn")] = None
    max_output_tokens: Annotated[int | None, _bounds("max_output_tokens")] = None
    max_context_tokens: Annotated[int | None, _bounds("max_context_tokens")] = None
    # Left out keeps it; null is refused (the schema has no null).
    model_sees_images: Annotated[bool | None, WithJsonSchema({"type": "boolean"})] = None
    # Left out keeps it; null is refused (the schema has no null).
    semantic_enabled: Annotated[bool | None, WithJsonSchema({"type": "boolean"})] = None
    embeddings_base_url: Url | None = None
    embeddings_model: str | None = Field(None, max_length=OwnerSettings.MODEL_NAME_MAX)
    embeddings_api_key: Key | None = None
    quiet_hours_start: TimeOfDay | None = None
    quiet_hours_end: TimeOfDay | None = None
    # Left out keeps it; null is refused (the schema has no null).
    calendar_feed_details: Annotated[bool | None, WithJsonSchema({"type": "boolean"})] = None


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
    # Whether an attached image goes to the model as an image (the model can see images).
    model_sees_images: bool
    semantic_enabled: bool
    # The embedder semantic recall uses when on ("none": keyword only), and what recall is now.
    embeddings_provider: EmbeddingsProviderKind
    recall_mode: RecallMode
    embeddings_base_url: str
    embeddings_model: str
    embeddings_api_key_set: bool
    # Wall-clock times without an offset (JSON Schema's "time" format would require one).
    quiet_hours_start: TimeOfDay | None
    quiet_hours_end: TimeOfDay | None
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

    base_url: Url | None = None
    model: str | None = Field(None, max_length=OwnerSettings.MODEL_NAME_MAX)
    api_key: Key | None = None


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


class ModelsOut(Schema):
    """The models a conversation may ask (PATCH /api/conversations/{id} ``model``)."""

    # The owner's default (settings, else the environment): the first of ``models``.
    default: str
    models: list[str]
    # False when the server's list could not be read: then ``models`` is the default alone,
    # and ``problem`` says why.
    available: bool
    problem: str
