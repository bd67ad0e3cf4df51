"""Owner pages: thin views over services and selectors."""

from __future__ import annotations

from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods

from talorys.errors import AppError
from talorys.security import owner_login


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


@require_http_methods(["GET", "POST"])
def login_page(request: HttpRequest) -> HttpResponse:
    next_url = request.POST.get("next") or request.GET.get("next") or "/"
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = "/"
    if request.method == "GET" and request.user.is_authenticated:
        return redirect(next_url)
    error = ""
    status = 200
    retry_after = None
    if request.method == "POST":
        try:
            owner_login(
                request=request,
                username=request.POST.get("username", ""),
                password=request.POST.get("password", ""),
            )
            return redirect(next_url)
        except AppError as exc:
            error, status = exc.message, exc.status
            retry_after = getattr(exc, "retry_after", None)
    response = render(
        request,
        "login.html",
        {"error": error, "next": next_url, "username": request.POST.get("username", "")},
        status=status,
    )
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


@require_http_methods(["POST"])
def logout_page(request: HttpRequest) -> HttpResponse:
    logout(request)
    return redirect("/login/")


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
