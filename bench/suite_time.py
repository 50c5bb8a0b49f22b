"""Where the test suite's time goes: per file and per phase (setup, call, teardown).

    python bench/suite_time.py --label after -- tests/test_api.py tests/test_search.py
    python bench/suite_time.py --label before --checkout /tmp/old -- tests/test_api.py
    python bench/suite_time.py --label before --log scripts-test.log

The first forms run pytest in one process (``--durations=0 -vv``) on the given arguments, in
this checkout or another one (an older commit, to compare the same selection back to back);
the second reads the output of ``scripts/test --durations=0`` (every pass) instead, and the
time of each pass from its last line. Either writes one run file (bench/results_io.py).

A ``django_db(transaction=True)`` test empties every table after it (a flush, in its
teardown); a test in a transaction rolls back instead. The teardown column is therefore
where a flush shows.
"""

import argparse
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import results_io  # noqa: E402  (records the load before the run)

ROOT = Path(__file__).resolve().parent.parent
DURATION = re.compile(r"^([0-9.]+)s (setup|call|teardown)\s+(\S+?\.py)::")
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|deselected)")
PASSES = re.compile(r"^times: (.*)$")
TOP_FILES = 25


def run_pytest(checkout: Path, args: list[str]) -> str:
    """Run pytest in one process in ``checkout`` and return its output."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", "--durations=0",
               "-vv", *args]
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
    return done.stdout + done.stderr


def commit_of(checkout: Path) -> tuple[str, bool]:
    """The checkout's commit and whether its tracked files have changes."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=checkout, capture_output=True,
                              text=True).stdout.strip()
    return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--untracked-files=no"))


def parse(output: str) -> dict:
    """Per file and phase seconds, the test counts and the passes' times."""
    by_file = defaultdict(lambda: {"setup": 0.0, "call": 0.0, "teardown": 0.0})
    for line in output.splitlines():
        match = DURATION.match(line)
        if match:
            seconds, phase, path = float(match[1]), match[2], match[3]
            by_file[path][phase] += seconds
    counts = {}
    passes = ""
    for line in output.splitlines():
        if PASSES.match(line):
            passes = PASSES.match(line)[1]
        if line.startswith("=") and " in " in line:
            for number, kind in SUMMARY.findall(line):
                counts[kind] = counts.get(kind, 0) + int(number)
    return {"files": by_file, "counts": counts, "passes": passes}


def figures(parsed: dict) -> list[dict]:
    files = parsed["files"]
    totals = {phase: round(sum(f[phase] for f in files.values()), 1)
              for phase in ("setup", "call", "teardown")}
    tables = [results_io.table("Seconds by phase, summed over the tests (every pass)",
                               ["setup", "call", "teardown", "total"],
                               [[*totals.values(), round(sum(totals.values()), 1)]])]
    if parsed["passes"]:
        rows = [entry.strip().split(" ", 1) for entry in parsed["passes"].split(";")
                if entry.strip()]
        tables.append(results_io.table("Time of each part of scripts/test (its last line)",
                                       ["part", "time"], rows))
    ranked = sorted(files.items(), key=lambda item: -sum(item[1][p] for p in
                                                          ("setup", "call", "teardown")))
    rows = [[path, round(f["setup"], 1), round(f["call"], 1), round(f["teardown"], 1),
             round(f["setup"] + f["call"] + f["teardown"], 1)] for path, f in ranked[:TOP_FILES]]
    tables.append(results_io.table(f"The {TOP_FILES} slowest files (seconds, every pass)",
                                   ["file", "setup", "call", "teardown", "total"], rows))
    if parsed["counts"]:
        tables.append(results_io.table_from_mapping("Tests", parsed["counts"]))
    return tables


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="before / after / what changed")
    parser.add_argument("--log", help="the output of scripts/test --durations=0 to read")
    parser.add_argument("--checkout", type=Path, default=ROOT,
                        help="the checkout to run pytest in (default: this one)")
    parser.add_argument("--notes", default="")
    parser.add_argument("--commit", help="with --log: the commit that run tested")
    parser.add_argument("--load", help="with --log: the load average during that run (text)")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    started = time.monotonic()
    output = Path(args.log).read_text() if args.log else run_pytest(args.checkout,
                                                                     args.pytest_args)
    wall = round(time.monotonic() - started, 1)
    parsed = parse(output)
    if not parsed["files"]:
        print(output[-3000:], file=sys.stderr)
        print("no durations found", file=sys.stderr)
        return 1
    if args.log:
        source, commit = "a scripts/test log", (args.commit, False) if args.commit else None
        load = {"before": None, "after": None, "reported": args.load} if args.load else None
    else:
        source, commit, load = "pytest in one process", commit_of(args.checkout), None
    tables = figures(parsed)
    if not args.log:
        tables.append(results_io.table("Wall time of the pytest run", ["seconds"], [[wall]]))
    results_io.write_run("test_suite", title=f"Test suite time, {args.label} ({source})",
                         params={"label": args.label, "source": source,
                                 "pytest_args": " ".join(args.pytest_args)},
                         figures=tables, notes=args.notes, commit=commit, load=load)
    return 0


if __name__ == "__main__":
    sys.exit(main())
