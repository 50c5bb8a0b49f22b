"""Webhook signatures (pure: no Django, no Redis).

Each delivery carries ``X-Memory-Console-Signature: t=<unix seconds>,v1=<hex>``, where the
hex is HMAC-SHA256 (RFC 2104, FIPS 180-4) keyed with the endpoint's secret over
``"<t>.<raw body>"``: the timestamp is signed with the body, so a captured request cannot be
replayed later with a fresh timestamp (the scheme Stripe documents for its webhooks).

Receivers verify with :func:`verify` (copy it: it needs only the standard library).
"""

from __future__ import annotations

import hashlib
import hmac
import time

HEADER = "X-Memory-Console-Signature"
TOLERANCE_SECONDS = 300  # a delivery older than this is refused by verify()


class SignatureError(ValueError):
    """The signature header is missing, malformed, wrong, or too old."""


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """Hex HMAC-SHA256 of ``b"<timestamp>." + body`` keyed with ``secret``."""
    message = str(int(timestamp)).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, *, now: float | None = None) -> str:
    """The header value for ``body`` sent now: ``t=<unix seconds>,v1=<hex>``."""
    timestamp = int(time.time() if now is None else now)
    return f"t={timestamp},v1={signature(secret, timestamp, body)}"


def verify(secret: str, body: bytes, header: str | None, *, now: float | None = None,
           tolerance: int = TOLERANCE_SECONDS) -> int:
    """Check a delivery: returns its timestamp (unix seconds), raises SignatureError.

    ``body`` must be the raw request body, byte for byte (not re-serialised JSON). Several
    ``v1=`` entries may appear while a secret is being rotated; any one matching is enough.
    """
    if not header:
        raise SignatureError(f"missing {HEADER} header")
    parts = [p.strip().split("=", 1) for p in header.split(",")]
    stamps = [v for k, v in parts if k == "t"] if all(len(p) == 2 for p in parts) else []
    sigs = [v for k, v in (p for p in parts if len(p) == 2) if k == "v1"]
    if len(stamps) != 1 or not stamps[0].isdigit() or not sigs:
        raise SignatureError(f"malformed {HEADER} header")
    timestamp = int(stamps[0])
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise SignatureError("timestamp outside the tolerance (replayed or clock skew)")
    expected = signature(secret, timestamp, body)
    if not any(hmac.compare_digest(expected, s) for s in sigs):
        raise SignatureError("signature does not match")
    return timestamp
