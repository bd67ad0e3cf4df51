"""A channel gets a notification's Markdown body in the format its service takes (Apprise's
``body_format``): Markdown as written where the service renders it, readable plain text where it
takes only text or is an email, sanitised HTML where a service asks for HTML (the body's own
HTML escaped). Sent
through Apprise to real local receivers: a JSON webhook (whose ``?format=`` picks each format)
and an SMTP server, both on 127.0.0.1."""

from __future__ import annotations

import email
import socketserver
import threading
from collections.abc import Iterator
from email.message import Message

import pytest

from talorys.notifications import services as notify
from talorys.notifications.channels import channel_create

BRIEFING = (
    "## Today\n\n- **Dentist** at 10:00\n- Call [Sam](https://example.org/sam)\n\n"
    "| task | due |\n| --- | --- |\n| Tax | Fri |\n\n<a href=https://evil.example>click</a>"
)
TEXT = (
    "Today\n\n- Dentist at 10:00\n- Call Sam (https://example.org/sam)\n\n"
    "task | due\nTax | Fri\n\n<a href=https://evil.example>click</a>"
)


@pytest.fixture
def run(django_capture_on_commit_callbacks, eager):
    def run_committed(fn, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return run_committed


def briefing_sent(run, settings) -> int:
    settings.TALORYS_PUBLIC_URL = "https://talorys.example.org"
    notification = run(
        notify.notification_send,
        title="Morning <briefing>",
        body=BRIEFING,
        kind="automation",
        source="conversation:5",
    )
    return notification.pk


def test_each_channel_gets_the_format_its_service_takes(run, settings, webhook, db):
    for flavour in ("", "text", "html"):
        query = f"?format={flavour}" if flavour else ""
        channel_create(
            name=flavour or "md", url=f"json://127.0.0.1:{webhook.port}/{flavour or 'md'}{query}"
        )
    briefing_sent(run, settings)
    got = {
        path.strip("/"): message
        for path, message in zip(webhook.paths, webhook.received, strict=True)
    }
    link = "https://talorys.example.org/c/5/"
    # Markdown where the service renders it (a JSON webhook passes any format on; Markdown is
    # what it is given unless its address asks for another): as written.
    assert got["md"]["message"] == f"{BRIEFING}\n\nOpen in Talorys: {link}"
    # Plain text: the Markdown stripped to readable text, no ## ** or table pipes left.
    assert got["text"]["message"] == f"{TEXT}\n\nOpen in Talorys: {link}"
    # HTML: rendered and sanitised, the body's own HTML escaped, the link a link.
    html = got["html"]["message"]
    assert "<h2>Today</h2>" in html and "<strong>Dentist</strong>" in html
    assert "<td>Tax</td>" in html and "**" not in html and "##" not in html
    assert '<a href="https://evil.example">' not in html
    assert "&lt;a href=https://evil.example&gt;click&lt;/a&gt;" in html
    assert f'Open in Talorys: <a href="{link}">{link}</a>' in html
    assert {message["title"] for message in got.values()} == {"Morning <briefing>"}


class SmtpReceiver:
    """An SMTP server on 127.0.0.1 that takes every message (no TLS, no login) and keeps it."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        receiver = self

        class Handler(socketserver.StreamRequestHandler):
            def reply(self, line: str) -> None:
                self.wfile.write(line.encode() + b"\r\n")

            def handle(self) -> None:
                self.reply("220 test")
                while line := self.rfile.readline().decode().strip():
                    verb = line.split()[0].upper()
                    if verb == "DATA":
                        self.reply("354 go on")
                        lines = iter(self.rfile.readline, b".\r\n")
                        receiver.messages.append(email.message_from_bytes(b"".join(lines)))
                    elif verb == "QUIT":
                        self.reply("221 bye")
                        return
                    self.reply("250 ok")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def smtp() -> Iterator[SmtpReceiver]:
    receiver = SmtpReceiver()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


def test_email_gets_plain_text_with_the_bodys_own_html_as_text(run, settings, smtp, db):
    address = f"mailto://127.0.0.1:{smtp.port}?from=talorys@example.org&to=me@example.org"
    channel_create(name="Mail", url=address)
    briefing_sent(run, settings)
    (message,) = smtp.messages
    assert message["Subject"] == "Morning <briefing>"
    parts = {
        part.get_content_type(): part.get_payload(decode=True).decode()
        for part in message.walk()
        if not part.is_multipart()
    }
    assert list(parts) == ["text/plain"]
    text = parts["text/plain"]
    assert "Today" in text and "Tax" in text and "**" not in text and "##" not in text
    assert "<a href=https://evil.example>click</a>" in text
