"""OpenTelemetry traces: the process's set-up from the ``OTEL_*`` variables (``setup``), trace
ids on log records (``logs``) and the job worker's spans (``worker``). The memory operations'
own spans are made by ``memories.tracing``."""
