"""The supersession detector on the dev set (../shared/data/supersession_dev.jsonl): pair
precision >= 0.90 and recall >= 0.65 over all 70 cases, each memory against the earlier memories
of its case that share a slot key, most recent first (`detector.pairs_for`)."""

import json
from pathlib import Path

import pytest

from memories.supersession import evaluation

DEV_SET = Path(__file__).resolve().parents[2] / "shared" / "data" / "supersession_dev.jsonl"


@pytest.fixture(scope="module")
def figures():
    if not DEV_SET.exists():
        pytest.skip(f"the supersession dev set is not at {DEV_SET} (benchmark data, not in the repo)")
    with DEV_SET.open(encoding="utf-8") as handle:
        cases = [json.loads(line) for line in handle if line.strip()]
    return evaluation.score(cases)


def test_pair_precision_and_recall_over_the_whole_dev_set(figures):
    overall = figures["all"]
    assert overall["precision"] >= 0.90, figures["errors"]
    assert overall["recall"] >= 0.65, figures["errors"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_language_finds_pairs_without_false_ones_dominating(lang, figures):
    row = figures[lang]
    assert row["tp"] > 0
    assert row["precision"] >= 0.80, [e for e in figures["errors"] if f"-{lang}-" in e[0]]
