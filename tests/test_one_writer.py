"""One writer per model: production code writes ``Memory``, its history, ``MemorySlot`` and
``Conflict`` rows only in ``memories/services/`` (docs/architecture.md names every model's
writer). The scan reads the source: a call of a write method on a chain that starts at one
of those models (or reaches a ``history`` manager), simple-history's bulk helpers, and raw
``executemany``."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("accounts", "api", "console", "integrations", "lab", "memories", "memory_console",
        "operations", "search", "sessions")
MODELS = {"Memory", "MemorySlot", "Conflict", "HistoricalMemory"}
WRITES = {"update", "delete", "create", "bulk_create", "bulk_update", "get_or_create",
          "update_or_create", "_raw_delete"}
HELPERS = {"bulk_create_with_history", "bulk_update_with_history", "executemany"}
WRITER = "memories/services/"


def _reaches_model(node: ast.AST) -> bool:
    """Whether an attribute/call chain starts at a guarded model or goes through
    ``.history``."""
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            if node.attr == "history":
                return True
            node = node.value
        elif isinstance(node, ast.Name):
            return node.id in MODELS
        else:
            return False


def writes_in(source: str) -> list[str]:
    """``line: call`` for each write of a guarded model in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in HELPERS or (name in WRITES and isinstance(func, ast.Attribute)
                               and _reaches_model(func.value)):
            found.append(f"{node.lineno}: {ast.unparse(func)}")
    return found


def production_files():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            # The database backend runs the ORM's statements; it writes nothing of its own.
            if "migrations" not in path.parts and "backends" not in path.parts:
                yield path


def test_only_the_memory_services_write_memory_rows():
    outside = {}
    for path in production_files():
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(WRITER) and (found := writes_in(path.read_text())):
            outside[rel] = found
    assert outside == {}


def test_the_scan_sees_the_writes_it_forbids():
    source = "\n".join([
        "Memory.objects.filter(user_id=u).update(needs_resync=True)",
        "Memory.history.model.objects.bulk_create(rows)",
        "memory.history.filter(history_id=1).delete()",
        "Conflict.objects.create(newer=a, older=b)",
        "bulk_create_with_history(rows, Memory)",
        "cursor.executemany(sql, rows)",
        "Session.objects.filter(pk=1).update(summary='')",  # another app's model: not here
        "Memory.objects.filter(user_id=u).count()",  # a read
    ])
    assert [w.split(":")[0] for w in writes_in(source)] == ["1", "2", "3", "4", "5", "6"]
