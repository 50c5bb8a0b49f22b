"""One JSON file per benchmark run, written into ``bench/results/``.

Every bench script imports this module before it does any work and, once it has its figures,
calls :func:`write_run`. The file ``<bench>-<UTC date-time>.json`` holds what a reader needs to
judge the figures later: the commit (and whether the tree was dirty), the date, the machine,
the load average before and after the run, the script's parameters and the figures as
tables. ``bench/report.py`` turns these files into ``docs/benchmarks.md``.

A figure without its machine and load is misleading on a shared 2-core machine, which is
why no figure is quoted anywhere else: comments, the README and the docs link here.
"""

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
REQUIRED_KEYS = ("bench", "title", "commit", "dirty", "date", "machine", "load", "params",
                 "figures")


def _load() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


# Bench scripts import this module first thing, so this is the load before the run.
LOAD_BEFORE = _load()


def table(title: str, columns: list[str], rows: list[list]) -> dict:
    """One table of figures: a title, its column names and rows of cells."""
    return {"title": title, "columns": list(columns), "rows": [list(r) for r in rows]}


def table_from_mapping(title: str, mapping: dict) -> dict:
    """A two-column table (figure, value) from a dict; nested dicts and lists of them give
    dotted names (``http.natural.p50_ms``, ``runs.0.start_s``)."""
    rows = []

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict | list) and any(isinstance(v, dict | list) for v in
                                                  (value.values() if isinstance(value, dict)
                                                   else value)):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, inner in items:
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, dict):
            for key, inner in value.items():
                rows.append([f"{prefix}.{key}" if prefix else str(key), inner])
        else:
            rows.append([prefix, value])

    walk("", mapping)
    return table(title, ["figure", "value"], rows)


def number(text: str):
    """A Markdown cell as a number when it is one ("1,345" and "**0.803**" too), else the text."""
    plain = text.strip().replace("**", "")
    try:
        return int(plain.replace(",", "")) if plain.replace(",", "").lstrip("-").isdigit() \
            else float(plain)
    except ValueError:
        return plain


def tables_from_markdown(lines: list[str]) -> list[dict]:
    """The Markdown tables among ``lines`` (a report a script prints), each titled by the
    heading or the line of text before it."""
    tables, current, title = [], None, ""
    for line in lines:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is None:
                current = table(title, [c.replace("**", "") for c in cells], [])
                tables.append(current)
            elif not all(set(c) <= set(":-") for c in cells):
                width = len(current["columns"])
                row = [number(c) if c else None for c in cells][:width]
                current["rows"].append(row + [None] * (width - len(row)))
        else:
            current = None
            if line.strip():
                title = line.lstrip("#").strip()
    return tables


def write_headline(bench: str, *, title: str, params: dict, headline: dict) -> dict:
    """Write a run whose figures are a script's headline dict (its last line of output), and
    return that dict."""
    write_run(bench, title=title, params=params,
              figures=[table_from_mapping("Headline figures", headline)])
    return headline


def git_commit() -> tuple[str | None, bool | None]:
    """The checked-out commit and whether the working tree has changes (None, None outside git)."""
    root = RESULTS.parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=root, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return head, bool(status.strip())


def machine() -> dict:
    """Cores, CPU model, memory, and the platform."""
    model = platform.processor() or None
    memory_mb = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    memory_mb = int(line.split()[1]) // 1024
                    break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": model, "memory_mb": memory_mb,
            "platform": platform.platform(), "python": platform.python_version()}


def write_run(bench: str, *, title: str, params: dict, figures: list[dict],
              notes: str = "", directory: Path = RESULTS,
              commit: tuple[str | None, bool | None] | None = None,
              load: dict | None = None) -> Path:
    """Write one run of ``bench`` and return the file's path.

    ``figures`` is a list of :func:`table` dicts; ``params`` the script's options (for
    argparse, ``vars(args)``). Values must be JSON-serialisable. A script that measured
    another checkout, or read a log of an earlier run, passes that run's ``commit`` (sha,
    dirty) and ``load`` (``{"before": ..., "after": ..., "reported": "..."}``) instead of
    this checkout's and this moment's.
    """
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    commit, dirty = commit or git_commit()
    run = {
        "bench": bench,
        "title": title,
        "commit": commit,
        "dirty": dirty,
        "date": now.isoformat().replace("+00:00", "Z"),
        "machine": machine(),
        "load": load or {"before": LOAD_BEFORE, "after": _load()},
        "params": params,
        "figures": figures,
    }
    if notes:
        run["notes"] = notes
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{bench}-{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    path.write_text(json.dumps(run, indent=1, ensure_ascii=False, default=str) + "\n")
    print(f"results: {path}", file=sys.stderr, flush=True)
    return path
