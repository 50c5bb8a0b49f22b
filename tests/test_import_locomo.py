"""``import_locomo``: one memory per dialog turn, dates from the session, dedup on re-run, and
the turns are searchable when the command returns. Parsing helpers of ``operations.locomo``."""

import datetime as dt
import json

import pytest
from django.core.management import CommandError, call_command

from memories.models import Memory
from operations.locomo import iter_turns, parse_session_date, turn_content
from search.memory_search import memory_search

# The PostgreSQL pass runs these (scripts/test -m postgres): bulk inserts.
pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

SAMPLE = {
    "sample_id": "conv-test",
    "qa": [{"question": "never read", "evidence": ["D1:1"]}],
    "event_summary": {"never": "read"},
    "conversation": {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! Good to see you!"},
            {
                "speaker": "Melanie",
                "dia_id": "D1:2",
                "text": "I painted a lake sunrise last week.",
                "img_url": ["https://example.invalid/p.jpg"],
                "blip_caption": "a photo of a painting of a sunset over a lake",
            },
            {
                "speaker": "Caroline",
                "dia_id": "D1:3",
                "text": "I went to a LGBTQ support group yesterday.",
            },
        ],
        "session_2_date_time": "10:04 am on 19 December, 2023",
        "session_2": [
            {"speaker": "Melanie", "dia_id": "D2:1", "text": "We went camping with the kids."},
            {"speaker": "Caroline", "dia_id": "D2:2", "text": "Hey Mel! Good to see you!"},
        ],
    },
}
TURNS = 5


@pytest.fixture
def locomo_file(tmp_path):
    path = tmp_path / "locomo.json"
    second = json.loads(json.dumps(SAMPLE))
    second["sample_id"] = "conv-other"
    path.write_text(json.dumps([SAMPLE, second]), encoding="utf-8")
    return path


def run(path, *extra):
    call_command("import_locomo", str(path), "--no-progress", *extra)


def test_it_imports_one_memory_per_turn(builtins, locomo_file, capsys):
    run(locomo_file, "--limit-samples", "1")
    assert "1 samples, 5 turns: 5 memories created, 0 deduplicated" in capsys.readouterr().out
    rows = {m.metadata["dia_id"]: m for m in Memory.objects.filter(user_id="conv-test")}
    assert len(rows) == TURNS == Memory.objects.count()

    first = rows["D1:1"]
    assert first.content == "Caroline: Hey Mel! Good to see you!"
    assert first.conversation_id == "session_1"
    assert first.type == "long_term" and first.importance == 0.5 and first.source == "locomo"
    assert first.metadata == {"dia_id": "D1:1", "speaker": "Caroline", "session": 1}
    assert first.created_at == dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.UTC)
    assert rows["D1:3"].created_at == first.created_at + dt.timedelta(seconds=2)
    assert rows["D1:2"].content == (
        "Melanie: I painted a lake sunrise last week. "
        "[shares a photo: a photo of a painting of a sunset over "
        "a lake]"
    )
    # Same text in another session is another memory (dedup is per conversation).
    assert rows["D2:2"].conversation_id == "session_2"
    assert rows["D2:2"].created_at == dt.datetime(2023, 12, 19, 10, 4, 1, tzinfo=dt.UTC)
    assert rows["D2:2"].metadata["session"] == 2


def test_a_rerun_deduplicates(builtins, locomo_file, capsys):
    run(locomo_file)
    assert Memory.objects.count() == 2 * TURNS
    capsys.readouterr()
    run(locomo_file)
    assert "10 turns: 0 memories created, 10 deduplicated" in capsys.readouterr().out
    assert Memory.objects.count() == 2 * TURNS


def test_imported_turns_are_searchable(builtins, locomo_file):
    run(locomo_file)
    hits = memory_search(
        user_id="conv-test", query="When did Caroline go to the support group?", limit=5
    ).results
    assert hits and hits[0].metadata["dia_id"] == "D1:3"
    # The caption is searchable, and namespaces stay apart.
    hits = memory_search(user_id="conv-other", query="painting", limit=5, profile="bm25").results
    assert [h.metadata["dia_id"] for h in hits] == ["D1:2"]
    assert all(h.conversation_id == "session_1" for h in hits)


def test_it_refuses_a_bad_file(builtins, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(CommandError):
        run(bad)
    with pytest.raises(CommandError):
        run(tmp_path / "missing.json")
    bad.write_text(json.dumps([{"conversation": {}}]), encoding="utf-8")
    with pytest.raises(CommandError, match="sample_id"):
        run(bad)
    assert Memory.objects.count() == 0


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1:56 pm on 8 May, 2023", dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.UTC)),
        ("12:24 am on 7 April, 2023", dt.datetime(2023, 4, 7, 0, 24, tzinfo=dt.UTC)),
        ("12:30 pm on 1 Sep, 2023", dt.datetime(2023, 9, 1, 12, 30, tzinfo=dt.UTC)),
        ("10:04 AM on 19 December 2023", dt.datetime(2023, 12, 19, 10, 4, tzinfo=dt.UTC)),
    ],
)
def test_parse_session_date(text, want):
    assert parse_session_date(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "13:00 pm on 1 May, 2023",
        "1:00 pm on 1 Smarch, 2023",
        "1:00 pm on 31 April, 2023",
    ],
)
def test_parse_session_date_refuses_garbage(text):
    with pytest.raises(ValueError):
        parse_session_date(text)


def test_iter_turns_reads_sessions_in_number_order():
    sample = {
        "sample_id": "s",
        "conversation": {
            "session_10": [{"speaker": "A", "dia_id": "D10:1", "text": "ten"}],
            "session_2": [{"speaker": "B", "dia_id": "D2:1", "text": "two"}],
            "session_2_summary": "ignored",
        },
    }
    turns = list(iter_turns(sample))
    assert [t["conversation_id"] for t in turns] == ["session_2", "session_10"]
    assert all(t["created_at"] is None for t in turns)  # no session date: the service's now
    assert (
        turn_content({"speaker": "A", "text": "hi", "blip_caption": "a cat"}, captions=False)
        == "A: hi"
    )
