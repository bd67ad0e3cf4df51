"""/api/auth: login, logout, session, password and API tokens."""

from django.contrib.auth import logout
from django.http import HttpRequest
from django.middleware.csrf import get_token
from ninja import Router, Status
from ninja.pagination import paginate

from talorys.accounts.auth import owner_session_auth, request_owner
from talorys.accounts.schemas import (
    ApiTokenCreatedOut,
    ApiTokenIn,
    ApiTokenOut,
    LoginIn,
    PasswordChangeIn,
    SessionOut,
)
from talorys.accounts.selectors import api_token_list
from talorys.accounts.services import (
    api_token_create,
    api_token_revoke,
    owner_login,
    owner_password_change,
)
from talorys.web.pagination import Pagination
from talorys.web.schemas import ErrorOut, OkOut

auth_router = Router(tags=["auth"])


def _session_out(request: HttpRequest) -> SessionOut:
    user = request.user
    if not user.is_authenticated:
        return SessionOut(authenticated=False, csrf_token=get_token(request))
    return SessionOut(
        authenticated=True, username=user.get_username(), csrf_token=get_token(request)
    )


# Beside what every operation answers (config/openapi.py): a wrong password, the throttle.
@auth_router.post("/login", auth=None, response={200: SessionOut, frozenset({401, 429}): ErrorOut})
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


# Password and tokens need the session: a leaked script token must not lead to more access.


@auth_router.post("/password", auth=owner_session_auth, response={200: OkOut, 429: ErrorOut})
def password_change(request: HttpRequest, payload: PasswordChangeIn) -> OkOut:
    owner_password_change(
        request=request,
        current_password=payload.current_password,
        new_password=payload.new_password,
    )
    return OkOut()


@auth_router.get("/tokens", auth=owner_session_auth, response=list[ApiTokenOut])
@paginate(Pagination)
def token_list(request: HttpRequest):
    return api_token_list(user=request_owner(request))


@auth_router.post("/tokens", auth=owner_session_auth, response={201: ApiTokenCreatedOut})
def token_create(request: HttpRequest, payload: ApiTokenIn) -> Status:
    token, raw = api_token_create(
        user=request_owner(request), name=payload.name, scope=payload.scope
    )
    shown = ApiTokenOut.model_validate(token).model_dump()
    return Status(201, ApiTokenCreatedOut(**shown, token=raw))


@auth_router.delete("/tokens/{int:token_id}", auth=owner_session_auth, response={204: None})
def token_revoke(request: HttpRequest, token_id: int) -> Status:
    api_token_revoke(user=request_owner(request), token_id=token_id)
    return Status(204, None)
