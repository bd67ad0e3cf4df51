"""`manage.py talorys_mcp`: the MCP server over stdio, for clients that only launch commands.

The token comes from the environment (TALORYS_MCP_TOKEN), never from the command line, where
other users of the machine could read it. The same server as ``/mcp`` (config/mcp/), so the
same tools by scope, the same approvals and the same change log; it runs in this process
against the same database. The secret is checked at start, and the token read again at every
request: a revoked token stops the running bridge's next call.
"""

from __future__ import annotations

import asyncio
import os

from django.core.management.base import BaseCommand, CommandError
from mcp.server.stdio import stdio_server

from config.mcp.access import Caller, caller_for
from config.mcp.server import current_caller, refresh_caller, server_build

TOKEN_VARIABLE = "TALORYS_MCP_TOKEN"


async def _serve(caller: Caller) -> None:
    current_caller.set(caller)
    refresh_caller.set(True)
    server = server_build()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class Command(BaseCommand):
    help = f"Serve MCP over stdin and stdout, as the API token in ${TOKEN_VARIABLE}."

    def handle(self, *args, **options):
        raw = os.environ.get(TOKEN_VARIABLE, "").strip()
        if not raw:
            raise CommandError(f"Set {TOKEN_VARIABLE} to an API token (make one on /settings/).")
        caller = caller_for(raw)
        if caller is None:
            raise CommandError(f"{TOKEN_VARIABLE} is not a valid, unrevoked API token.")
        asyncio.run(_serve(caller))
