from django.urls import path

from agent import views

urlpatterns = [
    path("", views.home, name="home"),
    path("c/<int:conversation_id>/", views.home, name="conversation"),
]
