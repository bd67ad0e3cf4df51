"""Django admin for conversations: read-mostly. The operator reads transcripts, renames a
conversation or releases a stuck turn lease; messages are never edited here. Deleting goes
through agent/services.py like the owner's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from agent import services
from agent.models import Conversation, Message
from talorys.web.readonly_admin import ReadOnlyAdmin
from talorys.web.service_admin import BinAdmin

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class _Counted(TypedDict):
    _messages: int  # get_queryset's annotation


class MessageInline(admin.TabularInline):
    model = Message
    fields = readonly_fields = (
        "created_at",
        "role",
        "status",
        "origin",
        "content",
        "tool_activity",
        "error_code",
        "error_message",
        "replaced_at",
    )
    extra = 0
    can_delete = False  # a transcript is kept whole; the conversation goes to the bin with it

    def has_add_permission(self, request: HttpRequest, obj: Conversation | None = None) -> bool:
        return False


# A stuck turn can be released by clearing turn_id and turn_lease_until.
_FIELDS = (
    "title",
    "title_source",
    "origin",
    "api_token",
    "turn_id",
    "turn_lease_until",
    "turn_cancel_requested",
    "summary",
    "summary_upto",
    "created_at",
    "updated_at",
)


@admin.register(Conversation)
class ConversationAdmin(BinAdmin):
    list_display = ["__str__", "origin", "message_count", "turn_lease_until", "updated_at"]
    list_filter = ["origin", "updated_at"]
    search_fields = ["title", "summary", "messages__content"]
    date_hierarchy = "updated_at"
    fields = _FIELDS
    # All but the lease is read-only: the title is the owner's (renamed in the chat, logged and
    # revertable there), not the operator's; api_token is the /v1 client's that started it.
    readonly_fields = [name for name in _FIELDS if not name.startswith("turn_")]
    inlines = [MessageInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).annotate(_messages=Count("messages"))

    @admin.display(description="messages", ordering="_messages")
    def message_count(self, obj: WithAnnotations[Conversation, _Counted]) -> int:
        return obj._messages

    def service_delete(self, request: HttpRequest, obj: Conversation) -> None:
        # Refused while a turn still writes to it, as for the owner.
        services.conversation_delete(conversation_id=obj.pk, actor=self.actor(request))


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    """Every message across conversations, to find a failed or stuck reply. Read-only."""

    list_display = ["id", "conversation", "role", "status", "origin", "error_code", "created_at"]
    list_filter = ["role", "status", "origin", "error_code"]
    search_fields = ["content"]
    list_select_related = ["conversation"]
    date_hierarchy = "created_at"
