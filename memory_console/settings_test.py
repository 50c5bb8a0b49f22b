"""Settings for the test suite: the real settings, a DEBUG default and a Redis key prefix
of this run's own, so concurrent runs never share Redis state (tests/conftest.py cleans it)."""

import os
import uuid

os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("REDIS_URL", os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/9"))
os.environ.setdefault("MEMORY_KEY_PREFIX", f"mctest-{uuid.uuid4().hex[:10]}")

from memory_console.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast test logins
