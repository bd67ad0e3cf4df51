"""The one pagination of every API list: limit and offset, both bounded.

ninja's LimitOffsetPagination takes any offset (and, unconfigured, any limit), so a number past
what the database can hold (2**63 on PostgreSQL and SQLite) reached the query and failed there:
a 500 on every list. Bounded here, such a number is a 422 like any other invalid input.

``paginate_rows`` is the same pagination for a list whose output schema is a plain copy of the
model's fields: the page is read as rows of those fields and written as JSON at once, without a
model instance and a schema validation per item. Only where that is measurably worth it
(talorys/web/schema_rows.py says why, which lists and by how much). The parameters, the answer
and the OpenAPI schema are ``@paginate(Pagination)``'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Field, Schema
from ninja.pagination import LimitOffsetPagination, paginate
from ninja.renderers import JSONRenderer

from talorys.web.schema_rows import SchemaRows

MAX_LIMIT = 500
# No list holds two billion rows; any offset up to here is a valid (perhaps empty) page.
MAX_OFFSET = 2**31 - 1

# What NinjaAPI writes its answers with (config/api.py keeps ninja's default renderer).
_RENDERER = JSONRenderer()
_CONTENT_TYPE = f"{_RENDERER.media_type}; charset={_RENDERER.charset}"


class Pagination(LimitOffsetPagination):
    """Use as ``@paginate(Pagination)`` (it is also NINJA_PAGINATION_CLASS, for a bare
    ``@paginate``). With ``rows``, the page is those rows (see ``paginate_rows``)."""

    class Input(Schema):
        limit: int = Field(100, ge=1, le=MAX_LIMIT)
        offset: int = Field(0, ge=0, le=MAX_OFFSET)

    def __init__(self, *, rows: SchemaRows | None = None, **kwargs) -> None:
        super().__init__(max_limit=MAX_LIMIT, **kwargs)
        self.rows = rows

    def paginate_queryset(
        self, queryset: QuerySet, pagination: Any, request: HttpRequest, **params: Any
    ) -> Any:
        if self.rows is None:
            return super().paginate_queryset(queryset, pagination, request, **params)
        start = pagination.offset
        return {
            self.items_attribute: self.rows.page(queryset, start, start + pagination.limit),
            "count": queryset.count(),
        }


def paginate_rows(schema: type[Schema]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@paginate(Pagination)`` for a view returning a QuerySet listed as ``response=list[schema]``:
    the page is read as rows of ``schema`` and answered as JSON directly, with no validation of
    each item by ninja. ``schema`` must be a plain copy of the model's fields (SchemaRows checks
    it when the module is imported)."""
    rows = SchemaRows(schema)

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        paginated = paginate(Pagination, rows=rows)(view)

        # ninja returns an HttpResponse as it is: the page's dicts skip its response validation.
        # The wrapper keeps what ninja reads off ``paginated`` (its arguments, the Paged schema).
        @functools.wraps(paginated)
        def answer(request: HttpRequest, **kwargs: Any) -> HttpResponse:
            page = paginated(request, **kwargs)
            body = _RENDERER.render(request, page, response_status=200)
            return HttpResponse(body, content_type=_CONTENT_TYPE)

        return answer

    return decorate
