"""Each app's pages in its own place: its URL namespace (``sessions:detail``, not one namespace
for every page) and its templates under its own folder (``sessions/templates/sessions/``).
``templates/`` at the root keeps only what every app shares (``base.html``, the error pages,
the ``_…`` fragments) and Django's ``registration/`` pages.

Pure and fast: reads the URLconf and the source files, no database.
"""

import re
from pathlib import Path

import pytest
from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver, resolve

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT / "templates"
# Endpoints for machines, not pages: they answer at fixed paths outside any namespace.
MACHINE_ENDPOINTS = {"mcp", "metrics"}
TEMPLATE_NAME = re.compile(r"""["']([\w/]+\.html)(?:#[\w-]+)?["']""")
TEMPLATE_TAG = re.compile(r"""\{%\s*(?:include|extends)\s+["']([\w/]+\.html)["']""")


def project_apps():
    """The project's own apps (not Django's nor a library's)."""
    return [config for config in apps.get_app_configs() if Path(config.path).parent == ROOT]


def url_patterns(patterns=None, namespace=""):
    """``(pattern, namespace)`` for every view of the URLconf, namespaces joined by ``:``."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            inner = pattern.namespace or ""
            joined = ":".join(part for part in (namespace, inner) if part)
            yield from url_patterns(pattern.url_patterns, joined)
        elif isinstance(pattern, URLPattern):
            yield pattern, namespace


def test_every_page_is_in_the_url_namespace_of_the_app_that_owns_its_view():
    checked = set()
    for pattern, namespace in url_patterns():
        config = apps.get_containing_app_config(pattern.callback.__module__)
        if config is None or config not in project_apps() or pattern.name in MACHINE_ENDPOINTS:
            continue
        assert namespace == config.name, (
            f"{pattern.pattern} ({pattern.callback.__module__}) is in the namespace "
            f"{namespace!r}, not its app's {config.name!r}")
        checked.add(config.name)
    assert checked == {"console", "memories", "sessions", "search", "lab", "recalls",
                       "operations", "accounts", "integrations"}


@pytest.mark.parametrize(("path", "view_name"), [
    ("/", "console:overview"),
    ("/activity/", "console:activity"),
    ("/memories/", "memories:list"),
    ("/memories/m-1/diff/", "memories:diff"),
    ("/conflicts/", "memories:conflicts"),
    ("/sessions/", "sessions:list"),
    ("/sessions/a/b/", "sessions:detail"),
    ("/sessions/a/b/warm/", "sessions:warm"),
    ("/search/", "search:search"),
    ("/search/synonyms/", "search:synonyms"),
    ("/search/compare/", "lab:compare"),
    ("/recalls/", "recalls:list"),
    ("/recalls/rc_0123456789abcdef/", "recalls:detail"),
    ("/lab/", "lab:home"),
    ("/index/", "operations:index"),
    ("/index/policy/", "operations:policy"),
    ("/index/backup/", "operations:backup"),
    ("/tokens/", "accounts:tokens"),
    ("/users/", "accounts:users"),
    ("/integrations/webhooks/", "integrations:webhooks"),
])
def test_the_pages_keep_their_paths_in_their_namespaces(path, view_name):
    assert resolve(path).view_name == view_name


def shared_template(name: str) -> bool:
    """A template of the project-level shared set: ``templates/<name>``, no app's folder."""
    return (SHARED / name).is_file() and name.split("/")[0] not in {
        config.name for config in project_apps()}


def test_the_shared_templates_folder_holds_no_app_s_pages():
    folders = {path.name for path in SHARED.iterdir() if path.is_dir()}
    assert folders == {"registration"}  # Django's login and password pages, overridden


@pytest.mark.parametrize("config", project_apps(), ids=lambda config: config.name)
def test_an_app_s_templates_live_in_its_own_folder_and_name_only_its_own_or_shared_ones(config):
    own = Path(config.path) / "templates"
    for path in own.rglob("*.html") if own.is_dir() else ():
        assert path.relative_to(own).parts[0] == config.name, f"{path} is outside {own / config.name}"

    referenced = {}
    for path in Path(config.path).rglob("*.py"):
        if "migrations" not in path.parts:
            referenced.update({name: path for name in TEMPLATE_NAME.findall(path.read_text())})
    for path in own.rglob("*.html") if own.is_dir() else ():
        referenced.update({name: path for name in TEMPLATE_TAG.findall(path.read_text())})
    for name, where in referenced.items():
        mine = name.startswith(f"{config.name}/") and (own / name).is_file()
        assert mine or shared_template(name), (
            f"{where.relative_to(ROOT)} names {name}: neither {config.name}'s nor a shared template")
