"""No measured figure in a production comment or docstring: figures go stale as the code
and the machine change. They live in bench/results/ and docs/benchmarks.md; a comment says
why, and may point there. Pure and fast: reads the source files only.
"""

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("accounts", "api", "console", "integrations", "lab", "memories", "memory_console",
            "operations", "search", "sessions")
FIGURE = re.compile(r"\d+(?:\.\d+)? ?(?:ms|µs|KB|MB|GB)\b")
# Not measurements: settings, budgets and other programs' documented behaviour.
ALLOWED = {
    ("integrations/metrics/registry.py", "# Seconds: 1 ms .. 10 s"),
    ("memory_console/backends/sqlite3/base.py", "sleeps 1, 2, 5, 10, 15, 20, 25 ... 100 ms"),
    ("memory_console/backends/sqlite3/base.py", "to 1 ms (:data:`POLL_FIRST`, :data:`POLL_MAX`)"),
    ("memory_console/backends/sqlite3/base.py", "whose sleeps grow to 100 ms"),
    ("memory_console/settings.py", "DATA_UPLOAD_MAX_MEMORY_SIZE, 2.5 MB"),
    ("search/serving/feed.py", "the 5 ms any command of a recall may take"),
}


def comments_and_docstrings(source: str):
    """``(line number, text)`` of every comment and every string that stands as a statement."""
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
        elif token.type == tokenize.STRING and previous in (
                tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT):
            for offset, line in enumerate(token.string.splitlines()):
                yield token.start[0] + offset, line
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token.type


def figures_in(path: Path) -> list[str]:
    relative = path.relative_to(ROOT).as_posix()
    found = []
    for number, text in comments_and_docstrings(path.read_text(encoding="utf-8")):
        if FIGURE.search(text) and not any(relative == allowed_path and fragment in text
                                           for allowed_path, fragment in ALLOWED):
            found.append(f"{relative}:{number}: {text.strip()}")
    return found


def test_production_comments_and_docstrings_quote_no_measured_figure():
    found = [hit for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
             for hit in figures_in(path)]
    assert found == [], "move these figures to bench/results/ (docs/benchmarks.md):\n" + \
        "\n".join(found)


def test_production_code_points_to_no_bench_readme_section():
    """bench/README.md says how to run the benches; the figures are in docs/benchmarks.md."""
    found = [f"{path.relative_to(ROOT)}" for package in PACKAGES
             for path in sorted((ROOT / package).rglob("*.py"))
             if "bench/README" in path.read_text(encoding="utf-8")]
    assert found == []


def test_it_finds_a_figure_in_a_comment_and_a_docstring_but_not_in_code(tmp_path):
    source = ('"""Loads in 3.4 ms."""\n'
              'TIMEOUT = "5 ms"  # took 12 MB here\n'
              'def f():\n    """No figure."""\n    return "1 GB"\n')
    found = [text for _, text in comments_and_docstrings(source) if FIGURE.search(text)]
    assert found == ['"""Loads in 3.4 ms."""', "# took 12 MB here"]
