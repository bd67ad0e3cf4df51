"""Who makes a change: recorded on revisions, on "deleted by" in the bin, and by tools."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    """Who makes a change, recorded on its revision and on "deleted by" in the bin."""

    source: str = "owner"
    conversation_id: int | None = None
    message_id: int | None = None

    @property
    def is_model(self) -> bool:
        return self.source == "chat" or self.source.startswith("automation")

    @property
    def is_token(self) -> bool:
        """An API token acting for the owner: a script on the JSON API (``token:<prefix>``,
        accounts/auth.request_actor) or an MCP client (``mcp:<prefix>``, config/mcp/)."""
        return self.source.startswith(("token:", "mcp:"))


OWNER = Actor()
