"""Redis connection and key layout for the hot store, index and session windows.

Key layout: ``<prefix>:{<namespace>}:<kind>:<id>``. The namespace (``user_id``) is the hash tag,
so every key of one namespace lives in one Redis Cluster slot and Lua scripts never cross
slots. Ids made only of ``[A-Za-z0-9_.-]`` appear verbatim; any other id is percent-encoded,
so ``ali:ce`` never meets ``ali`` + ``ce`` and ``f*o`` is not a glob.
"""

import functools
import logging
import os
import re
from urllib.parse import quote

import redis
from django.conf import settings

log = logging.getLogger(__name__)

_VERBATIM = re.compile(r"^[A-Za-z0-9_.-]+$")

RedisError = redis.RedisError


def encode_id(value: str) -> str:
    """Key-safe form of an id: verbatim when ``[A-Za-z0-9_.-]+``, else percent-encoded UTF-8."""
    if _VERBATIM.match(value):
        return value
    return quote(value, safe="")


def namespace_base(user_id: str) -> str:
    """Prefix of every key of one namespace, ending in ``:``: ``mc:{alice}:``."""
    return f"{settings.MEMORY_KEY_PREFIX}:{{{encode_id(user_id)}}}:"


def key(user_id: str, kind: str, *parts: str) -> str:
    """One key of a namespace: ``key("alice", "m", "mem_…")`` -> ``mc:{alice}:m:mem_…``."""
    tail = ":".join(encode_id(p) for p in parts)
    return f"{namespace_base(user_id)}{kind}" + (f":{tail}" if tail else "")


def global_key(kind: str) -> str:
    """A key outside every namespace (e.g. the set of namespaces); never used inside scripts."""
    return f"{settings.MEMORY_KEY_PREFIX}:{kind}"


@functools.cache
def _client(url: str, cluster: bool, decode: bool):
    if cluster:
        return redis.RedisCluster.from_url(url, decode_responses=decode)
    return redis.Redis.from_url(
        url, decode_responses=decode, socket_connect_timeout=2, socket_timeout=5,
        health_check_interval=30,
    )


def get_client():
    """The process-wide Redis client for ``REDIS_URL`` (a RedisCluster when REDIS_CLUSTER=1).

    ``MEMORY_REDIS_DECODE`` (default on) chooses ``decode_responses``; every reader in this
    package copes with both, through :func:`text`.
    """
    cluster = os.environ.get("REDIS_CLUSTER", "") in {"1", "true"}
    decode = getattr(settings, "MEMORY_REDIS_DECODE", True)
    return _client(settings.REDIS_URL, cluster, decode)


def text(value) -> str | None:
    """A Redis reply as ``str`` whether the client decodes responses or not."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode()
    return str(value)


def redis_available() -> bool:
    """True when Redis answers PING; logs and returns False otherwise (never raises)."""
    try:
        return bool(get_client().ping())
    except RedisError as exc:
        log.warning("redis unavailable: %s", type(exc).__name__)
        return False
