"""House rules of the code's shape: no production module over ``MAX_LINES`` lines, and no two
production modules with one name for different ideas (``search.metrics`` beside
``integrations.metrics`` made a newcomer read both to learn which one ranks).

Pure and fast: lists and counts the source files only. Production code is the Django
packages and the Python client's ``src``; migrations are generated, so they are left out.
"""

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("accounts", "api", "console", "integrations", "lab", "memories", "memory_console",
            "operations", "recalls", "search", "sessions", "clients/python/src")
MAX_LINES = 400

# Names that say which part of a capability a module is, not which idea: every app may have one.
CONVENTIONS = {
    "__init__", "__main__", "admin", "api", "api_schemas", "apps", "forms", "jobs",
    "commands", "management", "middleware", "models", "selectors", "services", "signals", "tests", "urls",
    "views",
    # The app's duty mixed into the RQ worker the product runs (``memory_console.worker``).
    "worker",
    # The app's Redis store, a write-through cache of its rows (``cached_db`` in Django).
    "store",
}
# A module in one of these packages is named after the idea it serves in that layer:
# ``lab/views/judgments.py`` shows what ``lab/judgments.py`` writes, ``api/memories.py`` routes
# the ``memories`` app, ``management/commands/reindex.py`` runs ``operations/reindex.py``.
LAYERS = ("views", "services", "commands")
LAYER_PACKAGES = ("api",)
# One name, several modules, and why that is one idea; the modules listed, so that a new one
# of the name has to give its reason too.
ALLOWED = {
    "errors": ({"memories/errors.py", "clients/python/src/memory_console_client/errors.py"},
               "the API's error body on each side of the wire: the domain errors that the API "
               "answers with, and the client's exceptions that carry it"),
    "prompts": ({"integrations/mcp/prompts.py", "sessions/formation/prompts.py"},
                "text for a language model: MCP's prompts are offered to the client's model, "
                "formation's are sent to the summarising model"),
    "evaluation": ({"lab/evaluation.py", "memories/supersession/evaluation.py"},
                   "scores of a model's answers against labelled data: the ranking's on judged "
                   "queries, the supersession detector's on labelled histories"),
    "tracing": ({"memories/tracing.py", "integrations/tracing/__init__.py"},
                "OpenTelemetry tracing: the spans of memory operations, and the SDK's set-up "
                "and export that carries them"),
}


def production_modules():
    """Every production ``.py`` file, as a path relative to the repository root (``str``)."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if "migrations" in relative.parts or "__pycache__" in relative.parts:
                continue
            yield relative


def module_name(relative: Path) -> str:
    """The name a module is imported by: the file's stem, or its folder's for a package."""
    return relative.parent.name if relative.stem == "__init__" else relative.stem


def in_a_layer(relative: Path) -> bool:
    """Whether the module (not a package's ``__init__``) sits in a layer package."""
    folders = relative.parts[:-1]
    if relative.stem == "__init__":
        folders = folders[:-1]
    return bool(folders) and (folders[-1] in LAYERS or folders[0] in LAYER_PACKAGES)


def test_no_production_module_is_over_the_line_limit():
    long = {}
    for relative in production_modules():
        with open(ROOT / relative, encoding="utf-8") as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES:
            long[str(relative)] = lines
    assert long == {}, f"split these along their ideas (at most {MAX_LINES} lines each)"


def test_no_two_production_modules_share_a_name_for_different_ideas():
    by_name = defaultdict(set)
    for relative in production_modules():
        name = module_name(relative)
        if name not in CONVENTIONS and not in_a_layer(relative):
            by_name[name].add(str(relative))
    clashes = {name: paths for name, paths in by_name.items()
               if len(paths) > 1 and paths != ALLOWED.get(name, (set(), ""))[0]}
    assert clashes == {}, "give each idea its own name, or its reason in ALLOWED"


def test_the_allow_list_names_only_modules_that_share_a_name():
    """A reason outlives its modules otherwise: each entry names existing modules, two or more."""
    present = {str(relative) for relative in production_modules()}
    stale = {name: paths - present for name, (paths, _) in ALLOWED.items()
             if len(paths) < 2 or not paths <= present}
    assert stale == {}


def test_the_rules_see_a_package_by_its_folder_name():
    """``integrations/metrics/__init__.py`` is the module ``metrics``: it clashes with a
    ``metrics.py`` elsewhere, while ``lab/views/judgments.py`` is the views layer of
    ``lab/judgments.py``."""
    assert module_name(Path("integrations/metrics/__init__.py")) == "metrics"
    assert not in_a_layer(Path("integrations/metrics/__init__.py"))
    assert in_a_layer(Path("lab/views/judgments.py"))
    assert in_a_layer(Path("api/memories.py"))
    assert not in_a_layer(Path("lab/views/__init__.py"))
    assert not in_a_layer(Path("search/synonyms.py"))
