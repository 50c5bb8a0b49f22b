"""Realistic memories and questions for bench/recall.py, from the public data in
``../shared/data`` (never copied into the repository).

Memories are LoCoMo dialog turns (``"speaker: text"``, the two previous turns and the next one
of the same session as ``context``, as ``import_locomo`` stores them), replicated and perturbed
up to the wanted size: each replica of a conversation gets its own speaker names and a share of
its words swapped for other words of the corpus, so texts are distinct (nothing deduplicates)
while keeping LoCoMo's length and word statistics. About 5 % are Chinese sentences from the
CMRC 2018 paragraphs. Questions are LoCoMo's own (names mapped to one replica), CMRC's, and
rare / common term pairs drawn from the corpus' document frequencies.
"""

import json
import random
import re
from collections import Counter
from pathlib import Path

NAMES = ("Aaron Abby Adele Aiden Alma Amir Anika Arlo Asha Aurora Basil Bea Bodhi Bram Cala "
         "Cato Cleo Dario Della Dev Eden Elio Ezra Faye Felix Fern Gia Gus Hana Hugo Ines Ira "
         "Isla Jade Joel Juno Kai Kaia Kenji Lark Leo Lila Luca Mabel Milo Mira Nadia Nico Noor "
         "Oona Orin Otto Pia Quinn Rafe Remy Rhea Rio Rosa Rumi Sage Sami Saul Tala Teo Thea "
         "Uma Vera Wren Yara Yuki Zane Zara Zora").split()
WORD = re.compile(r"[A-Za-z][a-z]{3,}")


def load_locomo(data_dir: Path) -> list[dict]:
    """Conversations: ``{"sample_id", "speakers", "sessions": [[(speaker, text)...]...]}``."""
    out = []
    for sample in json.loads((data_dir / "locomo_dev.json").read_text()):
        conv = sample["conversation"]
        sessions = []
        n = 1
        while f"session_{n}" in conv:
            turns = []
            for turn in conv[f"session_{n}"]:
                text = turn.get("text", "")
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                turns.append((turn["speaker"], text))
            sessions.append(turns)
            n += 1
        out.append({"sample_id": sample["sample_id"],
                    "speakers": [conv["speaker_a"], conv["speaker_b"]], "sessions": sessions})
    return out


def load_cmrc(data_dir: Path) -> tuple[list[str], list[str]]:
    """Chinese sentences of the CMRC paragraphs, and its questions."""
    doc = json.loads((data_dir / "cmrc2018_dev_part.json").read_text())
    sentences, questions = [], []
    for article in doc["data"]:
        for para in article["paragraphs"]:
            sentences += [s + "。" for s in para["context"].split("。") if len(s) >= 8]
            questions += [q["question"] for q in para["qas"]]
    return sentences, questions


def _swap_words(rng, text: str, vocab: list[str], share: float) -> str:
    return WORD.sub(lambda m: rng.choice(vocab) if rng.random() < share else m.group(0), text)


def build(data_dir: Path, n_docs: int, *, seed: int = 1, chinese_share: float = 0.05,
          swap_share: float = 0.12, shuffle: bool = True) -> tuple[list[dict], dict]:
    """``n_docs`` memory items (``user_id`` left to the caller) and the replica name maps;
    ``shuffle=False`` keeps each conversation's turns in their order (the Chinese last).

    Items: ``{"content", "context", "conversation_id"}``. Returns ``(items, info)`` where
    ``info["replicas"]`` maps a sample id to the name map of each of its replicas."""
    rng = random.Random(seed)
    convs = load_locomo(data_dir)
    sentences, _ = load_cmrc(data_dir)
    vocab = sorted({w for c in convs for s in c["sessions"] for _, t in s
                    for w in WORD.findall(t)})
    items, seen, replicas = [], set(), {}
    n_chinese = int(n_docs * chinese_share)
    replica = 0
    while len(items) < n_docs - n_chinese:
        for conv in convs:
            names = dict(zip(conv["speakers"], rng.sample(NAMES, 2), strict=True))
            replicas.setdefault(conv["sample_id"], []).append(names)
            share = 0.0 if replica == 0 else swap_share

            def rename(text, names=names):
                for old, new in names.items():
                    text = text.replace(old, new)
                return text

            for s_no, session in enumerate(conv["sessions"]):
                lines = [rename(f"{sp}: {_swap_words(rng, t, vocab, share)}") for sp, t in session]
                for i, line in enumerate(lines):
                    if line in seen or len(items) >= n_docs - n_chinese:
                        continue
                    seen.add(line)
                    context = "\n".join(lines[max(0, i - 2):i] + lines[i + 1:i + 2])
                    items.append({"content": line, "context": context,
                                  "conversation_id": f"{conv['sample_id']}-r{replica}-s{s_no}"})
        replica += 1
    while len(items) < n_docs:
        a, b = rng.sample(sentences, 2)
        text = a if rng.random() < 0.5 else a + b
        if text in seen:
            text = f"{text}（{rng.randint(1, 10**6)}）"
        seen.add(text)
        items.append({"content": text, "context": "", "conversation_id": None})
    if shuffle:
        rng.shuffle(items)
    return items, {"replicas": replicas}


def questions(data_dir: Path, info: dict, *, n: int, seed: int = 2) -> list[str]:
    """LoCoMo questions, each with its conversation's names mapped to a random replica."""
    rng = random.Random(seed)
    speakers = {c["sample_id"]: c["speakers"] for c in load_locomo(data_dir)}
    rows = [json.loads(line) for line in
            (data_dir / "locomo_dev_qrels.jsonl").read_text().splitlines() if line.strip()]
    rng.shuffle(rows)
    out = []
    for row in rows[:n]:
        names = rng.choice(info["replicas"][row["sample_id"]])
        q = row["question"]
        for old in speakers[row["sample_id"]]:
            q = q.replace(old, names[old])
        out.append(q)
    return out


def chinese_questions(data_dir: Path, *, n: int, seed: int = 3) -> list[str]:
    _, qs = load_cmrc(data_dir)
    return random.Random(seed).sample(qs, min(n, len(qs)))


def term_pairs(token_lists: list[list[str]], *, n: int, seed: int = 4) -> dict[str, list[str]]:
    """``rare`` (2 <= df <= 20) and ``common`` (df >= 5 % of documents) term pairs."""
    df = Counter(t for toks in token_lists for t in set(toks))
    rare = sorted(t for t, d in df.items() if 2 <= d <= 20 and t.isascii())
    common = sorted(t for t, d in df.items() if d >= 0.05 * len(token_lists))
    rng = random.Random(seed)
    return {"rare": [" ".join(rng.sample(rare, 2)) for _ in range(n)],
            "common": [" ".join(rng.sample(common, 2)) for _ in range(n)]}
