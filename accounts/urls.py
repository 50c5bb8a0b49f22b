"""Account pages (API tokens, users), included at the root: ``path("", include("accounts.urls"))``."""

from django.urls import path

from accounts.views import tokens as token_views
from accounts.views import users as user_views

app_name = "accounts"

urlpatterns = [
    path("tokens/", token_views.token_list, name="tokens"),
    path("tokens/new/", token_views.token_new, name="token-new"),
    path("tokens/created/", token_views.token_created, name="token-created"),
    path("tokens/<str:prefix>/revoke/", token_views.token_revoke_view, name="token-revoke"),
    path("users/", user_views.user_list, name="users"),
    path("users/<str:username>/role/", user_views.user_role, name="user-role"),
    path("users/<str:username>/active/", user_views.user_active, name="user-active"),
]
