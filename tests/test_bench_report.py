"""The benchmark figures live in bench/results/*.json; docs/benchmarks.md is generated from them.

Pure and fast: no database, no Redis.
"""

import json
import re

import pytest

from bench import report, results_io

RUN_FILES = sorted(results_io.RESULTS.glob("*.json"))


def test_it_keeps_docs_benchmarks_equal_to_what_the_script_generates():
    """Run `python bench/report.py` after adding or changing a run file."""
    assert report.DOC.read_text() == report.render(report.load_runs())


def test_it_holds_only_json_run_files_in_bench_results():
    others = [p.name for p in results_io.RESULTS.iterdir() if p.suffix != ".json"]
    assert others == []
    assert RUN_FILES


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: p.name)
def test_every_run_file_has_the_required_keys_and_well_formed_tables(path):
    run = json.loads(path.read_text())
    assert set(results_io.REQUIRED_KEYS) <= set(run)
    assert re.fullmatch(rf"{re.escape(run['bench'])}-\d{{8}}T\d{{6}}Z(-\d+)?\.json", path.name)
    assert path.name[len(run["bench"]) + 1:][:8] == run["date"][:10].replace("-", "")
    assert run["commit"] is None or re.fullmatch(r"[0-9a-f]{40}", run["commit"])
    assert {"before", "after"} <= set(run["load"])
    assert run["figures"]
    for table in run["figures"]:
        assert set(table) == {"title", "columns", "rows"}
        assert all(len(row) == len(table["columns"]) for row in table["rows"])


def test_every_bench_of_a_run_file_is_described_on_the_page():
    described = {bench for bench, _, _ in report.BENCHES}
    assert {json.loads(p.read_text())["bench"] for p in RUN_FILES} <= described


def test_a_written_run_has_the_required_keys_and_renders(tmp_path):
    path = results_io.write_run(
        "recall", title="a smoke run", params={"docs": 10},
        figures=[results_io.table_from_mapping("headline", {"p50_ms": 1.5, "http": {"p99_ms": 9}})],
        directory=tmp_path)
    run = json.loads(path.read_text())
    assert set(results_io.REQUIRED_KEYS) <= set(run)
    assert run["figures"][0]["rows"] == [["p50_ms", 1.5], ["http.p99_ms", 9]]
    assert len(run["load"]["before"]) == 3 and run["machine"]["cores"]
    assert "a smoke run" in report.render(report.load_runs(tmp_path))


def test_it_reads_markdown_tables_a_script_prints():
    lines = ["## Dev set", "", "| set | precision | n |", "|---|---|---|",
             "| all | **0.977** | 1,345 |", "| llm | not measured |", "", "after"]
    assert results_io.tables_from_markdown(lines) == [{
        "title": "Dev set", "columns": ["set", "precision", "n"],
        "rows": [["all", 0.977, 1345], ["llm", "not measured", None]]}]
