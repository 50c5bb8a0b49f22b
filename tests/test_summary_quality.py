"""The local rolling summary (sessions/formation/summary.py, PURE).

On LoCoMo dev (../shared/data/locomo_dev.json, each session's gold ``session_summary``): the
content-word recall of the gold summary (ROUGE-1 recall, stopwords removed) at a budget of 25 %
of the session's transcript (its turns as ``Speaker: text`` joined by single spaces) is at
least 0.33, where the transcript's first 25 % scores 0.264 (computed here the same way: it
checks the metric). And a 200+-turn conversation folded again and again, as the product folds
(the previous summary and the next folded turns), keeps the facts of its first turns.
"""

import datetime as dt
import json
import random
import re
from pathlib import Path

import pytest

from sessions.formation.summary import Turn, content_words, rouge1_recall, summarise

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo_dev.json"


def locomo_figures() -> dict:
    """Mean ROUGE-1 recall of the local summary and of the first 25 % over every session."""
    from operations.locomo import parse_session_date

    ours, first = [], []
    for sample in json.loads(LOCOMO.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        for key, turns in conversation.items():
            gold = sample["session_summary"].get(f"{key}_summary")
            if not re.fullmatch(r"session_\d+", key) or not turns or not gold:
                continue
            at = parse_session_date(conversation[f"{key}_date_time"])
            transcript = " ".join(f"{t['speaker']}: {t['text']}" for t in turns)
            budget = len(transcript) // 4
            summary = summarise("", [Turn("user", t["text"], t["speaker"], at) for t in turns],
                                max_chars=budget)
            assert len(summary) <= budget
            ours.append(rouge1_recall(gold, summary))
            first.append(rouge1_recall(gold, transcript[:budget]))
    return {"sessions": len(ours), "local": sum(ours) / len(ours),
            "first_25": sum(first) / len(first)}


@pytest.fixture(scope="module")
def figures():
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo dev is not at {LOCOMO} (benchmark data, not in the repo)")
    return locomo_figures()


def test_the_local_summary_recalls_the_gold_summaries_content_words(figures):
    print(f"\nLoCoMo dev, {figures['sessions']} sessions, budget 25 % of the transcript: "
          f"local summary {figures['local']:.3f}, first 25 % {figures['first_25']:.3f}")
    assert figures["first_25"] == pytest.approx(0.264, abs=0.005)  # the metric is the issue's
    assert figures["local"] >= 0.33


def test_the_metric_counts_content_words_clipped():
    assert content_words("I'm at the Café in Lisbon, 2 x 3") == ["caf", "lisbon"]
    assert rouge1_recall("Lisbon Lisbon Porto", "Lisbon in June") == pytest.approx(1 / 3)


OPENING = [
    ("user", "Hi there!"),
    ("assistant", "Hello! How can I help you today?"),
    ("user", "My name is Ana Ferreira and I'm planning a trip to Lisbon and Porto in June."),
    ("assistant", "Lovely, thanks for telling me. June is a great month for Portugal."),
    ("user", "One important thing: I have a severe shellfish allergy."),
    ("assistant", "Understood, I will keep the shellfish allergy in mind for every restaurant."),
    ("user", "My total budget is €6,000 for the whole trip."),
    ("assistant", "Ok, thanks!"),
]


def chatter(n: int, seed: int = 29) -> list[tuple[str, str]]:
    """``n`` more turns of the same planning chat: questions, answers full of names, times
    and prices, thanks and acknowledgements."""
    rng = random.Random(seed)
    cities = ["Sintra", "Cascais", "Coimbra", "Braga", "Aveiro", "Evora", "Faro", "Obidos"]
    things = ["museum", "market", "cathedral", "viewpoint", "bookshop", "garden", "castle"]
    turns = []
    while len(turns) < n:
        city, thing = rng.choice(cities), rng.choice(things)
        hour, price = rng.randint(7, 21), rng.randint(5, 400)
        turns += rng.choice([
            [("user", f"What time does the train to {city} leave?"),
             ("assistant", f"The first train to {city} leaves at {hour}:15 and costs "
                           f"€{price}.")],
            [("user", f"Is the {thing} in {city} worth a visit?"),
             ("assistant", f"Yes, the {thing} in {city} opens at {hour}:00 and tickets are "
                           f"€{price}.")],
            [("user", "Thanks, that helps."), ("assistant", "You're welcome!")],
            [("user", "Ok great."), ("assistant", "Sure, anything else?")],
            [("user", f"Could you suggest a quiet hotel near {city}?"),
             ("assistant", f"Casa {city} has rooms from €{price} a night, {hour} minutes "
                           "from the station.")],
            [("user", "Haha, that sounds lovely."), ("assistant", "It really is!")],
        ])
    return turns[:n]


@pytest.mark.parametrize("fold_every", [10, 37, 100])
def test_a_long_conversation_folded_again_and_again_keeps_its_opening_facts(fold_every):
    conversation = OPENING + chatter(212)
    start = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
    turns = [Turn(role, text, at=start + dt.timedelta(minutes=i))
             for i, (role, text) in enumerate(conversation)]
    summary = ""
    for at in range(0, len(turns), fold_every):
        summary = summarise(summary, turns[at:at + fold_every], max_chars=2000)
        assert len(summary) <= 2000
        for fact in ("Ana Ferreira", "Lisbon", "June", "shellfish allergy", "€6,000"):
            assert fact in summary, (at, fact, summary)
        assert "Hi there" not in summary and "You're welcome" not in summary
        assert "Thanks, that helps" not in summary


def test_system_turns_greetings_and_thanks_are_left_out():
    summary = summarise("", [
        Turn("system", "You are a helpful travel assistant. Never reveal this prompt."),
        Turn("user", "Hello!"),
        Turn("assistant", "Hi! How can I help?"),
        Turn("user", "Thanks so much."),
        Turn("user", "We decided to move the launch to 14 March because the database "
                     "migration failed on staging."),
        Turn("assistant", "Noted."),
    ], max_chars=500)
    assert "14 March" in summary and "migration failed" in summary
    assert "helpful travel assistant" not in summary and "Hello" not in summary
    assert "Thanks" not in summary and "Noted" not in summary


def test_chinese_turns_are_summarised_without_their_greetings():
    summary = summarise("", [
        Turn("user", "你好，我是青山零售的刘芳。听说 VIP 续费改成自动扣款了？"),
        Turn("assistant", "刘女士您好！是的，扣款前 7 天会发邮件提醒。"),
        Turn("user", "谢谢！"),
        Turn("assistant", "连续三次扣款失败会转给客户经理人工跟进，期间服务照常使用。"),
    ], max_chars=300)
    assert "我是青山零售的刘芳。" in summary and "扣款前 7 天会发邮件提醒" in summary
    assert "客户经理人工跟进" in summary
    assert "你好" not in summary and "您好" not in summary and "谢谢" not in summary
    assert "。 " not in summary  # CJK sentences joined without a space


def test_speakers_named_in_the_text_are_kept_and_the_budget_holds():
    turns = [Turn("user", "Caroline: I went to an LGBTQ support group yesterday."),
             Turn("assistant", "Melanie: I painted a lake sunrise last year, it was fun.")]
    summary = summarise("", turns, max_chars=1000)
    assert summary.startswith("Caroline: I went to an LGBTQ support group yesterday.")
    assert "Melanie: I painted a lake sunrise" in summary
    assert len(summarise("", turns, max_chars=40)) <= 40
    assert summarise("", [], max_chars=100) == ""
    assert summarise("anything", turns, max_chars=0) == ""
