"""The owner's settings (/api/settings, with the connection test) and the day's usage
(/api/usage) over the API, and the models a conversation may ask (/api/models). Provider settings and the connection test: the owner's session only
(talorys/owner/services/settings.py says which). The calendar feed's URL is shown to the session
only and rotated by it (talorys/owner/services/calendar.py)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from talorys.accounts.auth import owner_session_auth, request_by_token
from talorys.owner.models import OwnerSettings
from talorys.owner.schemas import (
    CalendarOut,
    ConnectionTestIn,
    ConnectionTestOut,
    ModelsOut,
    SettingsOut,
    SettingsPatch,
    UsageOut,
)
from talorys.owner.selectors import (
    ModelChoices,
    UsageReport,
    embeddings_provider_kind,
    model_choices,
    model_provider_kind,
    owner_settings_get,
    recall_mode,
    usage_report,
)
from talorys.owner.services.calendar import calendar_path, calendar_secret_rotate
from talorys.owner.services.connection import ConnectionResult, model_connection_test
from talorys.owner.services.settings import owner_settings_update
from talorys.web.schemas import ErrorOut

settings_router = Router(tags=["settings"])
usage_router = Router(tags=["usage"])
models_router = Router(tags=["models"])


def _settings_out(request: HttpRequest, row: OwnerSettings) -> SettingsOut:
    # Everything stored except the keys (SettingsOut has no field for them), plus what is derived.
    # The calendar URL is a capability: a token (a script, perhaps leaked) is not given it.
    stored = {name: getattr(row, name) for name in SettingsOut.model_fields if hasattr(row, name)}
    by_token = request_by_token(request)
    return SettingsOut(
        **stored,
        calendar_url=None
        if by_token
        else request.build_absolute_uri(calendar_path(row.calendar_secret)),
        provider=model_provider_kind(owner_settings=row),
        embeddings_provider=embeddings_provider_kind(owner_settings=row),
        recall_mode=recall_mode(owner_settings=row),
        model_api_key_set=bool(row.model_api_key),
        embeddings_api_key_set=bool(row.embeddings_api_key),
    )


@settings_router.get("", response=SettingsOut)
def settings_get(request: HttpRequest) -> SettingsOut:
    return _settings_out(request, owner_settings_get())


@settings_router.patch("", response=SettingsOut)
def settings_update(request: HttpRequest, payload: SettingsPatch) -> SettingsOut:
    changes = payload.model_dump(exclude_unset=True)
    row = owner_settings_update(by_token=request_by_token(request), **changes)
    return _settings_out(request, row)


# Session only, like the provider settings: a token must not send the stored key anywhere.
# Beside what every operation answers (config/openapi.py): the day's budget spent.
@settings_router.post(
    "/test-connection",
    response={200: ConnectionTestOut, 429: ErrorOut},
    auth=owner_session_auth,
)
def settings_test_connection(request: HttpRequest, payload: ConnectionTestIn) -> ConnectionResult:
    return model_connection_test(**payload.model_dump())


# Session only: the new URL is a capability, and a token must not be able to end the owner's.
@settings_router.post("/calendar/rotate", response=CalendarOut, auth=owner_session_auth)
def settings_calendar_rotate(request: HttpRequest) -> CalendarOut:
    secret = calendar_secret_rotate()
    return CalendarOut(calendar_url=request.build_absolute_uri(calendar_path(secret)))


@usage_router.get("", response=UsageOut)
def usage_get(request: HttpRequest) -> UsageReport:
    return usage_report(owner_settings=owner_settings_get())


@models_router.get("", response=ModelsOut)
def models_list(request: HttpRequest) -> ModelChoices:
    """The models the configured server lists (read again after a few minutes), the default
    first; the demo's one model without a server. A server that cannot say answers the
    default alone with ``available`` false, not an error."""
    return model_choices(owner_settings=owner_settings_get())
