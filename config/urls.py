"""Every URL: the owner's pages (each app's ``urls.py``), the API, /v1, the admin, login."""

from django.contrib import admin
from django.urls import include, path

from agent.completions.api import v1_api
from config.api import api
from talorys.accounts import views as accounts_views

urlpatterns = [
    path("login/", accounts_views.login_page, name="login"),
    path("logout/", accounts_views.logout_page, name="logout"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    # OpenAI's chat completions API, Talorys as the model (agent/completions/): tokens only.
    path("v1/", v1_api.urls),
    path("", include("talorys.notifications.urls")),
    path("", include("agent.urls")),
    path("", include("talorys.workspace.urls")),
    path("", include("talorys.history.urls")),
    path("", include("talorys.owner.urls")),
    path("", include("memory.urls")),
    path("", include("approvals.urls")),
    path("", include("automations.urls")),
    path("", include("backup.urls")),
    path("", include("files.urls")),
    path("", include("imports.urls")),
]
