"""The one pagination of every API list: limit and offset, both bounded.

ninja's LimitOffsetPagination takes any offset (and, unconfigured, any limit), so a number past
what the database can hold (2**63 on PostgreSQL and SQLite) reached the query and failed there:
a 500 on every list. Bounded here, such a number is a 422 like any other invalid input.
"""

from __future__ import annotations

from ninja import Field, Schema
from ninja.pagination import LimitOffsetPagination

MAX_LIMIT = 500
# No list holds two billion rows; any offset up to here is a valid (perhaps empty) page.
MAX_OFFSET = 2**31 - 1


class Pagination(LimitOffsetPagination):
    """Use as ``@paginate(Pagination)`` (it is also NINJA_PAGINATION_CLASS, for a bare
    ``@paginate``)."""

    class Input(Schema):
        limit: int = Field(100, ge=1, le=MAX_LIMIT)
        offset: int = Field(0, ge=0, le=MAX_OFFSET)

    def __init__(self, **kwargs) -> None:
        super().__init__(max_limit=MAX_LIMIT, **kwargs)
