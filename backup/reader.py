"""Read a backup document as a stream: one row at a time, never the whole file in memory.

``BackupReader(source).rows()`` yields each row of ``data`` as ``(kind, index, row)``, the row
built from ijson's events (its C parser reads the file 256 KiB at a time); the envelope's other
fields are gathered on the way and are ``envelope`` once the rows are read. What a hostile file
could make expensive is refused as it is met, with ValidationFailed:

- bytes that are not UTF-8, or not JSON, at the first bad byte;
- not an object, another format or version, a kind this Talorys does not know, or one twice;
- a row (or an envelope field) nested deeper than ``DEPTH_MAX`` or holding more than
  ``NODES_MAX`` values and keys: a row's columns are a few dozen, its JSON values small;
- a string longer than any column takes (``rows.TEXT_MAX``): the parser hands it over whole, so
  it is held once as the parser's buffer and once as the ``str``, and then refused, before it
  is checksummed (which would copy it twice more).

json.loads of a 49 MB file of a million small objects took 1.5 GB before its rows were checked.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from typing import IO, Any

import ijson

from backup.format import FORMAT, KIND_NAMES, VERSION
from backup.rows import JSON_DEPTH_MAX, TEXT_MAX
from talorys.lib.errors import ValidationFailed

# A row is an object of columns whose JSON values are at most JSON_DEPTH_MAX deep (rows.py
# refuses deeper ones with a message naming the column): the reader refuses only what is far
# past that, before it is built.
DEPTH_MAX = JSON_DEPTH_MAX + 5
# Values and keys in one row or envelope field: a message's tool activity of a long turn is a
# few hundred; a hostile row of a million keys is refused here, not built.
NODES_MAX = 20_000
# The parser's read size. yajl copies a string it holds at every read (64 KiB: 21 s over one
# 50 MB string), and ijson lists a read's events before it yields them (1 MiB of "[" was 65 MiB
# of events): 256 KiB is 5.6 s and 16 MiB at worst.
READ_BYTES = 256 * 1024

Events = Iterator[tuple[str, Any]]


class _Utf8:
    """The source's bytes, passed through, refused at the first that is not UTF-8 (yajl's own
    error would only say "invalid char")."""

    def __init__(self, source: IO[bytes]) -> None:
        self.source = source
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.offset = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.source.read(size)
        try:
            self.decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            raise ValidationFailed(
                f"The file is not UTF-8 text (byte {self.offset + exc.start})."
            ) from exc
        self.offset += len(chunk)
        return chunk


def _json_error(exc: Exception) -> ValidationFailed:
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    first = str(text).strip().splitlines()[0] if str(text).strip() else "it ends too early"
    return ValidationFailed(f"The file is not valid JSON: {first}.")


class _Budget:
    def __init__(self, where: str) -> None:
        self.where = where
        self.left = NODES_MAX

    def spend(self, depth: int, value: Any = None) -> None:
        if isinstance(value, str) and len(value) > TEXT_MAX:
            raise ValidationFailed(
                f"{self.where} holds a text of {len(value)} characters; the longest a Talorys "
                f"backup holds is {TEXT_MAX}."
            )
        self.left -= 1
        if self.left < 0:
            raise ValidationFailed(
                f"{self.where} holds more than {NODES_MAX} values: more than a Talorys backup holds there."
            )
        if depth > DEPTH_MAX:
            raise ValidationFailed(f"{self.where} is nested deeper than {DEPTH_MAX} levels.")


def _value(events: Events, event: str, value: Any, budget: _Budget, depth: int = 0) -> Any:
    """The JSON value that starts with (event, value), built from the events that follow."""
    budget.spend(depth, value)
    if event == "start_map":
        built: dict[str, Any] = {}
        for event, value in events:
            if event == "end_map":
                return built
            budget.spend(depth + 1, value)
            built[value] = _value(events, *next(events), budget, depth + 1)
    elif event == "start_array":
        items: list[Any] = []
        for event, value in events:
            if event == "end_array":
                return items
            items.append(_value(events, event, value, budget, depth + 1))
    else:
        return value
    raise ValidationFailed("The file is not valid JSON: it ends too early.")


class BackupReader:
    """One reading of a backup document (``rows()`` once, then ``envelope``)."""

    def __init__(self, source: IO[bytes]) -> None:
        self.source = source
        # The top-level fields other than "data", as in the file (checked by format.Envelope).
        self.envelope: dict[str, Any] = {}
        self.kinds: list[str] = []
        self.has_data = False

    def rows(self) -> Iterator[tuple[str, int, Any]]:
        events = ijson.basic_parse(_Utf8(self.source), buf_size=READ_BYTES, use_float=True)
        try:
            yield from self._document(events)
        except ijson.JSONError as exc:
            raise _json_error(exc) from exc

    def _document(self, events: Events) -> Iterator[tuple[str, int, Any]]:
        event, _ = next(events, ("end", None))
        if event != "start_map":
            raise ValidationFailed("This is not a Talorys backup: the file is not a JSON object.")
        for event, key in events:
            if event == "end_map":
                break
            if key == "data" and not self.has_data:
                self.has_data = True
                yield from self._data(events)
                continue
            self.envelope[key] = _value(events, *next(events), _Budget(f'"{key}"'))
            self._check_head(key)
        for _ in events:  # trailing bytes: ijson refuses what is not whitespace
            pass
        for key in ("format", "version"):
            self._check_head(key)

    def _check_head(self, key: str) -> None:
        """The format and version, refused as soon as they are read (before the rows), and
        at the end when missing."""
        if key == "format" and self.envelope.get(key) != FORMAT:
            raise ValidationFailed(f'This is not a Talorys backup: "format" must be "{FORMAT}".')
        if key == "version" and self.envelope.get(key) != VERSION:
            raise ValidationFailed(
                f"This backup is version {self.envelope.get(key)!r}; this Talorys reads "
                f"version {VERSION}."
            )

    def _data(self, events: Events) -> Iterator[tuple[str, int, Any]]:
        if next(events)[0] != "start_map":
            raise ValidationFailed('The backup\'s "data" must be an object of kinds.')
        for event, kind in events:
            if event == "end_map":
                return
            if kind not in KIND_NAMES:
                raise ValidationFailed(
                    f"The backup holds kinds this Talorys does not know: {kind}; kinds are "
                    f"{', '.join(KIND_NAMES)}."
                )
            if kind in self.kinds:
                raise ValidationFailed(f'The backup\'s "data" holds {kind} twice.')
            self.kinds.append(kind)
            if next(events)[0] != "start_array":
                raise ValidationFailed(f'The backup\'s "data.{kind}" must be a list of rows.')
            for index, (event, value) in enumerate(events):
                if event == "end_array":
                    break
                yield kind, index, _value(events, event, value, _Budget(f"{kind}[{index}]"))
