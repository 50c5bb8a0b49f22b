"""Redis SLOWLOG over a phase of a benchmark: the longest command touching its keys."""


class SlowLog:
    """The longest Redis command touching this run's keys while it is open (ms).

    Opening sets ``slowlog-log-slower-than`` to 500 µs and ``slowlog-max-len`` to 4,096 and
    resets the log; ``close()`` restores both settings and returns ``(longest_ms,
    [(ms, command excerpt), ...])`` for the three longest entries whose command names a key
    holding ``prefix``.
    """

    def __init__(self, client, prefix):
        self.client, self.prefix = client, prefix
        self.saved = {k: client.config_get(k)[k] for k in
                      ("slowlog-log-slower-than", "slowlog-max-len")}
        client.config_set("slowlog-log-slower-than", 500)
        client.config_set("slowlog-max-len", 4096)
        client.slowlog_reset()

    def close(self):
        entries = self.client.slowlog_get(4096)
        for k, v in self.saved.items():
            self.client.config_set(k, v)
        ours = [e for e in entries if self.prefix in str(e.get("command", b""))]
        ours.sort(key=lambda e: -e["duration"])
        return (ours[0]["duration"] / 1000 if ours else 0.0), [
            (e["duration"] / 1000, str(e["command"])[:120]) for e in ours[:3]]
