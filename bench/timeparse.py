"""Time expressions in real questions: how often ``parse_query_time`` finds one, whether the
range holds the answer's date, and what it costs next to ``dateparser.search.search_dates``.

Pure (no Django, no Redis). Questions:

* LoCoMo (``locomo_dev_qrels.jsonl``): every question; an evidence turn's date is its
  session's date. ``latest`` = the conversation's last session date (the namespace's newest
  memory), ``now`` = the real clock, as a live recall would have them.
* MemoryBank (``memorybank_siliconfriend``, English and Chinese): every probing question; the
  answer's dates are those of the exchanges labelled in ``bench/labels/``.

A question counts as *covered* when the range holds the date of at least one evidence turn.
Timing: each question parsed with ours and with ``search_dates`` (languages en + zh),
interleaved, 3 rounds; p50 / p99 in microseconds.

    .venv/bin/python bench/timeparse.py [--data-dir ../shared/data]

Last line: one JSON object.
"""

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import results_io  # noqa: E402
from operations import locomo  # noqa: E402  (pure module)
from search.analysis.timeparse import parse_query_time  # noqa: E402


def locomo_rows(data_dir: Path) -> list[dict]:
    samples = json.loads((data_dir / "locomo_dev.json").read_text(encoding="utf-8"))
    dates, latest = {}, {}
    for sample in locomo.iter_samples(samples):
        for item in locomo.iter_turns(sample, context=False):
            if item["created_at"] is None:
                continue
            dates[(sample["sample_id"], item["metadata"]["dia_id"])] = item["created_at"]
            latest[sample["sample_id"]] = max(latest.get(sample["sample_id"], item["created_at"]),
                                              item["created_at"])
    rows = []
    for line in (data_dir / "locomo_dev_qrels.jsonl").open(encoding="utf-8"):
        q = json.loads(line)
        sid = q["sample_id"]
        ev = [dates[(sid, e)] for e in q.get("evidence") or [] if (sid, e) in dates]
        if ev and sid in latest:
            rows.append({"set": "locomo", "question": q["question"], "dates": ev,
                         "latest": latest[sid]})
    return rows


def memorybank_rows(data_dir: Path, lang: str) -> list[dict]:
    labels = json.loads((ROOT / "bench" / "labels" / f"memorybank_{lang}.json").read_text("utf-8"))
    bank = json.loads((data_dir / "memorybank_siliconfriend" / f"memory_bank_{lang}.json")
                      .read_text(encoding="utf-8"))
    rows = []
    for user, items in labels.items():
        days = [d for k, v in bank.items() if k.strip() == user for d in v["history"]]
        newest = dt.datetime.fromisoformat(max(days)).replace(hour=23, tzinfo=dt.UTC)
        for item in items:
            ev = [dt.datetime.fromisoformat(x.split("#")[0]).replace(hour=12, tzinfo=dt.UTC)
                  for x in item["exchanges"]]
            if ev:
                rows.append({"set": f"memorybank_{lang}", "question": item["question"],
                             "dates": ev, "latest": newest})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    from dateparser.search import search_dates

    rows = locomo_rows(args.data_dir) + memorybank_rows(args.data_dir, "en") + \
        memorybank_rows(args.data_dir, "cn")
    now = dt.datetime.now(dt.UTC)
    search_dates("warm up in May", languages=["en", "zh"])
    parse_query_time("warm up in May", now=now)
    ours_us, theirs_us = [], []
    stats: dict[str, dict] = {}
    for rnd in range(3):
        for n, row in enumerate(rows):
            first_ours = (n + rnd) % 2 == 0
            for who in ("ours", "dp") if first_ours else ("dp", "ours"):
                t = time.perf_counter()
                if who == "ours":
                    parsed = parse_query_time(row["question"], now=now, latest=row["latest"])
                    ours_us.append((time.perf_counter() - t) * 1e6)
                else:
                    search_dates(row["question"], languages=["en", "zh"])
                    theirs_us.append((time.perf_counter() - t) * 1e6)
            if rnd:
                continue
            s = stats.setdefault(row["set"], {"questions": 0, "with_time": 0, "covered": 0,
                                              "examples": []})
            s["questions"] += 1
            if parsed.range is None:
                continue
            s["with_time"] += 1
            hit = any(parsed.range.since <= d < parsed.range.until for d in row["dates"])
            s["covered"] += hit
            if len(s["examples"]) < 4:
                s["examples"].append(f"{row['question'][:60]!r} -> {parsed.range.label} "
                                     f"from {parsed.range.source!r} {'ok' if hit else 'MISS'}")
    for name, s in stats.items():
        print(f"{name}: {s['questions']} questions, {s['with_time']} name a time, "
              f"{s['covered']} of those ranges hold an evidence date")
        for e in s.pop("examples"):
            print("   ", e)

    def pct(xs, p):
        return sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]

    print(f"parse time per question (us): ours p50 {statistics.median(ours_us):.0f} p99 "
          f"{pct(ours_us, 0.99):.0f}; dateparser.search_dates p50 {statistics.median(theirs_us):.0f}"
          f" p99 {pct(theirs_us, 0.99):.0f}")
    headline = {
        "sets": stats,
        "ours_p50_us": round(statistics.median(ours_us), 1),
        "ours_p99_us": round(pct(ours_us, 0.99), 1),
        "search_dates_p50_us": round(statistics.median(theirs_us), 1),
        "search_dates_p99_us": round(pct(theirs_us, 0.99), 1),
    }
    results_io.write_headline("timeparse", title="Time expressions in LoCoMo and MemoryBank "
                              "questions", params=vars(args), headline=headline)
    print(json.dumps(headline))


if __name__ == "__main__":
    main()
