"""Supersession detector: dev-set pair precision / recall and the cost per write.

Pure (no Django, no Redis). Quality: ``memories.supersession.evaluation.score`` over
``supersession_dev.jsonl`` (overall, English, Chinese). Cost: each memory written in time order
into its namespace costs ``slot_keys(text)`` (the keys the product indexes) plus
``propose(text, held)``, ``held`` being the earlier memories sharing a slot key, most recent first
(their keys come from the index, so they are not recomputed). Texts: the dev set's memories, and
every LoCoMo turn as ``"speaker: text"`` with one namespace per conversation. Five runs; each
write's median over the runs, then p50 / p99 over writes, in milliseconds. Proposals on LoCoMo (no labels) are counted
and a few shown, to read by eye.

    .venv/bin/python bench/supersession_detector.py [--data-dir ../shared/data] [--runs 5]
        [--out report.md]

Prints a Markdown report (also written to ``--out`` when given), writes the run's figures to
``bench/results/`` (``bench/results_io.py``) and ends with one JSON object.
"""

import argparse
import datetime as dt
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import results_io  # noqa: E402
from memories.supersession import claims, evaluation, propose, slot_keys  # noqa: E402

FRESH_SET = ROOT / "tests" / "test_supersession_generalise.py"


def _fresh_cases() -> tuple[list[dict], list[dict]]:
    """The fresh adversarial set and its second batch (written after the rules were generalised),
    from the test module; ([], []) when absent."""
    if not FRESH_SET.exists():
        return [], []
    spec = importlib.util.spec_from_file_location("supersession_fresh_set", FRESH_SET)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.cases(), module.cases(getattr(module, "FRESH_AFTER", {}))


def _figures_table(figures: dict) -> list[str]:
    lines = ["| set | precision | recall | tp | fp | fn |", "|---|---|---|---|---|---|"]
    for lang in ("all", "en", "zh"):
        row = figures[lang]
        lines.append(f"| {lang} | {row['precision']:.3f} | {row['recall']:.3f} | {row['tp']} "
                     f"| {row['fp']} | {row['fn']} |")
    return lines + ["", "Errors: " + (", ".join(f"{c} {k} {p}" for c, k, p in figures["errors"]) or "none")]


def _dev_namespaces(path: Path) -> list[list[tuple[str, str]]]:
    cases = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    return [[(m["key"], m["content"]) for m in case["memories"]] for case in cases]


def _locomo_namespaces(path: Path) -> list[list[tuple[str, str]]]:
    if not path.exists():
        return []
    namespaces = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        sessions = sorted((k for k in conversation if k.startswith("session_") and k[8:].isdigit()),
                          key=lambda k: int(k[8:]))
        namespaces.append([(turn["dia_id"], f"{turn['speaker']}: {turn['text']}")
                           for session in sessions for turn in conversation[session]])
    return namespaces


def _write_times(namespace: list[tuple[str, str]], proposals: list | None = None) -> list[float]:
    """Milliseconds per write: the new memory's keys plus its proposals against what it shares."""
    keys: list[set[str]] = []
    times = []
    for i, (memory_id, text) in enumerate(namespace):
        start = time.perf_counter()
        mine = set(slot_keys(text))
        held = [namespace[j] for j in range(i - 1, -1, -1) if keys[j] & mine] if mine else []
        found = propose(text, held) if held else []
        times.append((time.perf_counter() - start) * 1000)
        keys.append(mine)
        if proposals is not None:
            proposals += [(memory_id, text, p, dict(namespace)[p.older]) for p in found]
    return times


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _timing(namespaces, runs: int) -> dict:
    """Each write's median over `runs` runs, then p50 / p99 / mean over writes (a per-run p99 on
    a shared box measures the scheduler more than the code)."""
    per_run = [[t for namespace in namespaces for t in _write_times(namespace)] for _ in range(runs)]
    times = [statistics.median(run) for run in zip(*per_run, strict=True)]
    return {"writes": len(times), "p50_ms": _percentile(times, 0.50),
            "p99_ms": _percentile(times, 0.99), "mean_ms": statistics.fmean(times)}


