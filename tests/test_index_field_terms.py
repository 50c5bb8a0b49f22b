"""``fields.field_term_frequencies`` (one analysis shared by the three index fields, context
lines cached) gives exactly what each field's analyzer gives on its own text."""

from hypothesis import given, settings
from hypothesis import strategies as st

from search.index import fields

PIECES = st.sampled_from([
    "Caroline's", "running", "plants", "the", "don't", "VIP", "ＶＩＰ", "Straße", "2026",
    "4月27号", "2025年3月", "18岁", "3天", "杭州出差", "我们聊了", "请问会员怎么续费", "的",
    "é", "e\u0301", "\u0301", "ﬁsh", "x1234567", "_", "-", ".", "？", "\n", "\r\n", " ", "\t",
    "月", "号", "日", "😀", "ä", "İstanbul", "ς",
])
TEXTS = st.lists(PIECES, max_size=30).map("".join)


def _direct(content: str, context: str) -> dict[str, dict[str, int]]:
    return {name: analyzer.term_frequencies(fields.field_text(name, content, context))
            for name, analyzer in fields.ANALYZERS.items()}


@settings(max_examples=400, deadline=None)
@given(content=TEXTS, context=TEXTS)
def test_it_equals_each_analyzer_on_its_own_text(content, context):
    got = fields.field_term_frequencies(content, context)
    want = _direct(content, context)
    assert got == want
    # Same order too: the arguments put.lua receives are the same, term by term.
    assert [list(tf) for tf in got.values()] == [list(tf) for tf in want.values()]


def test_it_analyses_a_long_context_line_without_caching_it():
    line = "calendar " * 400
    got = fields.field_term_frequencies("my calendar", line + "\nnext line")
    assert got == _direct("my calendar", line + "\nnext line")


def test_it_covers_every_index_field():
    assert set(fields.field_term_frequencies("a note", "")) == set(fields.ANALYZERS)


@settings(max_examples=300, deadline=None)
@given(content=TEXTS, context=TEXTS)
def test_a_stored_record_gives_every_field_exactly(content, context):
    """What Redis stores per memory (its record: content terms, context terms) gives every
    index field back, each alone (the serving index's build) and all at once."""
    plain, context_tf = fields.record_terms(content, context)
    meta = {"type": "long_term", "conv": "a b\nc", "exp": ""}
    text = fields.record_text(plain, context_tf, meta)
    want = {f: tf for f, tf in _direct(content, context).items() if tf}
    assert fields.record_fields(text) == want
    if text:
        record = fields.record_read(text)
        assert record.meta == {"type": "long_term", "conv": "a b\nc"}
        for f in fields.ANALYZERS:
            terms, tfs, dl = fields.record_postings(record, f)
            assert dict(zip(terms, map(int, tfs), strict=True)) == want.get(f, {})
            assert dl == sum(want.get(f, {}).values())
