"""Django admin for the change log: read only."""

from __future__ import annotations

from django.contrib import admin

from talorys.history.models import Change
from talorys.web.readonly_admin import ReadOnlyAdmin


@admin.register(Change)
class ChangeAdmin(ReadOnlyAdmin):
    """The change log (talorys/history/changes.py): written in the transaction of each change,
    and reverted from the owner's pages or the API, never edited here."""

    list_display = ["created_at", "kind", "object_id", "action", "title", "source", "reverts"]
    list_filter = ["kind", "action"]
    search_fields = ["title", "source"]
    list_select_related = ["reverts"]
    date_hierarchy = "created_at"
