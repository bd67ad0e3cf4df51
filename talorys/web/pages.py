"""What every owner page shares: the decorator, a page of a list, and running a form's action.

A page is an edge like an API handler: it validates, calls one service or selector and shapes
the answer. Forms post back to the page (POST, redirect, GET), so a reload never re-sends one.
A service's ``AppError`` becomes a message above the page and, because services change state
in one transaction, a refused action has changed nothing. The message is put in the page's
words (talorys/lib/wording.py) and names the field it is about, so the page's script
(static/talorys/js/form-errors.js) shows it at the top of that field's form and focuses it.

Each page's view lives in the app that owns its data, one module per page. A card whose data
belongs to an app the view may not import is filled by the page's script from the API instead
(the notification channels on /settings/: static/talorys/js/settings-channels.js).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import wraps
from typing import Any, TypeVar

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.http.response import HttpResponseBase
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from talorys.lib.errors import AppError, ValidationFailed
from talorys.lib.kept import keep_typed
from talorys.lib.wording import plain_parts

PER_PAGE = 50
T = TypeVar("T")
# A page or a file it serves (a FileResponse streams: an HttpResponseBase, not an HttpResponse).
View = Callable[..., HttpResponseBase]


def owner_page(*methods: str) -> Callable[[View], View]:
    """The owner's session only (anyone else is sent to the login page), these methods only."""
    allowed = list(methods or ("GET",))

    def decorate(view: View) -> View:
        return wraps(view)(login_required(require_http_methods(allowed)(view)))

    return decorate


def page_of(request: HttpRequest, items: Iterable[T], *, per_page: int = PER_PAGE) -> Page:
    """The ``?page=`` page of ``items`` (a queryset is counted once and sliced, never loaded).

    A page number that is not a number, or past the end, shows the last page that exists."""
    paginator: Paginator = Paginator(items, per_page)  # type: ignore[arg-type]
    return paginator.get_page(request.GET.get("page"))


def back_to(request: HttpRequest, default: str) -> str:
    """The form's ``next`` when it is a path on this site, else ``default``."""
    target = request.POST.get("next") or ""
    if target.startswith("/") and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default


def run_action(
    request: HttpRequest,
    action: Callable[[], Any],
    *,
    back: str,
    done: str | Callable[[Any], str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> HttpResponse:
    """Call ``action``; say ``done`` (or the error) above the page at ``next`` or ``back``.

    Both answers are a 303 to the page, where the message is shown once; a refused form's
    fields are kept for that page (talorys/lib/kept.py), so nothing typed is lost. The error is
    said in the page's words: ``labels`` names its fields as the page labels them (field_words
    spells out the others)."""
    target = back_to(request, back)
    try:
        result = action()
    except AppError as err:
        say_error(request, err.message, labels)
        keep_typed(request, target)
    else:
        if done:
            messages.success(request, done(result) if callable(done) else done)
    response = HttpResponseRedirect(target)
    response.status_code = 303
    return response


def say_error(request: HttpRequest, message: str, labels: Mapping[str, str] | None = None) -> None:
    """``message`` above the next page, in plain words; the field it names first (the form's
    input of that name) is kept with it, for the page's script to focus."""
    parts = plain_parts(message, labels)
    field = next((part.field for part in parts if part.field), None)
    text = " ".join(part.text for part in parts) or message
    messages.error(request, text, extra_tags=field.rsplit(".", 1)[-1] if field else "")


def form_text(request: HttpRequest, name: str) -> str:
    """A text field of the form, stripped (missing is empty)."""
    return (request.POST.get(name) or "").strip()


def whole_number(data: QueryDict, name: str, *, label: str) -> int | None:
    """A positive whole number (an id) from a form or a query string, None when the field is
    empty or missing. A field that is there but wrong is refused, never read as empty:
    "project=abc" must not clear a task's project."""
    value = (data.get(name) or "").strip()
    if not value:
        return None
    if not value.isdigit() or not 0 < int(value) < 2**63:
        raise ValidationFailed(f"{label}: “{value[:40]}” is not an id.")
    return int(value)


def form_version(request: HttpRequest) -> int | None:
    """The version of the item the edit form was opened on (its hidden ``version`` field): the
    service refuses the edit if the item changed since (talorys.web.schemas.ExpectedVersion)."""
    return whole_number(request.POST, "version", label="Version")


def page_problem(request: HttpRequest) -> str:
    """What is wrong with ``?page=``, or "" (the list then shows page 1 or its last page)."""
    value = request.GET.get("page", "")
    if value and not value.isdigit():
        return f"“{value[:40]}” is not a page number; this is page 1."
    return ""
