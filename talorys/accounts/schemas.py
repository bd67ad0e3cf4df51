"""Input and output schemas of login, password and API tokens."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from ninja import Schema
from pydantic import ConfigDict, Field

from talorys.accounts.models import ApiToken
from talorys.web.schemas import In, one_of


class LoginIn(In):
    # Passwords are taken as typed: a space at either end is part of the password.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    username: str = Field(min_length=1, max_length=150)
    password: str = Field(min_length=1, max_length=1000)


class SessionOut(Schema):
    authenticated: bool
    username: str | None = None
    csrf_token: str | None = None


class PasswordChangeIn(In):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    current_password: str = Field(min_length=1, max_length=1000)
    new_password: str = Field(min_length=1, max_length=1000)


class ApiTokenIn(In):
    name: str = Field(min_length=1, max_length=ApiToken.NAME_MAX)
    scope: Annotated[ApiToken.Scope, one_of(ApiToken.Scope)] = Field(
        ApiToken.Scope.READ,
        description="read: GET only. write: also create, change and delete to the bin.",
    )


class ApiTokenOut(Schema):
    id: int
    name: str
    prefix: str
    scope: str
    created_at: dt.datetime
    last_used_at: dt.datetime | None
    revoked_at: dt.datetime | None


class ApiTokenCreatedOut(ApiTokenOut):
    token: str = Field(description="The secret. Shown this once; only its hash is kept.")
