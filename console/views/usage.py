"""The Usage page: recalls and writes per day, per token and per namespace, recall latency
per day (``console.usage``), and HTTP requests, errors and latency per view from the
metrics (``integrations.metrics.http_figures``), as server-drawn SVG charts."""

from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from console.forms import UsageForm
from console.pages import render_page, role_required
from console.usage import usage
from console.usage_charts import bar_chart, line_chart
from integrations.metrics.http_figures import http_figures

RECALLS, WRITES, P50, P95 = "#2f5fd0", "#1f9d6b", "#2f5fd0", "#d9822b"


@require_GET
@vary_on_headers("HX-Request")
@role_required("viewer")
def usage_page(request):
    """``/usage/?namespace=&days=``; htmx gets ``#usage``."""
    form = UsageForm(request.GET or None)
    valid = form.is_valid() if request.GET else True
    context, status = {"form": form}, 200 if valid else 400
    if valid:
        data = form.cleaned_data if request.GET else {"namespace": "", "days": 14}
        figures = usage(days=data["days"], user_id=data["namespace"] or None)
        days = [d.day for d in figures.days]
        context.update(
            figures=figures,
            charts=[
                bar_chart("Recalls per day", days, [d.recalls for d in figures.days], RECALLS),
                bar_chart("Memory writes per day", days, [d.writes for d in figures.days],
                          WRITES),
                line_chart("Recall time per day (engine, ms)", days, {
                    "p50": ([d.p50_ms for d in figures.days], P50),
                    "p95": ([d.p95_ms for d in figures.days], P95)}),
            ],
            http=http_figures(),
        )
    return render_page(request, "console/usage.html", context, partial="usage", status=status)