def _claims_timing(texts: list[str], runs: int) -> dict:
    """`claims(text)` alone on texts of 150-250 characters (the brief's 200-char budget), each
    text's median over `runs` runs."""
    chosen = [t for t in texts if 150 <= len(t) <= 250]
    per_run = []
    for _ in range(runs):
        run = []
        for text in chosen:
            start = time.perf_counter()
            claims(text)
            run.append((time.perf_counter() - start) * 1000)
        per_run.append(run)
    times = [statistics.median(run) for run in zip(*per_run, strict=True)]
    return {"texts": len(chosen), "p50_ms": _percentile(times, 0.50), "p99_ms": _percentile(times, 0.99)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, help="also write the Markdown report to this file")
    args = ap.parse_args()

    dev_path = args.data_dir / "supersession_dev.jsonl"
    cases = [json.loads(line) for line in dev_path.open(encoding="utf-8") if line.strip()]
    figures = evaluation.score(cases)
    dev = _dev_namespaces(dev_path)
    locomo = _locomo_namespaces(args.data_dir / "locomo_dev.json")
    timing = {"dev": _timing(dev, args.runs)}
    if locomo:
        timing["locomo"] = _timing(locomo, args.runs)
    all_texts = [text for namespace in dev + locomo for _, text in namespace]
    claims_only = _claims_timing(all_texts, args.runs)
    locomo_proposals: list = []
    for namespace in locomo:
        _write_times(namespace, locomo_proposals)

    lines = [f"# Supersession detector ({dt.date.today().isoformat()})", "",
             "`bench/supersession_detector.py`: pure rules, no language model.", "",
             "## Dev set (`supersession_dev.jsonl`, pair precision / recall)", "",
             *_figures_table(figures)]
    fresh_cases, second_cases = _fresh_cases()
    fresh = evaluation.score(fresh_cases) if fresh_cases else None
    second = evaluation.score(second_cases) if second_cases else None
    if fresh:
        lines += ["", f"## Fresh cases (`tests/test_supersession_generalise.py`, {len(fresh_cases)} "
                      "cases, pair precision / recall)", "",
                  "An adversarial set written apart from the dev set (new names, wording and subjects; "
                  "full names sharing a first name, possessors, named services, meetings with "
                  "someone, tickets, hard negatives).", "", *_figures_table(fresh)]
        if second:
            lines += ["", f"Second batch (`FRESH_AFTER`, {len(second_cases)} cases, written after the "
                          "rules were generalised):", "", *_figures_table(second)]
    lines += ["", f"## Cost per write (`slot_keys` + `propose`, each write's median of {args.runs} runs)", "",
              "| texts | writes | p50 ms | p99 ms | mean ms |", "|---|---|---|---|---|"]
    for name, row in timing.items():
        lines.append(f"| {name} | {row['writes']} | {row['p50_ms']:.3f} | {row['p99_ms']:.3f} "
                     f"| {row['mean_ms']:.3f} |")
    lines += ["", f"`claims(text)` alone on {claims_only['texts']} texts of 150-250 characters: "
                  f"p50 {claims_only['p50_ms']:.3f} ms, p99 {claims_only['p99_ms']:.3f} ms.", "",
              "Measured on a shared 2-core box under other load; expect noise of tens of percent."]
    if locomo:
        lines += ["", f"## LoCoMo (unlabelled): {len(locomo_proposals)} proposals over "
                      f"{timing['locomo']['writes']} turns", ""]
        lines += [f"- {newer_id} over {p.older} ({p.confidence}): {p.reason}  \n"
                  f"  newer: {text[:120]!r}  \n  older: {older[:120]!r}"
                  for newer_id, text, p, older in locomo_proposals[:15]]
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    results_io.write_run("supersession_detector", title="Supersession detector (pure rules): pair "
                         "precision and recall, cost per write", params=vars(args),
                         figures=results_io.tables_from_markdown(lines))
    print(json.dumps({"precision": figures["all"]["precision"], "recall": figures["all"]["recall"],
                      "precision_en": figures["en"]["precision"], "recall_en": figures["en"]["recall"],
                      "precision_zh": figures["zh"]["precision"], "recall_zh": figures["zh"]["recall"],
                      "fresh": {lang: (fresh[lang]["precision"], fresh[lang]["recall"])
                                for lang in ("all", "en", "zh")} if fresh else None,
                      "fresh_second": {lang: (second[lang]["precision"], second[lang]["recall"])
                                       for lang in ("all", "en", "zh")} if second else None,
                      "timing": timing, "claims_200_chars": claims_only, "locomo_proposals": len(locomo_proposals)}))


if __name__ == "__main__":
    main()
