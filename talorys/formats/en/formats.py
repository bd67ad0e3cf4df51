"""English formats, the same as talorys/lib/timefmt.py: "1 Dec 2026, 22:14" (the admin's lists,
its read-only fields and any ``|date`` without a format). Django's own "en" would give
"Dec. 1, 2026, 10:14 p.m."."""

from talorys.lib.timefmt import DATE_FORMAT, DATETIME_FORMAT, TIME_FORMAT

SHORT_DATE_FORMAT = DATE_FORMAT
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
__all__ = [
    "DATETIME_FORMAT",
    "DATE_FORMAT",
    "SHORT_DATETIME_FORMAT",
    "SHORT_DATE_FORMAT",
    "TIME_FORMAT",
]
