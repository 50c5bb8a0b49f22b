"""The TypeScript client (clients/typescript): its types match the server's OpenAPI document,
and ``npm ci && npm run build && npm test`` passes against a live server (pytest-django's, on
this run's test database and Redis prefix) with an admin and a viewer token made by
``create_api_token``. Node's own test runner runs the tests; its output is shown on failure.

Run here rather than as a pass of its own in scripts/test: the server, the database, Redis
and the tokens are the suite's fixtures already, and it runs wherever pytest does.
"""

import fcntl
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from ninja.responses import NinjaJSONEncoder

from api.v1 import api

PACKAGE = Path(settings.BASE_DIR) / "clients" / "typescript"
REGENERATE = "regenerate them: cd clients/typescript && npm run gen"


def _token(username: str, role: str) -> str:
    out = io.StringIO()
    call_command("create_api_token", username, "--role", role, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


def _npm(*args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["npm", *args], cwd=PACKAGE, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _shown(step: str, run: subprocess.CompletedProcess) -> str:
    return f"{step} exited {run.returncode}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"


def test_it_ships_the_servers_current_openapi_document():
    """The committed document is the one the server serves (the types are made from it)."""
    served = json.loads(json.dumps(api.get_openapi_schema(), cls=NinjaJSONEncoder))
    committed = json.loads((PACKAGE / "openapi.json").read_text())
    assert committed == served, f"clients/typescript/openapi.json is stale: {REGENERATE}"


def test_it_builds_and_passes_its_node_tests_against_a_live_server(live_server, builtins):
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.fail("node and npm are needed (Debian: apt-get install nodejs npm; "
                    "scripts/test installs them when it runs as root)")
    env = {**os.environ, "MC_URL": live_server.url, "MC_TOKEN": _token("ts-admin", "admin"),
           "MC_VIEWER_TOKEN": _token("ts-viewer", "viewer"), "NO_COLOR": "1"}
    lock_path = Path(settings.BASE_DIR) / "var" / "typescript-client.lock"
    lock_path.parent.mkdir(exist_ok=True)
    # One npm ci at a time in the package folder (it replaces node_modules).
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ci = _npm("ci", "--no-audit", "--no-fund")
        assert ci.returncode == 0, _shown("npm ci", ci)
        generated = subprocess.run(
            ["npx", "openapi-typescript", "openapi.json"], cwd=PACKAGE, capture_output=True,
            text=True, timeout=120)
        assert generated.returncode == 0, _shown("openapi-typescript", generated)
        assert generated.stdout == (PACKAGE / "src" / "schema.ts").read_text(), (
            f"clients/typescript/src/schema.ts is not openapi.json's types: {REGENERATE}")
        build = _npm("run", "build")
        assert build.returncode == 0, _shown("npm run build", build)
        entry = json.loads((PACKAGE / "package.json").read_text())["exports"]["."]["import"]
        assert (PACKAGE / entry).is_file(), f"npm run build did not make {entry}"
        tests = _npm("test", env=env)
    assert tests.returncode == 0, _shown("npm test", tests)
    print(tests.stdout)
