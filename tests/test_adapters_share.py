"""REST and MCP perform one act through one domain function: a recall's hits are counted by
``memories.access.recall_hits_record`` from both, and the MCP code imports none of the API's
private (``_``-prefixed) helpers."""

import ast
from pathlib import Path

import pytest

from integrations.mcp import bodies
from integrations.mcp.caller import Caller
from memories import access
from tests.helpers import create, memory_hash

ROOT = Path(__file__).resolve().parent.parent


def private_api_imports(folder: Path) -> list[str]:
    """``path: from api.x import _name`` for each such import under ``folder``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "api":
                found += [f"{path.relative_to(folder)}: from {node.module} import {a.name}"
                          for a in node.names if a.name.startswith("_")]
    return found


def test_the_mcp_adapter_imports_no_private_helper_of_the_api():
    assert private_api_imports(ROOT / "integrations") == []


def test_the_scan_sees_a_private_import(tmp_path):
    (tmp_path / "x.py").write_text("from api.memories import _memory_or_404\n")
    assert private_api_imports(tmp_path) == ["x.py: from api.memories import _memory_or_404"]


def test_recall_hits_record_counts_once_and_not_what_the_search_counted(db):
    m = create("the quarterly report is due on the fifth")
    access.recall_hits_record(user_id="u-a", memory_ids=[m.memory_id], counted=True)
    assert memory_hash("u-a", m.memory_id)["access_count"] == "0"
    access.recall_hits_record(user_id="u-a", memory_ids=[m.memory_id], counted=False)
    assert memory_hash("u-a", m.memory_id)["access_count"] == "1"


@pytest.mark.parametrize("profile", ["keyword", "bm25"])
def test_rest_and_mcp_count_a_recall_s_hits_alike(builtins, api, editor, profile):
    """Whether the search counts the hits itself (bm25, served) or leaves them to the caller
    (keyword re-ranks its window), each adapter's recall counts one hit per result."""
    m = create("the quarterly report is due on the fifth")
    body = {"user_id": "u-a", "query": "quarterly", "profile": profile}
    assert api.post("/recall", body).json()["results"][0]["memory_id"] == m.memory_id
    assert memory_hash("u-a", m.memory_id)["access_count"] == "1"
    found = bodies.search_memories(Caller(user=editor), **body)
    assert [h["memory_id"] for h in found["results"]] == [m.memory_id]
    assert memory_hash("u-a", m.memory_id)["access_count"] == "2"
