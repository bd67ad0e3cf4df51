"""Bounded date types for pydantic schemas: the API's inputs (talorys/web/schemas.py re-exports
them) and the pure schedule model (talorys/lib/schedules.py), which lives below talorys.web."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field

from talorys.lib.validation import date_in_range, day_in_range

# Every date an input takes lies in 1900-2199 (talorys.lib.validation.DATE_MIN..DATE_MAX).
# JSON Schema has no range for a date; the year's pattern says it (an instant on the range's
# first or last day whose offset moves it across is refused though the pattern allows it).
YEARS_IN_RANGE = "^(19|2[01])"

# A date is text that starts with its day, as the schema's format says (2026-03-14, or
# 2026-03-14T09:00:00Z for an instant); from Python, a date or datetime. pydantic would read a
# number, or text made of digits ("1900"), as seconds since 1970: refused, with an example.
_ISO_DAY = re.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _written_like(example: str) -> BeforeValidator:
    def check(value: Any) -> Any:
        if isinstance(value, dt.date) or (isinstance(value, str) and _ISO_DAY.match(value)):
            return value
        raise ValueError(f"must be written like {example}")

    return BeforeValidator(check)


# An aware date within the range every date the owner or the model gives must lie in
# (talorys.lib.validation.DATE_MIN..DATE_MAX): a 422, never an overflow later.
_IN_RANGE = Field(json_schema_extra={"pattern": YEARS_IN_RANGE})
BoundedDatetime = Annotated[
    AwareDatetime,
    _written_like("2026-03-14T09:00:00Z"),
    AfterValidator(date_in_range),
    _IN_RANGE,
]
BoundedDate = Annotated[
    dt.date, _written_like("2026-03-14"), AfterValidator(day_in_range), _IN_RANGE
]
