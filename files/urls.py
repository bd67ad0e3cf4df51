from django.urls import path

from files import views

urlpatterns = [
    path("files/", views.files_page, name="files"),
    path("files/<int:file_id>/content", views.file_content_page, name="file-content"),
]
