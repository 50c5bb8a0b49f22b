"""Prometheus metrics: the named metrics (``registry``), request timing (``middleware``),
job timing (``worker``), write counting (``receivers``), ``/metrics`` (``views``)."""
