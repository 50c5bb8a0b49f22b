"""``Idempotency-Key``: a write sent again with the same key answers what the first one did,
without doing it again.

The first answer is kept in Redis for ``TTL_SECONDS`` under the token (and its user) and the
key, with a hash of the request body: the same key with another body is a 409, as is the same
key while the first request is still running; the same key sent with another token (even of
the same user) is another key. Redis unreachable: the write runs unguarded (its
creates are still deduplicated by content, so a retry writes nothing twice) and the answer
says nothing of it.
"""

import hashlib
import json
import logging
import re

from memories import store
from memories.errors import Conflict, InvalidInput

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
TTL_SECONDS = 24 * 3600
RUNNING_SECONDS = 600  # a request that died mid-way frees its key after this
KEY_RE = re.compile(r"^[\x21-\x7e]{1,255}$")
_RUNNING = "running"


def _redis_key(request, key: str) -> str:
    # Per token, not per user: two tokens of one user may reach different namespaces and
    # agents, and a replay answers without checking them again.
    token = getattr(request, "token_pk", None) or "session"
    return f"{store.global_key('idem')}:{store.encode_id(f'{request.user.pk}:{token}:{key}')}"


def idempotency_key(request) -> str | None:
    """The request's key (None when absent); InvalidInput naming the header for a key that
    is not 1..255 visible ASCII characters."""
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not KEY_RE.match(key):
        raise InvalidInput(f"{HEADER} must be 1..255 visible ASCII characters", field=HEADER)
    return key


def replay(request, key: str) -> tuple[int, dict] | None:
    """The first answer ``(status, body)`` to this key, or None after claiming the key for
    this request. Raises Conflict (409) for a key in use by a running request or given with
    another body."""
    digest = hashlib.sha256(request.body).hexdigest()
    name = _redis_key(request, key)
    try:
        client = store.get_client()
        if client.set(name, json.dumps({"state": _RUNNING, "digest": digest}), nx=True,
                      ex=RUNNING_SECONDS):
            return None
        raw = store.text(client.get(name))
    except store.RedisError as exc:
        log.warning("idempotency key not checked: %s", type(exc).__name__)
        return None
    kept = json.loads(raw) if raw else None
    if kept is None:  # expired between the two calls: run it
        return None
    if kept["digest"] != digest:
        raise Conflict(f"this {HEADER} was used with another request body", field=HEADER)
    if kept["state"] == _RUNNING:
        raise Conflict(f"a request with this {HEADER} is still running; retry later",
                       field=HEADER)
    return kept["status"], kept["body"]


def remember(request, key: str, status: int, body: dict) -> None:
    """Keep the answer to ``key`` for replays (a failure to is logged: the next request with
    the key runs again, and deduplicates)."""
    digest = hashlib.sha256(request.body).hexdigest()
    value = json.dumps({"state": "done", "digest": digest, "status": status, "body": body})
    try:
        store.get_client().set(_redis_key(request, key), value, ex=TTL_SECONDS)
    except store.RedisError as exc:
        log.warning("idempotent answer not kept: %s", type(exc).__name__)


def release(request, key: str) -> None:
    """Free the key of a request that failed as a whole (its answer is not kept)."""
    try:
        store.get_client().delete(_redis_key(request, key))
    except store.RedisError as exc:
        log.warning("idempotency key not released: %s", type(exc).__name__)
