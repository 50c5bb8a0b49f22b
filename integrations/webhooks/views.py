"""Console pages for webhooks (admin): the endpoints with a form to add one, and each
endpoint's settings and delivery log with "Send test event", retry, enable/disable, secret
rotation and delete. Thin: the writers are endpoints.py and outbox.py.
"""

from django.contrib import messages
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from console.pages import bad_request, paginate, render_page, role_required
from integrations.webhooks import endpoints, outbox
from integrations.webhooks.events import EVENT_TYPES
from integrations.webhooks.forms import EndpointForm
from integrations.webhooks.models import WebhookDelivery, WebhookEndpoint
from memories.errors import ServiceError

PER_PAGE = 25


def _list(request, *, form=None, status=200):
    rows = WebhookEndpoint.objects.annotate(
        delivered=Count("deliveries", filter=Q(deliveries__status=WebhookDelivery.DELIVERED)),
        pending=Count("deliveries", filter=Q(deliveries__status=WebhookDelivery.PENDING)),
        failed=Count("deliveries", filter=Q(deliveries__status=WebhookDelivery.FAILED)),
    ).order_by("id")
    return render_page(request, "integrations/webhooks.html",
                       {"endpoints": rows, "form": form or EndpointForm(),
                        "event_types": EVENT_TYPES}, status=status)


@require_GET
@role_required("admin")
def webhook_list(request):
    return _list(request)


@require_POST
@role_required("admin")
def webhook_new(request):
    form = EndpointForm(request.POST)
    if not form.is_valid():
        return _list(request, form=form, status=400)
    try:
        endpoint = endpoints.endpoint_create(actor=request.user, **form.cleaned_data)
    except ServiceError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        return _list(request, form=form, status=400)
    messages.success(request, "Endpoint added. Its signing secret is shown below.")
    return redirect("integrations:webhook", endpoint.pk)


def _detail(request, endpoint, *, status=200):
    deliveries = endpoint.deliveries.select_related("event").order_by("-id")
    base = reverse("integrations:webhook", args=[endpoint.pk])
    pager = paginate(request, deliveries, per_page=PER_PAGE, params={}, base=base)
    response = render_page(request, "integrations/webhook_detail.html",
                           {"endpoint": endpoint, "pager": pager}, partial="deliveries",
                           status=status)
    add_never_cache_headers(response)  # the page shows the signing secret
    return response


@require_GET
@vary_on_headers("HX-Request")
@role_required("admin")
def webhook_detail(request, endpoint_id: int):
    """Settings and the delivery log, newest first (the log alone for an htmx swap)."""
    return _detail(request, get_object_or_404(WebhookEndpoint, pk=endpoint_id))


@require_POST
@role_required("admin")
def webhook_test(request, endpoint_id: int):
    """Queue a test event; htmx re-renders the delivery log, which shows it pending."""
    endpoint = get_object_or_404(WebhookEndpoint, pk=endpoint_id)
    event = outbox.outbox_test_event(endpoint, actor=request.user)
    messages.success(request, f"Test event {event.event_id} queued.")
    if request.htmx:
        return _detail(request, endpoint)
    return redirect("integrations:webhook", endpoint.pk)


@require_POST
@role_required("admin")
def webhook_retry(request, endpoint_id: int, delivery_id: int):
    delivery = get_object_or_404(WebhookDelivery, pk=delivery_id, endpoint_id=endpoint_id)
    if delivery.status == WebhookDelivery.FAILED:
        outbox.delivery_retry(delivery)
        messages.success(request, "Delivery queued again.")
    if request.htmx:
        return _detail(request, delivery.endpoint)
    return redirect("integrations:webhook", endpoint_id)


@require_POST
@role_required("admin")
def webhook_action(request, endpoint_id: int):
    """``action``: ``enable``, ``disable``, ``rotate`` (new secret) or ``delete``."""
    endpoint = get_object_or_404(WebhookEndpoint, pk=endpoint_id)
    action = request.POST.get("action")
    if action in ("enable", "disable"):
        endpoints.endpoint_update(actor=request.user, endpoint=endpoint,
                                  active=action == "enable")
        messages.success(request, f"Endpoint {'enabled' if action == 'enable' else 'disabled'}.")
    elif action == "rotate":
        endpoints.endpoint_rotate_secret(actor=request.user, endpoint=endpoint)
        messages.success(request, "New signing secret: the old one no longer verifies.")
    elif action == "delete":
        endpoints.endpoint_delete(actor=request.user, endpoint=endpoint)
        messages.success(request, "Endpoint deleted.")
        return redirect("integrations:webhooks")
    else:
        return bad_request(request, "Unknown action: use enable, disable, rotate or delete.")
    return redirect("integrations:webhook", endpoint_id)
