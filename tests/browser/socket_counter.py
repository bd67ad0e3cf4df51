"""Counting the WebSockets a page makes: ``page.add_init_script(COUNT_SOCKETS)`` before it loads,
then ``sockets_made(page, "/ws/chat/")``. Playwright's own websocket events can arrive after the
fact; this counts in the page, when each socket is made. An init script is injected by the
browser itself, so the page's Content Security Policy does not apply to it."""

from __future__ import annotations

COUNT_SOCKETS = """(() => {
  window.socketsMade = [];
  const Real = window.WebSocket;
  window.WebSocket = class extends Real {
    constructor(...args) { super(...args); window.socketsMade.push(String(args[0])); }
  };
})()"""


def sockets_made(page, path: str) -> int:
    return page.evaluate(
        "(path) => window.socketsMade.filter((url) => url.endsWith(path)).length", path
    )
