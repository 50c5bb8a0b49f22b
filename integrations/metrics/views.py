"""``/metrics``: Prometheus scrapes here.

Allowed with any live API token of the viewer role or above (``Authorization: Bearer``,
Prometheus' ``authorization`` scrape setting), or from an address in
``settings.METRICS_ALLOWED_IPS`` (addresses or networks; empty by default: behind a reverse
proxy on the same host every request comes from loopback).
"""

import ipaddress

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from accounts.roles import has_role
from accounts.tokens import token_lookup
from integrations.metrics.exposition import render


def _from_allowed_address(request) -> bool:
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(net, strict=False)
               for net in settings.METRICS_ALLOWED_IPS)


def _refusal(request):
    """None when the request may read the metrics, else the 401/403 to answer."""
    if _from_allowed_address(request):
        return None
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    row = token_lookup(token.strip()) if scheme.lower() == "bearer" else None
    if row is None:
        response = JsonResponse({"error": {"code": "unauthorized", "field": None,
                                           "message": "missing or invalid bearer token"}},
                                status=401)
        response["WWW-Authenticate"] = 'Bearer realm="memory-console"'
        return response
    if not has_role(row.user, "viewer"):
        return JsonResponse({"error": {"code": "forbidden", "field": None,
                                       "message": "this action needs the viewer role"}},
                            status=403)
    return None


@require_GET
@login_not_required
def metrics_view(request):
    refused = _refusal(request)
    if refused is not None:
        return refused
    return HttpResponse(render(), content_type=CONTENT_TYPE_LATEST)
