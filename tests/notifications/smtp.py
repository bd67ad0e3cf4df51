"""A tiny SMTP server on 127.0.0.1 for the email channel's tests: enough of RFC 5321 for
smtplib (EHLO, MAIL, RCPT, DATA, QUIT), no TLS, no login; it keeps each message as received."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import EmailMessage

import pytest


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def _reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def _data(self) -> bytes:
        lines = []
        while (line := self.rfile.readline()) not in (b".\r\n", b".\n", b""):
            lines.append(line[1:] if line.startswith(b"..") else line)
        return b"".join(lines)

    def handle(self) -> None:
        self._reply("220 localhost test SMTP")
        while line := self.rfile.readline():
            verb = line.decode(errors="replace").strip().split(" ", 1)[0].upper()
            if verb == "EHLO":
                self._reply("250-localhost")
                self._reply("250 8BITMIME")
            elif verb == "DATA":
                self._reply("354 End data with <CR><LF>.<CR><LF>")
                raw = self._data()
                self.server.messages.append(message_from_bytes(raw, policy=policy.default))
                self._reply("250 OK")
            elif verb == "QUIT":
                self._reply("221 Bye")
                return
            else:  # HELO, MAIL, RCPT, RSET, NOOP
                self._reply("250 OK")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    messages: list[EmailMessage]


@pytest.fixture
def smtp_server() -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.messages = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()
