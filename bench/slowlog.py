"""Redis SLOWLOG over a phase of a benchmark: the longest command touching its keys."""

# Commands that only read: a recall's own (pipelined hashes, an index build's chunks).
READS = {"GET", "MGET", "HGET", "HGETALL", "HMGET", "SSCAN", "SMEMBERS", "SCARD", "XINFO",
         "XRANGE", "XREVRANGE", "XLEN", "ZSCORE", "ZMSCORE", "ZRANGE", "EXISTS", "TYPE"}


def recall_shas() -> set[str]:
    """SHA1s of the scripts a recall runs (``feed.lua``)."""
    from search.serving import feed

    return {feed._script().sha}


class SlowLog:
    """The longest Redis command touching this run's keys while it is open (ms).

    Opening sets ``slowlog-log-slower-than`` to 500 µs and ``slowlog-max-len`` to 4,096 and
    resets the log; ``close()`` restores both settings and returns ``(longest_ms,
    [(ms, command excerpt), ...])`` for the three longest entries whose command names a key
    holding ``prefix``. ``by_kind`` is then ``{"recall": ms, "write": ms}``: the longest
    command of a recall (a script in ``recall``, a SHA1 set, or a command that only reads)
    and the longest of the rest (writes: ``put.lua``, access folds, imports).
    """

    def __init__(self, client, prefix, recall: set[str] = frozenset()):
        self.client, self.prefix, self.recall = client, prefix, recall
        self.by_kind = {"recall": 0.0, "write": 0.0}
        self.saved = {k: client.config_get(k)[k] for k in
                      ("slowlog-log-slower-than", "slowlog-max-len")}
        client.config_set("slowlog-log-slower-than", 500)
        client.config_set("slowlog-max-len", 4096)
        client.slowlog_reset()

    def _kind(self, command: str) -> str:
        words = command.split(maxsplit=2)
        name = words[0].upper() if words else ""
        if name in ("EVALSHA", "EVALSHA_RO"):
            return "recall" if len(words) > 1 and words[1] in self.recall else "write"
        return "recall" if name in READS else "write"

    def close(self):
        entries = self.client.slowlog_get(4096)
        for k, v in self.saved.items():
            self.client.config_set(k, v)
        ours = []
        for e in entries:
            raw = e.get("command", b"")
            command = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
            if self.prefix in command:
                ours.append((e["duration"] / 1000, command))
        for ms, command in ours:
            kind = self._kind(command)
            self.by_kind[kind] = max(self.by_kind[kind], ms)
        ours.sort(key=lambda e: -e[0])
        return (ours[0][0] if ours else 0.0), [(ms, command[:120]) for ms, command in ours[:3]]


def every_command(client, run) -> list[tuple[float, str]]:
    """``run()`` with SLOWLOG logging every command (threshold 0, up to 100,000; both
    settings restored after): ``[(ms, command), ...]`` of what Redis ran meanwhile."""
    saved = {k: client.config_get(k)[k] for k in ("slowlog-log-slower-than", "slowlog-max-len")}
    client.config_set("slowlog-log-slower-than", 0)
    client.config_set("slowlog-max-len", 100_000)
    client.slowlog_reset()
    try:
        run()
        entries = client.slowlog_get(100_000)
    finally:
        for k, v in saved.items():
            client.config_set(k, v)
    out = []
    for e in entries:
        raw = e.get("command", b"")
        out.append((e["duration"] / 1000,
                    raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)))
    return out
