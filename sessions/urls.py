"""Session pages, included at the root: ``path("", include("sessions.urls"))``."""

from django.urls import path

from sessions import views

app_name = "sessions"

urlpatterns = [
    path("sessions/", views.session_list, name="list"),
    # Session ids may contain "/" (any 1-128 characters), so the actions come before the
    # catch-all detail route; an id ending in "/warm" or "/messages/<n>/promote" would have
    # its page shadowed by them (documented; the API has the same shape).
    path("sessions/<path:session_id>/warm/", views.session_warm, name="warm"),
    path(
        "sessions/<path:session_id>/messages/<int:seq>/promote/",
        views.message_promote,
        name="message-promote",
    ),
    path("sessions/<path:session_id>/suggested/", views.session_suggest, name="suggest"),
    path("sessions/<path:session_id>/suggested/accept/", views.candidate_accept, name="accept"),
    path("sessions/<path:session_id>/suggested/accept-all/", views.candidate_accept_all,
         name="accept-all"),
    path("sessions/<path:session_id>/", views.session_detail, name="detail"),
]
