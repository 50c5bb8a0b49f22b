"""The process's serving indexes: one :class:`Served` per (namespace, field), kept in an LRU
within ``MEMORY_SERVING_BUDGET_MB`` (bytes counted as each index was last used), and the
counters of what the feed did (``search.serving.feed`` builds and catches the indexes up).

Thread-safe: the registry has its lock; each index has its own (``Served.lock``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from django.conf import settings

from memories import store
from search.serving.engine import FieldIndex


@dataclass
class Served:
    """A serving index and where it stands in the namespace's stream."""

    index: FieldIndex | None = None
    gen: str = ""
    format: str = ""
    last_id: str = "0-0"
    added: int = 0  # stream entries applied: the ordinal of last_id
    lock: threading.Lock = field(default_factory=threading.Lock)
    used: float = 0.0
    builds: int = 0
    thread: threading.Thread | None = None
    unverified: bool = False  # built, not yet checked against the statistics
    held: int = 0  # bytes of ``index`` as last counted into the process's total (_account)
    # Redis's (N, total_len) less the index's own, accepted when an index freshly built from
    # the documents differed from the statistics hash (the hash is off: drift, which
    # reconcile repairs). Later checks expect the same difference, so such a namespace is
    # rebuilt once, not at every recall; a changed difference is a new fault: rebuilt again.
    offset: tuple[int, int] = (0, 0)
    redis_counts: tuple[int, int] = (0, 0)  # (N, total_len) of the last reply applied

    def agrees(self, got: dict) -> bool:
        """True when a ``feed.lua`` reply's statistics match this index (and its offset)."""
        return (got["N"] - self.index.n_live,
                got["total_len"] - self.index.total_len) == self.offset


@dataclass
class Counters:
    builds: int = 0
    build_ms: float = 0.0
    applied: int = 0
    evictions: int = 0
    fast: int = 0  # searches answered in one round trip (nothing written since)
    # searches answered in one round trip that brought writes (applied, searched again)
    caught: int = 0
    loads: int = 0  # indexes loaded from a snapshot in Redis instead of built


_registry: OrderedDict[tuple[str, str], Served] = OrderedDict()
_registry_lock = threading.Lock()
# Bytes held by the registry's indexes: the sum of their ``held``, kept as they change, so a
# recall never walks every namespace the process holds (with many small namespaces,
# summing them on each recall cost more than the recall: docs/benchmarks.md, namespaces).
_held = {"bytes": 0}
counters = Counters()


def clear() -> None:
    """Drop every serving index of this process (tests; a later search rebuilds)."""
    with _registry_lock:
        _registry.clear()
        _held["bytes"] = 0


def entry(user_id: str, field_name: str) -> Served:
    key = (store.namespace_base(user_id), field_name)
    with _registry_lock:
        served = _registry.get(key)
        if served is None:
            served = _registry[key] = Served()
        _registry.move_to_end(key)
    return served


def budget_bytes() -> int:
    return int(getattr(settings, "MEMORY_SERVING_BUDGET_MB", 512)) * 1024 * 1024


def _account(served: Served) -> None:
    """Count ``served``'s index, as it is now, into the process's total (registry lock held).
    An index changes only while it is used (built, caught up), and each use ends here."""
    now = served.index.nbytes() if served.index is not None else 0
    _held["bytes"] += now - served.held
    served.held = now


def evict_for(user_id: str, field_name: str) -> None:
    """:func:`_evict` after a search that changed this field's index (its lock held)."""
    _evict((store.namespace_base(user_id), field_name))


def _evict(keep: tuple[str, str]) -> None:
    """Count the index just used, then drop least recently used ones until the process is
    within its budget: O(1) while within it, whatever the number of namespaces held."""
    limit = budget_bytes()
    with _registry_lock:
        kept = _registry.get(keep)
        if kept is not None:
            _account(kept)
        if _held["bytes"] <= limit:
            return
        for key in list(_registry):
            if _held["bytes"] <= limit:
                break
            served = _registry[key]
            if key == keep or served.index is None or served.lock.locked():
                continue
            _held["bytes"] -= served.held
            del _registry[key]
            counters.evictions += 1


def held_bytes() -> int:
    """Bytes held by this process's serving indexes (approximate: each as of its last use)."""
    with _registry_lock:
        return _held["bytes"]
