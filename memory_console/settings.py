"""Settings, all read from the environment (see docs/configuration.md).

Small strict helpers (``memory_console.env``) turn bad values into ImproperlyConfigured at
start-up instead of surprises at run time.
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memory_console.env import env_bool, env_int, env_list

BASE_DIR = Path(__file__).resolve().parent.parent


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
_SECRET_KEY_FILE = Path(os.environ.get("SECRET_KEY_FILE", BASE_DIR / "var" / "secret_key"))
if not SECRET_KEY and _SECRET_KEY_FILE.is_file():
    # The key scripts/run generated, so manage.py commands work beside it without exports.
    SECRET_KEY = _SECRET_KEY_FILE.read_text().strip()
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "dev-only-insecure-key-set-SECRET_KEY-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "simple_history",
    "django_rq",
    "ninja",
    "axes",
    "memories",
    "search",
    "sessions",
    "lab",
    "recalls",
    "operations",
    "accounts",
    "console",
    "integrations",
]

MIDDLEWARE = [
    "memory_console.middleware.ApiJsonErrorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every response (django-csp; CONTENT_SECURITY_POLICY below).
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Times every request that reaches a view (static files, answered above, are not).
    "integrations.metrics.middleware.RequestMetricsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "memory_console.middleware.ConsoleLoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A page's Http404 answers the console's own 404 page, with DEBUG on too.
    "memory_console.middleware.ConsoleNotFoundMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Login rate limiting (django-axes): last, as its documentation asks.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Five failed logins for one username from one address lock it out for 15 minutes.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = env_int("AXES_COOLOFF_MINUTES", 15) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

ROOT_URLCONF = "memory_console.urls"
WSGI_APPLICATION = "memory_console.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context_processors.namespaces",
                "console.context_processors.role",
                "console.context_processors.open_conflicts",
            ],
        },
    },
]

# SQLite by default (zero set-up); PostgreSQL through DATABASE_URL.
(BASE_DIR / "var" / "staticfiles").mkdir(parents=True, exist_ok=True)
# Connections are kept (60 s by default) rather than opened per request: a connection per
# request (connecting, the init_command's PRAGMAs, SQLite reading the schema again for the
# first statement) was a large share of a single create's server CPU (bench/ingest.py,
# docs/benchmarks.md). The health check replaces a connection the server closed (a PostgreSQL
# restart) before a request uses it.
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'var' / 'db.sqlite3'}"),
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL + IMMEDIATE transactions + busy timeout: concurrent API writes wait for the
    # write lock instead of failing with "database is locked" (Django 5.1+ OPTIONS). The
    # backend hands the write lock from one writer to the next without SQLite's busy-handler
    # sleeps (memory_console/backends/sqlite3/base.py).
    DATABASES["default"]["ENGINE"] = "memory_console.backends.sqlite3"
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        # wal_autocheckpoint: a safety net; the backend checkpoints outside the write lock.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                        "PRAGMA wal_autocheckpoint=10000;",
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
CSRF_FAILURE_VIEW = "console.views.errors.csrf_failure"  # a small partial for HTMX requests
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Cookies: Django's default names; Secure outside DEBUG (plain http on localhost in dev).
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SESSION_COOKIE_HTTPONLY = True
# No script reads the CSRF cookie: htmx sends the token from the page (base.html hx-headers).
CSRF_COOKIE_HTTPONLY = True
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
# X-Forwarded-Proto is trusted only behind a declared proxy that sets it (and strips what
# clients send); otherwise any client could make a plain-http request look secure.
if env_bool("BEHIND_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Content-Security-Policy (django-csp): scripts only from our own static files (no inline
# script, no inline handler, no eval), nothing framed, forms post only here. Style
# attributes stay allowed (score bars and meters set their width inline); style elements
# and sheets come from our static files only.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}

# Redis: hot store, index, session windows, write stream. RQ may live elsewhere (Cluster).
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
RQ_REDIS_URL = os.environ.get("RQ_REDIS_URL", REDIS_URL)
MEMORY_KEY_PREFIX = os.environ.get("MEMORY_KEY_PREFIX", "mc")
MEMORY_MAX_CONTENT_CHARS = env_int("MEMORY_MAX_CONTENT_CHARS", 65536)
# The console's backup upload (API bodies are bounded by DATA_UPLOAD_MAX_MEMORY_SIZE, 2.5 MB).
MEMORY_IMPORT_MAX_BYTES = env_int("MEMORY_IMPORT_MAX_BYTES", 64 * 1024 * 1024)
MEMORY_SHORT_TERM_TTL_SECONDS = env_int("MEMORY_SHORT_TERM_TTL_SECONDS", 24 * 3600)
MEMORY_STREAM_MAXLEN = env_int("MEMORY_STREAM_MAXLEN", 10000)
# Hybrid profiles re-rank this many BM25 candidates (as a search engine's rescore window).
MEMORY_RERANK_WINDOW = env_int("MEMORY_RERANK_WINDOW", 100)
# Seconds between the worker's runs of the embedding job (semantic rescoring); 0 = never.
MEMORY_EMBED_EVERY_SECONDS = env_int("MEMORY_EMBED_EVERY_SECONDS", 10)
# Recall from the per-process serving index (search/serving), within this memory budget.
MEMORY_SERVING_BUDGET_MB = env_int("MEMORY_SERVING_BUDGET_MB", 512)
# Seconds between the worker's refreshes of the serving index snapshots kept in Redis for
# any process to load (search/serving/snapshot_refresh.py); 0 = never (a background build
# still saves one).
MEMORY_SERVING_SNAPSHOT_EVERY_SECONDS = env_int("MEMORY_SERVING_SNAPSHOT_EVERY_SECONDS", 300)
# Seconds a recall waits for its namespace's index while this process loads or builds it
# in the background (a large namespace's first recall); past them it answers 503.
MEMORY_SERVING_WAIT_SECONDS = float(os.environ.get("MEMORY_SERVING_WAIT_SECONDS", "10"))
# A session window longer than this is folded into its rolling summary (half is kept).
MEMORY_SESSION_FOLD_AT = env_int("MEMORY_SESSION_FOLD_AT", 200)
# ... or when its estimated tokens (characters / 4) pass this budget.
MEMORY_SESSION_FOLD_TOKENS = env_int("MEMORY_SESSION_FOLD_TOKENS", 8000)
# Forgetting policy (operations/policy.py).
MEMORY_POLICY_IDLE_DAYS = env_int("MEMORY_POLICY_IDLE_DAYS", 90)
MEMORY_POLICY_IMPORTANCE_BELOW = float(os.environ.get("MEMORY_POLICY_IMPORTANCE_BELOW", "0.3"))
MEMORY_POLICY_MAX_LONG_TERM = env_int("MEMORY_POLICY_MAX_LONG_TERM", 10000)
# The Policy page computes the consolidation dry run on the request only up to this many live
# long-term memories in the namespace; above, a job computes it (operations.plan_cache).
MEMORY_POLICY_INLINE_MAX = env_int("MEMORY_POLICY_INLINE_MAX", 1000)
# Consolidation (operations/consolidate.py): a group's least similar pair scores at least the
# threshold (0..1), and a group holds at most this many memories (2..50).
MEMORY_CONSOLIDATION_THRESHOLD = float(os.environ.get("MEMORY_CONSOLIDATION_THRESHOLD", "0.65"))
MEMORY_CONSOLIDATION_MAX_MEMBERS = env_int("MEMORY_CONSOLIDATION_MAX_MEMBERS", 8)
# The scheduler repairs drift (e.g. writes made while Redis was down) this often.
MEMORY_RECONCILE_EVERY_SECONDS = env_int("MEMORY_RECONCILE_EVERY_SECONDS", 300)
# Per-process cache of tokens and profiles, invalidated at once through Redis; a backstop TTL.
MEMORY_ROW_CACHE_SECONDS = env_int("MEMORY_ROW_CACHE_SECONDS", 60)
# Each process watches the cache's generation (memories/generation_watch.py) and still reads
# it this often (seconds; 0 = every request): the bound on staleness if the watch breaks unseen.
MEMORY_ROW_CACHE_VERIFY_SECONDS = float(os.environ.get("MEMORY_ROW_CACHE_VERIFY_SECONDS", "1"))
# Recall hits are counted in Redis and folded into the database this often (memories.access).
MEMORY_ACCESS_FOLD_SECONDS = env_int("MEMORY_ACCESS_FOLD_SECONDS", 30)
# The recall log (recalls/log.py): the share of recalls traced (0..1; 0 turns it off), the
# days a trace is kept, whether query text is dropped, and how often the worker moves the
# buffered traces from Redis into the database (reading the log moves them too). At most
# MEMORY_RECALL_LOG_BUFFER traces wait in Redis; beyond, the oldest are dropped and counted.
MEMORY_RECALL_LOG_SAMPLE = float(os.environ.get("MEMORY_RECALL_LOG_SAMPLE", "1"))
MEMORY_RECALL_LOG_DAYS = env_int("MEMORY_RECALL_LOG_DAYS", 30)
MEMORY_RECALL_LOG_REDACT_QUERY = env_bool("MEMORY_RECALL_LOG_REDACT_QUERY", False)
MEMORY_RECALL_LOG_FLUSH_SECONDS = env_int("MEMORY_RECALL_LOG_FLUSH_SECONDS", 10)
MEMORY_RECALL_LOG_BUFFER = env_int("MEMORY_RECALL_LOG_BUFFER", 100000)
# GET /index/health and the Index page serve drift computed at most this often (seconds);
# every reindex and reconcile recomputes it (operations/drift_cache.py).
MEMORY_DRIFT_CACHE_SECONDS = env_int("MEMORY_DRIFT_CACHE_SECONDS", 60)
# The time one evaluation (POST /evaluate, a lab run) may search for before it stops with a
# 413: how long such a request holds its worker thread, plus the one search under way
# (lab.evaluation.Deadline).
MEMORY_EVALUATION_SECONDS = env_int("MEMORY_EVALUATION_SECONDS", 15)
# At most this many evaluations run at once across every process; another answers 429.
MEMORY_EVALUATIONS_AT_ONCE = env_int("MEMORY_EVALUATIONS_AT_ONCE", 2)
# An optional language model for summaries and extraction (sessions/formation/llm.py): the
# base URL of an OpenAI-compatible API ending in /v1 (empty: none, the local methods answer),
# the model's name, its key, and the seconds one call may take, retries included.
MEMORY_LLM_URL = os.environ.get("MEMORY_LLM_URL", "")
MEMORY_LLM_MODEL = os.environ.get("MEMORY_LLM_MODEL", "")
MEMORY_LLM_API_KEY = os.environ.get("MEMORY_LLM_API_KEY", "")
MEMORY_LLM_TIMEOUT = float(os.environ.get("MEMORY_LLM_TIMEOUT", "20"))
# Each fold of a session also writes the memories drawn from its folded messages (a job on
# the default queue: sessions.jobs.session_extract_job). Off by default.
MEMORY_EXTRACT_ON_FOLD = env_bool("MEMORY_EXTRACT_ON_FOLD", False)
# Supersession proposals on every write (memories/services/conflicts.py): off | propose |
# apply; apply also accepts proposals of at least this confidence (0..1).
MEMORY_SUPERSESSION = os.environ.get("MEMORY_SUPERSESSION", "propose")
if MEMORY_SUPERSESSION not in ("off", "propose", "apply"):
    raise ImproperlyConfigured("MEMORY_SUPERSESSION must be off, propose or apply")
MEMORY_SUPERSESSION_APPLY_AT = float(os.environ.get("MEMORY_SUPERSESSION_APPLY_AT", "0.9"))
# A reindex's claim on its namespace lives this long after its last heartbeat (one per
# batch of MEMORY_REINDEX_BATCH memories); a retry takes a stale claim over.
MEMORY_REINDEX_CLAIM_SECONDS = env_int("MEMORY_REINDEX_CLAIM_SECONDS", 60)
MEMORY_REINDEX_BATCH = env_int("MEMORY_REINDEX_BATCH", 1000)
# The worker checks this often that the periodic jobs are scheduled (operations/worker.py).
MEMORY_WORKER_MAINTENANCE_SECONDS = env_int("MEMORY_WORKER_MAINTENANCE_SECONDS", 60)
# Webhooks (integrations/webhooks): endpoints on loopback, private or link-local addresses are
# refused unless this is set; attempts per delivery; the first retry's delay in seconds (each
# next one waits 4 times longer, at most 6 h); seconds one attempt may take.
WEBHOOKS_ALLOW_PRIVATE = env_bool("WEBHOOKS_ALLOW_PRIVATE", False)
WEBHOOKS_MAX_ATTEMPTS = env_int("WEBHOOKS_MAX_ATTEMPTS", 8)
WEBHOOKS_RETRY_BASE_SECONDS = env_int("WEBHOOKS_RETRY_BASE_SECONDS", 10)
WEBHOOKS_TIMEOUT_SECONDS = env_int("WEBHOOKS_TIMEOUT_SECONDS", 10)
if not 1 <= MEMORY_MAX_CONTENT_CHARS <= 131071:
    # Postings encode document lengths in 17 bits (search/index/lua/put.lua).
    raise ImproperlyConfigured("MEMORY_MAX_CONTENT_CHARS must be 1..131071")

# The job queues by their logical name (what the code asks for: memories/queue.py) and the RQ
# queue each one is: the same name, after MEMORY_QUEUE_PREFIX when one is set (none in
# production; a test run sets its key prefix, so two runs sharing a Redis never share a queue).
MEMORY_QUEUE_PREFIX = os.environ.get("MEMORY_QUEUE_PREFIX", "")
JOB_QUEUES = {name: MEMORY_QUEUE_PREFIX + name for name in ("default", "index")}
RQ_QUEUES = {
    JOB_QUEUES["default"]: {"URL": RQ_REDIS_URL, "DEFAULT_TIMEOUT": 3600},
    JOB_QUEUES["index"]: {"URL": RQ_REDIS_URL, "DEFAULT_TIMEOUT": 3600},
}
# The worker times every job for /metrics (integrations/metrics/worker.py) and schedules the
# periodic jobs again when Redis lost them (operations/worker.py): memory_console/worker.py.
RQ = {"WORKER_CLASS": "memory_console.worker.ProductWorker"}

# /metrics: readable with any viewer-or-above API token, or from these addresses or networks
# (comma-separated; none by default: behind a local reverse proxy everything is loopback).
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS", "")
# Multiprocess metric directories merged into /metrics besides PROMETHEUS_MULTIPROC_DIR
# (gunicorn's, see memory_console/gunicorn_conf.py): the worker's, as scripts/run sets it.
METRICS_EXTRA_DIRS = env_list("METRICS_EXTRA_DIRS", str(BASE_DIR / "var" / "metrics" / "worker"))
# prometheus-client fails on a multiprocess directory that does not exist, and any process
# started with the variable writes there (compose runs migrate with the web's before gunicorn
# makes it); settings load before any metric is created (django-rq makes one at import).
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)

# Traces (integrations/tracing/setup.py: on when OTEL_TRACES_EXPORTER names an exporter): the
# recall query on its search_memory span (gen_ai.memory.query.text) only when this is on.
MEMORY_TRACE_QUERY_TEXT = env_bool("MEMORY_TRACE_QUERY_TEXT", False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # A line logged inside a span ends with its trace_id and span_id (nothing otherwise).
    "filters": {"trace": {"()": "integrations.tracing.logs.TraceIdFilter"}},
    "formatters": {"plain": {"format": "%(message)s%(trace)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["trace"],
                             "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # Django's own logger would print every line twice (its handler + the root's).
    "loggers": {"jieba": {"level": "WARNING"},
                "django": {"handlers": ["console"], "level": "INFO", "propagate": False}},
}
