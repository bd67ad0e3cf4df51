from django.contrib import admin
from django.urls import path

from talorys import views
from talorys.api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", views.login_page, name="login"),
    path("logout/", views.logout_page, name="logout"),
    path("sw.js", views.service_worker, name="service-worker"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
]
