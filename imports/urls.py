"""The imports page (imports/views.py)."""

from django.urls import path

from imports import views

urlpatterns = [
    path("imports/", views.imports_page, name="imports"),
    path("imports/<int:import_id>/revert/", views.import_revert_page, name="import-revert"),
]
