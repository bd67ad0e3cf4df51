from django.contrib.auth import logout
from django.http import HttpRequest
from django.middleware.csrf import get_token
from ninja import Router

from talorys.schemas import LoginIn, OkOut, SessionOut
from talorys.security import owner_login

auth_router = Router(tags=["auth"])


def _session_out(request: HttpRequest) -> SessionOut:
    user = request.user
    if not user.is_authenticated:
        return SessionOut(authenticated=False, csrf_token=get_token(request))
    return SessionOut(
        authenticated=True, username=user.get_username(), csrf_token=get_token(request)
    )


@auth_router.post("/login", auth=None, response=SessionOut)
def login_view(request: HttpRequest, payload: LoginIn) -> SessionOut:
    owner_login(request=request, username=payload.username, password=payload.password)
    return _session_out(request)


@auth_router.post("/logout", response=OkOut)
def logout_view(request: HttpRequest) -> OkOut:
    logout(request)
    return OkOut()


@auth_router.get("/session", auth=None, response=SessionOut)
def session_view(request: HttpRequest) -> SessionOut:
    return _session_out(request)
