from django.contrib import admin
from django.urls import path

from talorys.accounts import views as accounts_views
from talorys.api import api
from talorys.notifications import views as notifications_views
from talorys.workspace import views as workspace_views

urlpatterns = [
    path("", workspace_views.home, name="home"),
    path("login/", accounts_views.login_page, name="login"),
    path("logout/", accounts_views.logout_page, name="logout"),
    path("sw.js", notifications_views.service_worker, name="service-worker"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
]
