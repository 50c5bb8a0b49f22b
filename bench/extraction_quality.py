"""Extraction quality on LoCoMo dev: turn-level precision and recall of the extracted
candidates' turns against the evidence turns of each session's ``observation`` facts.

    .venv/bin/python bench/extraction_quality.py    # prints a report; the run goes to bench/results/

Sessions are taken as a user would post them (``operations.locomo.extraction_sessions``: the
first speaker ``user``, the other ``assistant``, content ``Speaker: text``, seqs from 1).
Figures are micro-averaged over every session's turns. Rows: the two baselines of issue #29
(every turn; turns over 80 characters), the local extractor with the shipped weights (trained
on all seven conversations: in sample), the same model fitted with each conversation left out
and scored on it (``bench/train_extraction.py``: how it generalises), and the language model
through ``sessions.extract.candidates`` when ``MEMORY_LLM_URL`` is set.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import results_io  # noqa: E402
from operations.locomo import extraction_sessions, turn_prf  # noqa: E402
from sessions.formation.extraction import Turn, extract  # noqa: E402

DATA = pathlib.Path(os.environ.get("LOCOMO_DEV", "/work/shared/data/locomo_dev.json"))


def turns_of(session) -> list[Turn]:
    return [Turn(seq=n, role=m["role"], content=m["content"], at=session["date"])
            for n, m in enumerate(session["messages"], start=1)]


def measure(data, pick) -> tuple[dict, dict, list[float]]:
    """``(overall, {sample_id: figures}, [ms per session])``."""
    counts = {}
    times = []
    for sample in data:
        c = counts.setdefault(sample["sample_id"], [0, 0, 0])
        for session in extraction_sessions(sample):
            started = time.perf_counter()
            chosen = pick(session)
            times.append((time.perf_counter() - started) * 1000)
            c[0] += len(chosen)
            c[1] += len(chosen & session["evidence"])
            c[2] += len(session["evidence"])
    each = {sid: turn_prf(*c) for sid, c in counts.items()}
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    return turn_prf(*total), each, times


def row(name, overall, each, ids, times=None) -> str:
    cells = [f"{overall['precision']:.3f}", f"{overall['recall']:.3f}", f"{overall['f1']:.3f}"]
    cells += [f"{each[i]['f1']:.3f}" for i in ids]
    timing = (f"{statistics.median(times):.1f} | {max(times):.1f}" if times else " | ")
    return f"| {name} | " + " | ".join(cells) + f" | {timing} |"


def main():
    data = json.loads(DATA.read_text())
    ids = [s["sample_id"] for s in data]
    sessions_n = sum(len(extraction_sessions(s)) for s in data)
    turns_n = sum(len(x["messages"]) for s in data for x in extraction_sessions(s))
    lines = [
        f"# Extraction quality ({dt.date.today().isoformat()})", "",
        f"`bench/extraction_quality.py`: LoCoMo dev (`locomo_dev.json`, {len(data)} "
        f"conversations, {sessions_n} sessions, {turns_n} turns), each session posted as a "
        "user would (first speaker `user`, second `assistant`, content `Speaker: text`). A "
        "turn is relevant when an `observation` fact of its session names it; precision and "
        "recall of the candidates' turns (`seqs`), micro-averaged over every session. Target "
        "for the local method: F1 at least 0.72 with precision at least 0.60.", "",
        "| method | P | R | F1 | " + " | ".join(f"F1 {i}" for i in ids) + " | p50 ms | max ms |",
        "|---" * (len(ids) + 6) + "|",
    ]
    every = measure(data, lambda s: set(range(1, len(s["messages"]) + 1)))
    lines.append(row("every turn", *every[:2], ids))
    long = measure(data, lambda s: {n for n, m in enumerate(s["messages"], start=1)
                                    if len(m["content"]) > 80})
    lines.append(row("turns over 80 characters", *long[:2], ids))
    local = measure(data, lambda s: {q for c in extract(turns_of(s)) for q in c.seqs})
    lines.append(row("local (shipped weights, trained on all 7: in sample)", *local[:2], ids,
                     local[2]))
    sys.path.insert(0, str(ROOT / "bench"))
    import train_extraction

    pooled, each = train_extraction.held_out(data)
    lines.append(row("local, each conversation held out of training", pooled, each, ids))
    if os.environ.get("MEMORY_LLM_URL"):
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")
        import django

        django.setup()
        from sessions import extract as session_extract

        methods = []

        def by_model(session):
            found, method = session_extract.candidates(turns_of(session))
            methods.append(method)
            return {q for c in found for q in c.seqs}

        llm = measure(data, by_model)
        name = (f"llm ({os.environ.get('MEMORY_LLM_MODEL', '?')}; "
                f"{methods.count('local')} of {len(methods)} sessions fell back to local)")
        lines.append(row(name, *llm[:2], ids, llm[2]))
    else:
        lines.append("| llm | not measured: no model (`MEMORY_LLM_URL` unset) |"
                     + " |" * (len(ids) + 4))
    lines += ["", "The in-sample and held-out rows use the same features and training "
              "(`bench/train_extraction.py`); the held-out row fits the weights and the "
              "threshold on six conversations and scores the seventh, for each in turn. "
              "`tests/test_extraction_quality.py` asserts the target on the shipped weights "
              "and checks that the extract endpoint gives the same figures on conv-26."]
    print("\n".join(lines))
    results_io.write_run("extraction_quality", title="Memories drawn from LoCoMo dev sessions: "
                         "turn-level precision, recall, F1", params={"data": str(DATA)},
                         figures=results_io.tables_from_markdown(lines))


if __name__ == "__main__":
    main()
