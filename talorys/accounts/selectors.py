"""Reads of the owner's account: the personal API tokens (the API and the settings page)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import QuerySet

from talorys.accounts.models import ApiToken


def api_token_list(*, user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")
