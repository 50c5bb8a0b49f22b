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
        try:
            return redis.RedisCluster.from_url(url, decode_responses=decode,
                                               socket_connect_timeout=2, socket_timeout=5)
        except redis.exceptions.RedisClusterException as exc:
            # Not a RedisError: callers that survive a Redis outage would not catch it.
            raise redis.ConnectionError(str(exc)) from exc
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


OutOfMemoryError = redis.exceptions.OutOfMemoryError


def refuses_writes(client) -> bool:
    """Whether Redis refuses writes for memory (maxmemory reached under ``noeviction``):
    a one-second probe key is written, as INFO's figures hover around the limit. Raises
    other RedisErrors."""
    try:
        client.set(global_key("probe:full"), "1", px=1000)
    except OutOfMemoryError:
        return True
    return False


def redis_state() -> str:
    """``"ok"``, ``"full"`` (answers, but refuses writes for memory) or ``"down"``; logs and
    never raises."""
    if not redis_available():
        return "down"
    try:
        return "full" if refuses_writes(get_client()) else "ok"
    except RedisError as exc:
        log.warning("redis unavailable: %s", type(exc).__name__)
        return "down"


def is_cluster(client) -> bool:
    return isinstance(client, redis.RedisCluster)


def mget(client, keys: list[str]) -> list:
    """MGET of keys that may live in different slots (one namespace each)."""
    return client.mget_nonatomic(keys) if is_cluster(client) else client.mget(keys)


class NamespacePipelines:
    """Pipelines for commands on namespace keys, Lua scripts included.

    On a standalone Redis: one pipeline for everything. On a cluster: one per node, chosen by
    the namespace's hash tag (every key of a namespace is in one slot), because redis-py's
    ``ClusterPipeline`` refuses EVAL/EVALSHA. ``transaction=True`` wraps each in MULTI/EXEC,
    valid for commands of a single namespace.
    """

    def __init__(self, client, *, transaction: bool = False):
        self.client = client
        self.transaction = transaction
        self._pipes: dict = {}

    def for_namespace(self, user_id: str):
        if not is_cluster(self.client):
            name, make = None, self.client.pipeline
        else:
            node = self.client.get_node_from_key(namespace_base(user_id))
            name, make = node.name, self.client.get_redis_connection(node).pipeline
        if name not in self._pipes:
            self._pipes[name] = make(transaction=self.transaction)
        return self._pipes[name]

    def execute(self) -> list:
        return [pipe.execute() for pipe in self._pipes.values()]
