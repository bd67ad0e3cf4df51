"""Login and logout pages."""

from __future__ import annotations

from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from talorys.accounts.services import owner_login
from talorys.lib.errors import AppError


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
