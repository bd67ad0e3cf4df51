"""Schema building blocks every API uses: the strict input base and bounded field types."""

from __future__ import annotations

from typing import Annotated, Any

from django.db.models import TextChoices
from ninja import Schema
from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
)

from talorys.lib.bounded import YEARS_IN_RANGE as YEARS_IN_RANGE
from talorys.lib.bounded import BoundedDate as BoundedDate
from talorys.lib.bounded import BoundedDatetime as BoundedDatetime
from talorys.lib.validation import NUL_REFUSED, has_nul


def _no_nul(value: Any) -> Any:
    # Bad input, not a crash (talorys/lib/validation.py says why).
    if isinstance(value, str) and has_nul(value):
        raise ValueError(NUL_REFUSED)
    return value


# What /api/openapi.json says of every text an input takes: no NUL character (the rule above),
# so that a client reading the schema sends only what the services accept.
NO_NUL = "^[^\\x00]*$"
# A text that must not be empty: the services' clean_line and clean_text drop every control
# character but NUL (C0, DEL, C1; line breaks become spaces), then strip whitespace, so a
# character that is neither must be left. The control characters are named rather than left to
# \s, whose reach differs between regex engines (Python's takes \x1c-\x1f, Unicode's does not).
NOT_BLANK = "^[^\\x00]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00]*$"
# A text taken as it is but stripped of whitespace (str.strip, which takes \x1c-\x1f too), as
# a search query is: something besides whitespace must be left.
NOT_WHITESPACE = "^[^\\x00]*[^\\s\\x00\\x1c-\\x1f][^\\x00]*$"

# A query-string text (a search or filter) held to the same rule as body fields.
QueryText = Annotated[str, AfterValidator(_no_nul), Field(json_schema_extra={"pattern": NO_NUL})]
# A row id as the database holds it (a signed 64-bit integer): a larger number is bad input
# (422), not a query that fails in the database. Path ids are bounded in talorys/web/middleware.py.
Id = Annotated[int, Field(ge=1, le=2**63 - 1)]
# The most items a tool's list or the search API answers with at once.
LIST_LIMIT_MAX = 50
Limit = Annotated[
    int,
    Field(
        ge=1,
        le=LIST_LIMIT_MAX,
        description=f"How many to return at most (1-{LIST_LIMIT_MAX}).",
    ),
]

# The version of an item an edit was made from (its ``version`` as read): when the item has
# changed since, the edit is refused with 409 CONFLICT and changes nothing. Left out, no check.
ExpectedVersion = Annotated[
    int | None,
    Field(
        ge=1,
        le=2**31 - 1,
        description=(
            "The version you read. If the item has changed since, nothing changes and the "
            "answer is 409 CONFLICT with the current version in details. Leave it out to apply "
            "the edit to whatever is current."
        ),
    ),
]


def _without_null(schema: dict[str, Any]) -> None:
    """A field's JSON schema without its null option (nor its default, null)."""
    options = [option for option in schema.pop("anyOf", []) if option != {"type": "null"}]
    schema.pop("default", None)
    if len(options) == 1:
        schema.update(options[0])
    elif options:
        schema["anyOf"] = options


# A field of an edit that may be left out, which keeps what is stored, but may not be sent as
# null, which its service refuses (a title, a status, a schedule): the schema has no null.
# ``title: Annotated[str | None, NOT_NULL] = Field(None, max_length=...)``.
NOT_NULL = Field(json_schema_extra=_without_null)


def one_of(choices: type[TextChoices]) -> WithJsonSchema:
    """The JSON schema of a model's ``TextChoices`` written inline, as a ``Literal`` of its values
    would be: ``Annotated[Task.Status, one_of(Task.Status)]`` accepts exactly the model's choices
    and shows them to API clients and to the model without a ``$ref``."""
    return WithJsonSchema({"enum": list(choices.values), "type": "string"})


def _texts_say_no_nul(schema: dict[str, Any]) -> None:
    """Give each plain text property of an input's JSON schema the ``NO_NUL`` pattern, or
    ``NOT_BLANK`` where it may not be empty (a date's, a choice's or a pattern of its own
    already says more)."""
    for prop in schema.get("properties", {}).values():
        for option in [prop, *prop.get("anyOf", [])]:
            if option.get("type") == "string" and not {"format", "enum", "pattern"} & set(option):
                option["pattern"] = NOT_BLANK if option.get("minLength", 0) > 0 else NO_NUL


class In(Schema):
    model_config = ConfigDict(
        extra="forbid", str_strip_whitespace=True, json_schema_extra=_texts_say_no_nul
    )

    @field_validator("*")
    @classmethod
    def _text_has_no_nul(cls, value: Any) -> Any:
        return _no_nul(value)


class OkOut(Schema):
    ok: bool = True


class ErrorDetailOut(Schema):
    code: str = Field(description="Stable: VALIDATION, NOT_FOUND, PROVIDER_TIMEOUT...")
    message: str = Field(description="For people: what went wrong and what to do.")
    details: Any = Field(None, description="Some errors say more: the fields, the version...")


# The envelope of talorys/lib/errors.py. /api/openapi.json declares it for each status an
# operation can answer (config/openapi.py); a route that answers more than its shape says lists
# it beside its success (``response={200: ..., 429: ErrorOut}``).
class ErrorOut(Schema):
    """Every error answer of the API."""

    error: ErrorDetailOut
