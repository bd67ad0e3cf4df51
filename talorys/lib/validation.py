"""Rules for text and dates that every app's services apply to what the owner or the model gives.

One rule per kind of field: ``clean_line`` puts a title or name on one line, ``clean_text`` keeps
a long text's line ends and tabs; both refuse NUL and drop other control characters, and a
backup's import applies the same ``one_line`` to an older file's one-line fields, so whatever is
stored can be restored. The limits they check are declared once, on the models (``TITLE_MAX``
and the like, choices as ``TextChoices``): schemas, services, tools, backup rows and the pages'
templates (passed by their view, never written in the template) all read them there.
"""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

from talorys.lib.errors import field_refused

# PostgreSQL cannot store or even compare text with a NUL character: text the owner, an API
# client or a backup gives with one is refused (what a model sends has it dropped instead,
# talorys/providers/base.py without_nul).
NUL = "\x00"
NUL_REFUSED = "must not contain NUL characters"


def has_nul(value: str) -> bool:
    return NUL in value


def refuse_nul(value: str, *, field: str) -> str:
    """``value`` unchanged, or ValidationFailed when it holds a NUL character."""
    if has_nul(value):
        raise field_refused(f"{field} {NUL_REFUSED}.", field=field)
    return value


# Control characters. One rule per kind of field, applied by the services to whatever the owner,
# an API client, the model's tools, MCP, /v1, the admin or a page writes, and by a backup's
# import to what an older export holds (backup/rows.py), so that every value stored can be
# exported and imported back:
# - one line (titles, names, labels, summaries): a run of line breaks and tabs (CR, LF, TAB,
#   VT, FF, NEL, U+2028, U+2029) becomes one space, every other control character (C0, DEL, C1)
#   is dropped. Normalised, not refused: a model's title with a newline should not fail its call.
# - long text (details, content, descriptions, memories): LF, CR and TAB stay (line ends as the
#   owner's client wrote them: a page's form sends CRLF, and the Markdown and the note's task
#   lists read CRLF and a lone CR as line ends); every other control character is dropped.
# NUL is the exception in both: refused (above), as it always was.
_BREAKS = re.compile("[\t\n\v\f\r\x85\u2028\u2029]+")
_LINE_DROPPED = re.compile("[\x01-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")
_TEXT_DROPPED = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def one_line(value: str) -> str:
    """``value`` on one line: breaks and tabs as one space, other control characters dropped
    (NUL is left for ``refuse_nul``)."""
    return _BREAKS.sub(" ", _LINE_DROPPED.sub("", value))


def long_text(value: str) -> str:
    """``value`` with no control character but LF, CR and TAB (NUL is left for ``refuse_nul``)."""
    return _TEXT_DROPPED.sub("", value)


def clip(text: str, width: int) -> str:
    """``text`` within ``width`` characters for a reader: unchanged when it fits, else cut and
    ended with "…" (within the width too), so what is shown never passes for the whole."""
    return text if len(text) <= width else text[: width - 1] + "…"


def clean_line(value: str, *, field: str, max_length: int, required: bool = True) -> str:
    """A one-line field as stored: NUL refused, made one line (``one_line``), trimmed, and
    within ``max_length`` (and not empty when ``required``), else ValidationFailed."""
    return clean_text(one_line(value or ""), field=field, max_length=max_length, required=required)


def clean_text(value: str, *, field: str, max_length: int, required: bool = True) -> str:
    """A long text field as stored: NUL refused, control characters as ``long_text`` leaves
    them, trimmed, and within ``max_length`` (and not empty when ``required``), else
    ValidationFailed."""
    value = long_text(refuse_nul(value or "", field=field)).strip()
    if required and not value:
        raise field_refused(f"{field} must not be empty.", field=field)
    if len(value) > max_length:
        raise field_refused(f"{field} is longer than {max_length} characters.", field=field)
    return value


# The one range of dates the owner, the model or an import may give (task dates and filters,
# once schedules). Python's datetime ends at year 9999, so a date near it overflows when it is
# shown in a zone ahead of UTC; nobody plans past 2200 or before 1900.
DATE_MIN = dt.datetime(1900, 1, 1, tzinfo=dt.UTC)
DATE_MAX = dt.datetime(2200, 1, 1, tzinfo=dt.UTC)
DATE_RANGE_TEXT = "must be between 1900-01-01 and 2200-01-01"


# The widest UTC offset PostgreSQL takes in a timestamp (ISO 8601 and Python allow up to 23:59).
OFFSET_HELD = dt.timedelta(hours=15, minutes=59)


def date_in_range(value: dt.datetime) -> dt.datetime:
    """``value`` (aware), or ValueError when it lies outside DATE_MIN..DATE_MAX. An offset wider
    than any database holds (no zone is) comes back as the same instant in UTC, so a filter like
    ``due_after=...-22:09`` is read, not a server error."""
    if not DATE_MIN <= value < DATE_MAX:
        raise ValueError(DATE_RANGE_TEXT)
    offset = value.utcoffset()
    if offset is not None and abs(offset) > OFFSET_HELD:
        return value.astimezone(dt.UTC)
    return value


def day_in_range(value: dt.date) -> dt.date:
    """A calendar date (a fact's validity) within the same range, or ValueError."""
    if not DATE_MIN.date() <= value < DATE_MAX.date():
        raise ValueError(DATE_RANGE_TEXT)
    return value


def local_datetime(value: str, zone: ZoneInfo, *, field: str) -> dt.datetime | None:
    """A wall-clock time as a page's ``<input type="datetime-local">`` sends it
    ("2026-03-14T09:00"), read in ``zone``: None when empty, else the aware instant.

    Read like schedules read wall times (``fold=0``, talorys/lib/schedules.py): a repeated time
    is its first occurrence, a time in a daylight-saving gap is shifted by the gap. A value that
    carries its own offset keeps it. Anything else, or a date out of range, is ValidationFailed.
    """
    value = (value or "").strip()
    if not value:
        return None
    try:
        wall = dt.datetime.fromisoformat(value)
    except ValueError:
        shown = clip(value, 40)
        raise field_refused(
            f"{field}: “{shown}” is not a date and time; write it like 2026-03-14T09:00.",
            field=field,
        ) from None
    instant = wall if wall.tzinfo else wall.replace(tzinfo=zone, fold=0)
    try:
        return date_in_range(instant)
    except ValueError:
        raise field_refused(f"{field} {DATE_RANGE_TEXT}.", field=field) from None


# What an API key may hold: it is sent as an HTTP header's value, where a line break would start
# another header and a non-ASCII letter cannot be encoded; no provider's key holds anything else.
HEADER_SAFE_TEXT = "can only contain printable ASCII characters without spaces or line breaks"


def header_safe(value: str) -> bool:
    """Whether ``value`` is printable ASCII without spaces (``!`` to ``~``): safe as a header's
    value, as is."""
    return all("!" <= char <= "~" for char in value)
