"""Train the local extractor's weights (sessions/formation/extraction_weights.py).

    .venv/bin/python bench/train_extraction.py [--write]

A logistic regression (L2, full-batch gradient descent, NumPy) over the features of
``sessions.formation.extraction.features`` on the sessions of the LoCoMo dev conversations
(``/work/shared/data/locomo_dev.json``; labels: the turns their ``observation`` facts name).
Generalisation is checked by leaving each conversation out in turn: weights and threshold are
fitted on the other six and scored on the held-out one; the held-out figures (pooled) are
printed next to the in-sample ones. ``--write`` writes the weights fitted on all seven.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from operations.locomo import extraction_sessions, turn_prf  # noqa: E402
from sessions.formation.extraction import Turn, features  # noqa: E402

DATA = pathlib.Path("/work/shared/data/locomo_dev.json")
OUT = pathlib.Path(__file__).resolve().parent.parent / "sessions/formation/extraction_weights.py"
L2 = 1.0
WORD_L2 = 30.0
WORD_SPREAD = 6
MIN_PRECISION = 0.62  # the threshold is chosen for F1 with at least this precision (margin)


def session_rows(sample):
    rows = []
    for s in extraction_sessions(sample):
        turns = [Turn(seq=n, role=m["role"], content=m["content"], at=s["date"])
                 for n, m in enumerate(s["messages"], start=1)]
        for turn, f in zip(turns, features(turns), strict=True):
            rows.append((f, turn.seq in s["evidence"]))
    return rows


def fit(rows, names):
    x = np.array([[f.get(k, 0.0) for k in names] for f, _ in rows])
    y = np.array([float(g) for _, g in rows])
    w = np.zeros(len(names))
    reg = np.array([WORD_L2 if k.startswith("w:") else L2 for k in names])
    reg[names.index("bias")] = 0.0
    lr = 0.5
    for _ in range(4000):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) / len(y) + reg * w / len(y)
        w -= lr * grad
    return dict(zip(names, w.tolist(), strict=True))


def probs(rows, weights):
    names = sorted(weights)
    x = np.array([[f.get(k, 0.0) for k in names] for f, _ in rows])
    return 1 / (1 + np.exp(-(x @ np.array([weights[k] for k in names]))))


def best_threshold(p, y, min_precision=MIN_PRECISION):
    best = (0.0, 0.5)
    for t in np.arange(0.2, 0.8, 0.01):
        sel = p >= t
        m = turn_prf(int(sel.sum()), int((sel & y).sum()), int(y.sum()))
        if m["precision"] >= min_precision and m["f1"] > best[0]:
            best = (m["f1"], float(t))
    return best[1]


def figures(p, y, t):
    sel = p >= t
    return turn_prf(int(sel.sum()), int((sel & y).sum()), int(y.sum()))


def held_out(data) -> tuple[dict, dict]:
    """Leave each conversation out: ``(pooled figures, {sample_id: figures})``."""
    per = {s["sample_id"]: session_rows(s) for s in data}
    names = _names(per)
    each, held_p, held_y = {}, [], []
    for out_id in per:
        train = [r for sid, rows in per.items() if sid != out_id for r in rows]
        w = fit(train, names)
        t = best_threshold(probs(train, w), np.array([g for _, g in train]))
        p, y = probs(per[out_id], w), np.array([g for _, g in per[out_id]])
        each[out_id] = figures(p, y, t)
        held_p.append(p >= t)
        held_y.append(y)
    sel, y = np.concatenate(held_p), np.concatenate(held_y)
    return turn_prf(int(sel.sum()), int((sel & y).sum()), int(y.sum())), each


def _names(per) -> list[str]:
    return sorted({k for rows in per.values() for f, _ in rows for k in f})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    data = json.loads(DATA.read_text())
    per = {s["sample_id"]: session_rows(s) for s in data}
    # Words as features only when they occur in most conversations (no topic, no names).
    spread: dict[str, int] = {}
    for rows in per.values():
        for k in {k for f, _ in rows for k in f}:
            spread[k] = spread.get(k, 0) + 1
    names = sorted(k for k, n in spread.items() if not k.startswith("w:") or n >= WORD_SPREAD)
    held_p, held_y, held_scores = [], [], []
    for out_id in per:
        train = [r for sid, rows in per.items() if sid != out_id for r in rows]
        w = fit(train, names)
        t = best_threshold(probs(train, w), np.array([g for _, g in train]))
        p, y = probs(per[out_id], w), np.array([g for _, g in per[out_id]])
        m = figures(p, y, t)
        print(f"held out {out_id}: t={t:.2f} P={m['precision']:.3f} R={m['recall']:.3f} "
              f"F1={m['f1']:.3f}")
        held_p.append(p >= t)
        held_scores.append(p)
        held_y.append(y)
    sel, y = np.concatenate(held_p), np.concatenate(held_y)
    m = turn_prf(int(sel.sum()), int((sel & y).sum()), int(y.sum()))
    pool_p = np.concatenate(held_scores)
    for t in np.arange(0.25, 0.5, 0.02):
        mm = figures(pool_p, y, t)
        print(f"  pooled at {t:.2f}: P={mm['precision']:.3f} R={mm['recall']:.3f} "
              f"F1={mm['f1']:.3f}")
    print(f"held out, pooled: P={m['precision']:.3f} R={m['recall']:.3f} F1={m['f1']:.3f}")
    rows = [r for rows in per.values() for r in rows]
    w = fit(rows, names)
    p, y = probs(rows, w), np.array([g for _, g in rows])
    t = best_threshold(p, y)
    m = figures(p, y, t)
    print(f"all seven (in sample): t={t:.2f} P={m['precision']:.3f} R={m['recall']:.3f} "
          f"F1={m['f1']:.3f}")
    if args.write:
        body = ",\n".join(f"    {k!r}: {v:.4f}" for k, v in sorted(w.items()))
        OUT.write_text(
            '"""The local extractor\'s weights: written by bench/train_extraction.py (LoCoMo '
            'dev,\nall seven conversations; held-out figures in '
            'docs/benchmarks.md, extraction_quality)."""\n\n'
            f"WEIGHTS: dict[str, float] = {{\n{body},\n}}\n"
            f"THRESHOLD = {t:.2f}\n")
        print("written", OUT)


if __name__ == "__main__":
    main()
