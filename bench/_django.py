"""Django set-up shared by the benchmarks: a throw-away SQLite file under var/bench/ and a
Redis key prefix of the run's own, both removed at the end."""

import atexit
import os
import sys
from pathlib import Path

import memory_console  # noqa: F401  (holds NumPy's BLAS to one thread before NumPy loads)

ROOT = Path(__file__).resolve().parent.parent


def setup(name: str) -> None:
    """Configure Django for benchmark ``name`` and migrate a fresh database."""
    sys.path.insert(0, str(ROOT))
    db = ROOT / "var" / "bench" / f"{name}-{os.getpid()}.sqlite3"
    db.parent.mkdir(parents=True, exist_ok=True)
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"  # never the shell's database
    os.environ["MEMORY_KEY_PREFIX"] = f"mcbench-{name}-{os.getpid()}"
    # Its own Redis database, never the test suite's (which refuses foreign keys).
    os.environ.setdefault("REDIS_URL", os.environ.get("BENCH_REDIS_URL",
                                                      "redis://127.0.0.1:6379/10"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings_test")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    atexit.register(_cleanup, db)


def _cleanup(db: Path) -> None:
    from django.conf import settings

    from memories import store

    client = store.get_client()
    batch = []
    for key in client.scan_iter(match=f"{settings.MEMORY_KEY_PREFIX}:*", count=5000):
        batch.append(key)
        if len(batch) >= 5000:
            client.delete(*batch)
            batch = []
    if batch:
        client.delete(*batch)
    for suffix in ("", "-wal", "-shm", ".writelock"):
        Path(str(db) + suffix).unlink(missing_ok=True)
