"""Notification channels: the owner's ntfy topic, Telegram chat, email address or webhook, by
Apprise URL (https://github.com/caronc/apprise/wiki), and which kinds of notification each gets.

A channel's URL holds the destination's secrets (a bot token, an SMTP password, a webhook's
key). It is kept like a provider key: the owner's session writes it and it never leaves the
server again. Lists show ``masked``: its scheme and host only. Backups leave channels out (backup/ exports an explicit list).

Sending (``apprise_send``) is used by the worker's deliveries (channel_send.py) and by the
owner's "Send a test" button. Its error text is Apprise's log, with the URL's secret parts
blotted out in case a plugin logs them.
"""

from __future__ import annotations

import logging
import re
from html import escape
from typing import Any
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from asgiref.sync import sync_to_async
from django.db import IntegrityError, transaction
from django.utils import timezone

from talorys.lib.errors import Conflict, NotFound, field_refused
from talorys.lib.markdown import render_markdown
from talorys.lib.markdown_text import markdown_to_text
from talorys.lib.validation import clean_line
from talorys.notifications.models import Channel, Notification
from talorys.notifications.selectors import channel_get

Kind = Notification.Kind

# The kinds a channel may get, in the words of the settings page.
KIND_LABELS = {
    Kind.REMINDER: "Reminders",
    Kind.DIGEST: "Digests",
    Kind.AUTOMATION: "Automation results",
    Kind.APPROVAL: "Approvals",
    Kind.ERROR: "Failures",
    Kind.INFO: "Other notices",
}
ERROR_MAX = 500
_LOG_LINE = re.compile(r"^\S+ \S+ - [A-Z]+ - ", re.MULTILINE)  # LogCapture's prefix


# --- Apprise -----------------------------------------------------------------------------------


def _plugin(url: str) -> Any:
    """Apprise's notifier for ``url``, or None when Apprise does not understand it."""
    # Imported here: Apprise loads its plugins on import, about 0.1 s that only a send needs.
    import apprise

    try:
        return apprise.Apprise.instantiate(url, suppress_exceptions=True)
    except Exception:  # a plugin that fails on what it was given: not a usable address
        return None


def url_checked(url: str) -> str:
    """The URL, stripped, if Apprise can send to it (ValidationFailed otherwise)."""
    url = clean_line(url, field="url", max_length=Channel.URL_MAX)
    if "://" not in url or _plugin(url) is None:
        raise field_refused(
            "url is not an address Apprise can send to. It looks like ntfys://ntfy.sh/my-topic, "
            "tgram://bot-token/chat-id or mailtos://user:password@example.com?to=me@example.com.",
            field="url",
        )
    return url


def masked(url: str) -> str:
    """What may be shown of a channel's URL: the scheme and host of Apprise's privacy form of it
    (which hides a bot token kept as the host), with no user, path or query, where a webhook's
    key or a topic's name may sit: ``json://example.org/…``."""
    plugin = _plugin(url)
    shown = urlsplit(plugin.url(privacy=True) if plugin is not None else url)
    host = shown.hostname or ""
    port = f":{shown.port}" if _port(shown) else ""
    rest = "/…" if shown.path.strip("/") or shown.query else ""
    return f"{shown.scheme}://{host}{port}{rest}"


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError:  # a port that is not a number: not shown
        return None


def service_name(url: str) -> str:
    plugin = _plugin(url)
    return str(getattr(plugin, "service_name", "") or url.split("://", 1)[0])


def _secrets_of(url: str) -> list[str]:
    """The parts of ``url`` that may be secret: its user, password, path segments and query
    values (longest first, so a part inside another is blotted after it)."""
    parts = urlsplit(url)
    pieces = [parts.username or "", parts.password or ""]
    pieces += [unquote(segment) for segment in parts.path.split("/")]
    pieces += [value for _, value in parse_qsl(parts.query)]
    return sorted({p for p in pieces if len(p) >= 4}, key=len, reverse=True)


def _scrub(text: str, url: str) -> str:
    for secret in _secrets_of(url):
        text = text.replace(secret, "****")
    return text


def apprise_send(url: str, *, title: str, body: str, kind: str, link: str = "") -> str:
    """Send one message through Apprise; "" when the service took it, else why not. ``body`` is
    Markdown and ``link`` the address of what it is about (or ""): both are sent in the format
    the service takes (``flavoured``)."""
    import apprise

    plugin = _plugin(url)
    if plugin is None:
        return "Apprise no longer understands this channel's address."
    types: dict[str, Any] = {
        Kind.ERROR: apprise.NotifyType.FAILURE,
        Kind.APPROVAL: apprise.NotifyType.WARNING,
    }
    notify_type = types.get(kind, apprise.NotifyType.INFO)
    if not body and not link:  # the title alone: kept (an email's subject) and sent as the body
        body = title
    title, body, body_format = flavoured(plugin, title=title, body=body, link=link)
    try:
        with apprise.LogCapture(level=logging.WARNING) as captured:
            sent = plugin.notify(
                title=title, body=body, notify_type=notify_type, body_format=body_format
            )
            log_text = captured.getvalue()
    except Exception as exc:  # a plugin's own bug: recorded on the delivery, never raised
        return _scrub(f"{exc.__class__.__name__}: {exc}", url)[:ERROR_MAX]
    if sent:
        return ""
    reason = " ".join(_LOG_LINE.sub("", log_text).split()) or "The service did not take it."
    return _scrub(reason, url)[:ERROR_MAX]


