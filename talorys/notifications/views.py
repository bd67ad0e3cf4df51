"""The Web Push service worker, the manifest and /favicon.ico, served at the site's root; the
owner's notifications page."""

from __future__ import annotations

import json

from django.contrib.staticfiles import finders
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.templatetags.static import static
from django.views.decorators.http import require_GET

from talorys.notifications import selectors, services
from talorys.web.pages import owner_page, page_of, run_action


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


# The web app manifest: the app installs on a phone's home screen and opens without the
# browser's bars. Public, like the icons it names (the browser fetches it without cookies).
MANIFEST = {
    "name": "Talorys",
    "short_name": "Talorys",
    "description": "Your personal assistant",
    "start_url": "/",
    "scope": "/",
    "display": "standalone",
    "background_color": "#f6f7f9",
    "theme_color": "#2f5bea",
    "icons": [
        {"src": "/static/talorys/icons/icon-192.png", "sizes": "192x192", "type": "image/png"},
        {"src": "/static/talorys/icons/icon-512.png", "sizes": "512x512", "type": "image/png"},
        {
            "src": "/static/talorys/icons/icon-512.png",
            "sizes": "512x512",
            "type": "image/png",
            "purpose": "maskable",
        },
        {"src": "/static/talorys/icons/icon.svg", "sizes": "any", "type": "image/svg+xml"},
    ],
}


@require_GET
def manifest(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(
        json.dumps(MANIFEST), content_type="application/manifest+json; charset=utf-8"
    )
    response["Cache-Control"] = "public, max-age=3600"
    return response


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers and feed readers ask for whatever the page's <link rel=icon>
    says: a redirect to the app's icon (public, like the icon itself)."""
    response = HttpResponseRedirect(static("talorys/icons/icon-192.png"))
    response["Cache-Control"] = "public, max-age=86400"
    return response


# --- the notifications page (/notifications/) -------------------------------------------------


@owner_page("GET")
def notifications_page(request: HttpRequest) -> HttpResponse:
    unread = {"unread": True, "read": False}.get(request.GET.get("show") or "")
    page = page_of(request, selectors.notification_list(unread=unread))
    return render(
        request,
        "notifications/list.html",
        {
            "page": page,
            "show": request.GET.get("show") or "",
            "rows": [(n, n.link()) for n in page.object_list],
        },
    )


@owner_page("POST")
def notification_read(request: HttpRequest, notification_id: int) -> HttpResponse:
    return run_action(
        request,
        lambda: services.notification_mark_read(notification_id=notification_id),
        back="/notifications/",
        done="Marked as read.",
    )


@owner_page("POST")
def notifications_read_all(request: HttpRequest) -> HttpResponse:
    return run_action(
        request,
        services.notification_mark_all_read,
        back="/notifications/",
        done=lambda marked: f"{marked} marked as read." if marked else "Nothing was unread.",
    )
