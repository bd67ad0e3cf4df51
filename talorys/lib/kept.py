"""What the owner typed into a refused form, kept for the page the form returns to.

Forms post, then redirect to their page (talorys/web/pages.py, ``run_action``), so a refused
form would come back empty: a title typed into quick add, gone because its due date was out of
range. The typed fields are kept in the session for the next GET of that page, once, and the
page fills its fields from them (``typed``). The CSRF token, ``next`` and ``version`` are not
kept: the form shows the item's current version, so saving again is a choice over what is there.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.http import HttpRequest

SESSION_KEY = "kept_input"
# Not what the owner typed: the form's own bookkeeping.
_SKIPPED = frozenset({"csrfmiddlewaretoken", "next", "version"})
# More than any field of the app holds (a note's content is at most 200 000 characters).
_VALUE_MAX = 250_000


def keep_typed(request: HttpRequest, target: str, **extra: str) -> None:
    """Keep the POSTed fields (and ``extra``) for the next GET of ``target``'s path; a form
    with nothing typed (a delete button) keeps nothing."""
    fields = {
        name: request.POST.get(name, "")[:_VALUE_MAX]
        for name in request.POST
        if name not in _SKIPPED
    } | extra
    if not fields:
        return
    request.session[SESSION_KEY] = {"path": urlsplit(target).path, "fields": fields}


def typed(request: HttpRequest) -> dict[str, str]:
    """The fields kept for this page (then forgotten), or {} when there are none."""
    kept = request.session.get(SESSION_KEY)
    if not isinstance(kept, dict) or kept.get("path") != request.path:
        return {}
    del request.session[SESSION_KEY]
    fields = kept.get("fields")
    return {str(k): str(v) for k, v in fields.items()} if isinstance(fields, dict) else {}
