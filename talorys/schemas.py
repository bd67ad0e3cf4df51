"""Input and output schemas of the core API. Inputs are never reused as outputs."""

from __future__ import annotations

import datetime as dt

from ninja import Schema
from pydantic import ConfigDict, Field


class In(Schema):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class LoginIn(In):
    username: str = Field(min_length=1, max_length=150)
    password: str = Field(min_length=1, max_length=1000)


class SessionOut(Schema):
    authenticated: bool
    username: str | None = None
    csrf_token: str | None = None


class OkOut(Schema):
    ok: bool = True


class HealthOut(Schema):
    status: str
    database: str
    broker: str
    version: str


class ProjectRef(Schema):
    id: int
    name: str


class TaskIn(In):
    title: str = Field(min_length=1, max_length=500)
    details: str = Field("", max_length=20_000)
    priority: int = Field(2, ge=1, le=3)
    due_at: dt.datetime | None = None
    project_id: int | None = None


class TaskPatch(In):
    title: str | None = Field(None, min_length=1, max_length=500)
    details: str | None = Field(None, max_length=20_000)
    status: str | None = Field(None, pattern="^(open|done)$")
    priority: int | None = Field(None, ge=1, le=3)
    due_at: dt.datetime | None = None
    project_id: int | None = None


class TaskOut(Schema):
    id: int
    title: str
    details: str
    status: str
    priority: int
    due_at: dt.datetime | None
    project: ProjectRef | None
    completed_at: dt.datetime | None
    created_at: dt.datetime
    updated_at: dt.datetime
