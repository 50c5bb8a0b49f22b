"""What the lab pages share."""

from django.utils.http import url_has_allowed_host_and_scheme

METRIC_LABELS = {"ndcg": "nDCG@k", "precision": "P@k", "recall": "Recall@k", "mrr": "MRR"}


def safe_next(request, url: str | None, fallback: str) -> str:
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return fallback


def fmt_number(value: float) -> str:
    """An SVG coordinate: one decimal, never localised."""
    return f"{value:.1f}"


# --- lab home and profiles --------------------------------------------------------------------


def lab_nav(here: str) -> dict:
    return {"lab_here": here}

