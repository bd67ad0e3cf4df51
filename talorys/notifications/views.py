"""The Web Push service worker, served at the site's root."""

from __future__ import annotations

from django.contrib.staticfiles import finders
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET


@require_GET
def service_worker(request: HttpRequest) -> HttpResponse:
    """The Web Push service worker, at the root so that it may control every page.

    Public: it is the same static script for everyone, and the browser re-fetches it to check
    for updates even after the session has expired (a redirect to the login page would fail that).
    """
    path = finders.find("talorys/sw.js")
    if path is None:
        raise Http404("The service worker script is missing.")
    with open(path, "rb") as fh:
        response = HttpResponse(fh.read(), content_type="application/javascript; charset=utf-8")
    response["Service-Worker-Allowed"] = "/"
    # Browsers check the worker for updates on navigation; never answer from a stale cache.
    response["Cache-Control"] = "no-cache"
    return response
