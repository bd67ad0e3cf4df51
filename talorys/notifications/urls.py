from django.urls import path

from talorys.notifications import views

urlpatterns = [
    path("sw.js", views.service_worker, name="service-worker"),
    path("manifest.webmanifest", views.manifest, name="manifest"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("notifications/", views.notifications_page, name="notifications"),
    path("notifications/read-all/", views.notifications_read_all, name="notifications-read-all"),
    path(
        "notifications/<int:notification_id>/read/",
        views.notification_read,
        name="notification-read",
    ),
]
