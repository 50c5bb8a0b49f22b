from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.http import JsonResponse
from django.urls import include, path

from api.v1 import api
from integrations.mcp.views import mcp_endpoint
from integrations.metrics.views import metrics_view


@login_not_required
def healthz(request):
    """Liveness for load balancers: 200 when the process answers (no auth)."""
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", api.urls),
    path("django-rq/", include("django_rq.urls")),
    path("healthz", healthz, name="healthz"),
    path("integrations/", include(("integrations.webhooks.urls", "integrations"))),
    path("mcp", mcp_endpoint, name="mcp"),
    path("metrics", metrics_view, name="metrics"),
    path("", include("lab.urls")),
    path("", include("console.urls")),
    path("", include("memories.urls")),
    path("", include("sessions.urls")),
    path("", include("search.urls")),
    path("", include("recalls.urls")),
    path("", include("operations.urls")),
    path("", include("accounts.urls")),
]

# With DEBUG off: htmx actions on an object purged meanwhile get a fragment saying so.
handler404 = "console.views.errors.page_not_found"
