"""Rolling summary quality on LoCoMo dev: content-word recall of each session's gold summary.

For every session of ``locomo_dev.json`` with a gold ``session_summary``: the transcript is the
turns as ``Speaker: text`` joined by single spaces; the budget is 25 % of its length; the score
is the ROUGE-1 recall of the gold summary's content words (``[a-z0-9']+`` runs of the lower-cased
text longer than one character, less a short English stopword list:
``sessions.formation.summary.rouge1_recall``), averaged over sessions. Rows: the transcript's
first 25 % (the baseline), the local method (``sessions.formation.summary``, pure), and the
language model through the product's own path (``sessions.formation.rolling.fold_summary``)
when ``MEMORY_LLM_URL`` is set ("not measured: no model" otherwise; a session the model failed
on is counted with the local summary it fell back to, and the failures are reported).

    .venv/bin/python bench/summary_quality.py [--data-dir ../shared/data]
        [--out report.md]

Prints a Markdown report (also written to ``--out`` when given), writes the run's figures to
``bench/results/`` (``bench/results_io.py``) and ends with one JSON object.
"""

import argparse
import datetime as dt
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import results_io  # noqa: E402
from operations.locomo import parse_session_date  # noqa: E402
from sessions.formation.summary import Turn, rouge1_recall, summarise  # noqa: E402


def sessions_of(path: Path):
    """``(sample_id, session key, turns, transcript, gold)`` for every summarised session."""
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        for key, turns in conversation.items():
            gold = sample["session_summary"].get(f"{key}_summary")
            if not re.fullmatch(r"session_\d+", key) or not turns or not gold:
                continue
            at = parse_session_date(conversation[f"{key}_date_time"])
            yield (sample["sample_id"], key,
                   [Turn("user", t["text"], t["speaker"], at) for t in turns],
                   " ".join(f"{t['speaker']}: {t['text']}" for t in turns), gold)


def measure(path: Path, method, label: str) -> dict:
    scores, per_sample, seconds, fell_back = [], {}, [], 0
    for sample_id, _key, turns, transcript, gold in sessions_of(path):
        budget = len(transcript) // 4
        started = time.perf_counter()
        summary, used = method(turns, transcript, budget)
        seconds.append(time.perf_counter() - started)
        assert len(summary) <= budget, (label, sample_id)
        fell_back += used == "local" and label == "llm"
        score = rouge1_recall(gold, summary)
        scores.append(score)
        per_sample.setdefault(sample_id, []).append(score)
    return {"label": label, "sessions": len(scores), "recall": statistics.fmean(scores),
            "per_sample": {k: statistics.fmean(v) for k, v in per_sample.items()},
            "p50_ms": statistics.median(seconds) * 1000,
            "max_ms": max(seconds) * 1000, "fell_back": fell_back}


def first_quarter(turns, transcript, budget):
    return transcript[:budget], "first"


def local(turns, transcript, budget):
    return summarise("", turns, max_chars=budget), "local"


def llm_method():
    """The product's fold path (model first, local on failure), or None with no model."""
    if not os.environ.get("MEMORY_LLM_URL"):
        return None
    import _django  # noqa: PLC0415

    _django.setup("summary_quality")
    from sessions.formation.rolling import fold_summary  # noqa: PLC0415

    def method(turns, transcript, budget):
        return fold_summary("", turns, max_chars=budget)

    return method


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--out", help="also write the Markdown report to this file")
    args = parser.parse_args()
    path = Path(args.data_dir) / "locomo_dev.json"
    rows = [measure(path, first_quarter, "first 25 % of the transcript"),
            measure(path, local, "local (sessions/formation/summary.py)")]
    model = llm_method()
    if model is not None:
        rows.append(measure(path, model, "llm"))
    samples = list(rows[0]["per_sample"])
    lines = [f"# Rolling summary quality ({dt.date.today().isoformat()})", "",
             "`bench/summary_quality.py`: LoCoMo dev (`locomo_dev.json`, "
             f"{rows[0]['sessions']} sessions with a gold `session_summary`). Budget: 25 % of "
             "each session's transcript (its turns as `Speaker: text` joined by single "
             "spaces). Score: ROUGE-1 recall of the gold summary's content words (the "
             "`[a-z0-9']+` runs of the lower-cased text longer than one character, less a "
             "short English stopword list), averaged over sessions. Target for the local "
             "method: at least 0.33.", "",
             "| method | ROUGE-1 recall | " + " | ".join(samples) + " | p50 ms | max ms |",
             "|---|---|" + "---|" * len(samples) + "---|---|"]
    for row in rows:
        label = row["label"] if row["label"] != "llm" else (
            f"llm ({os.environ.get('MEMORY_LLM_MODEL', '')}; fell back on "
            f"{row['fell_back']} sessions)")
        lines.append(f"| {label} | {row['recall']:.3f} | "
                     + " | ".join(f"{row['per_sample'][s]:.3f}" for s in samples)
                     + f" | {row['p50_ms']:.1f} | {row['max_ms']:.1f} |")
    if model is None:
        lines.append("| llm | not measured: no model (`MEMORY_LLM_URL` unset) | "
                     + " | ".join("" for _ in samples) + " | | |")
    lines += ["", "The rolling behaviour (the facts of a conversation's first turns kept through "
              "every fold of 200+ turns) is asserted by `tests/test_summary_quality.py` and, "
              "through the API and the worker, `tests/test_session_summaries.py`.", ""]
    if args.out:
        Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    results_io.write_run("summary_quality", title="Rolling summary quality on LoCoMo dev (ROUGE-1 "
                         "recall at 25 % of the transcript)", params=vars(args),
                         figures=results_io.tables_from_markdown(lines))
    print(json.dumps({r["label"]: round(r["recall"], 4) for r in rows}))


if __name__ == "__main__":
    main()