def flavoured(plugin: Any, *, title: str, body: str, link: str) -> tuple[str, str, Any]:
    """The title and the body (Markdown) as the service takes them, and their Apprise format
    (``NotifyFormat``), passed as ``body_format`` so that Apprise converts nothing itself.

    The format is the service's own for a Markdown body (``resolve_format``: Markdown where it
    renders it, else its first format, or the URL's ``?format=``; an email is always plain text):
    Markdown goes as written;
    HTML is talorys/lib/markdown.py's rendering, so the body's own HTML arrives escaped,
    never live, with the title escaped where it is blended into the body; plain text is the
    Markdown stripped to readable text (talorys/lib/markdown_text.py)."""
    from apprise import NotifyFormat

    body_format = plugin.resolve_format(NotifyFormat.MARKDOWN)
    if body_format == NotifyFormat.HTML and plugin.protocol == "mailto":
        # An email is text/plain: nothing in it is live, and its line breaks stay.
        body_format = NotifyFormat.TEXT
    if body_format == NotifyFormat.HTML:
        opens = f'<p>Open in Talorys: <a href="{escape(link)}">{escape(link)}</a></p>'
        blended = plugin.title_maxlen <= 0
        html = render_markdown(body) if body else ""
        return escape(title) if blended else title, html + (opens if link else ""), body_format
    if body_format == NotifyFormat.TEXT:
        body = markdown_to_text(body)
    opens = f"Open in Talorys: {link}" if link else ""
    return title, "\n\n".join(part for part in (body, opens) if part), body_format


# --- the owner's channels ----------------------------------------------------------------------


def _kinds_checked(kinds: list[str]) -> list[str]:
    unknown = [kind for kind in kinds if kind not in Kind.values]
    if unknown:
        raise field_refused(
            f"kinds must be among {', '.join(Kind.values)}; not {unknown[0]}.", field="kinds"
        )
    return [kind for kind in Kind.values if kind in kinds]  # one of each, in a fixed order


def _name_checked(name: str, *, channel_id: int | None = None) -> str:
    name = clean_line(name, field="name", max_length=Channel.NAME_MAX)
    taken = Channel.objects.filter(name__iexact=name)
    if channel_id is not None:
        taken = taken.exclude(pk=channel_id)
    if taken.exists():
        raise Conflict(f"A channel named {name!r} exists already; choose another name.")
    return name


def _saved(channel: Channel) -> Channel:
    try:
        with transaction.atomic():
            channel.save()
    except IntegrityError:  # the same name saved meanwhile
        raise Conflict(f"A channel named {channel.name!r} exists already.") from None
    return channel


def channel_create(
    *, name: str, url: str, kinds: list[str] | None = None, enabled: bool = True
) -> Channel:
    """A new channel; without ``kinds`` it gets every kind of notification."""
    return _saved(
        Channel(
            name=_name_checked(name),
            url=url_checked(url),
            kinds=Kind.values if kinds is None else _kinds_checked(kinds),
            enabled=enabled,
        )
    )


def channel_update(
    *,
    channel_id: int,
    name: str | None = None,
    url: str | None = None,
    kinds: list[str] | None = None,
    enabled: bool | None = None,
) -> Channel:
    """Change what is given; a URL left out stays as it was (the page never has it)."""
    channel = channel_get(channel_id=channel_id)
    if name is not None:
        channel.name = _name_checked(name, channel_id=channel_id)
    if url is not None:
        channel.url = url_checked(url)
        channel.last_error = ""  # a new address starts with a clean record
    if kinds is not None:
        channel.kinds = _kinds_checked(kinds)
    if enabled is not None:
        channel.enabled = enabled
    return _saved(channel)


def channel_delete(*, channel_id: int) -> None:
    """Delete a channel and its receipts (it holds no content of the owner's, only an address)."""
    deleted, _ = Channel.objects.filter(pk=channel_id).delete()
    if not deleted:
        raise NotFound(f"Channel {channel_id} does not exist.")


def channel_outcome(channel_id: int, error: str) -> None:
    """Note on the channel's row how its latest send went."""
    when = "last_failure_at" if error else "last_success_at"
    Channel.objects.filter(pk=channel_id).update(last_error=error, **{when: timezone.now()})


async def channel_test(*, channel_id: int) -> str:
    """Send a test message now; "" when it arrived, else why not.

    Async, with the send in a thread of its own: an SMTP server may take 15 s to answer, and the
    one thread that every synchronous view of this process shares must not wait for it."""
    channel = await sync_to_async(channel_get)(channel_id=channel_id)
    error = await sync_to_async(apprise_send, thread_sensitive=False)(
        channel.url,
        title="Talorys test",
        body=f"This channel ({channel.name}) works: Talorys notifications will arrive here.",
        kind=Kind.INFO,
    )
    await sync_to_async(channel_outcome)(channel.pk, error)
    return error
