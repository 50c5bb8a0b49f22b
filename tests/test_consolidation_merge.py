"""The merged text of a consolidation (pure): every source's wording kept byte for byte,
every source's tokens among the merged text's tokens."""

from hypothesis import given, settings
from hypothesis import strategies as st

from operations.consolidation.merge import holds, merge_texts, sentences
from search.index.fields import ANALYZERS, CONTENT, CONTENT_STEMMED


def test_it_keeps_versions_and_addresses_byte_for_byte():
    a = "Harbor v2.6.0 ships on Thursday. Replies come from no-reply@mail.harbor.example."
    b = "Harbor v2.6.0 ships on Thursday. The changelog is at https://docs.harbor.example/v2.6.0."
    merged = merge_texts([a, b])
    assert merged == b + " Replies come from no-reply@mail.harbor.example."
    assert "v2. 6. 0" not in merged and "mail. harbor" not in merged


def test_it_starts_from_the_longest_source_and_adds_only_what_is_missing():
    short = "Use argon2 for password hashing."
    long = "Use argon2 for password hashing. Rotate keys yearly."
    assert merge_texts([short, long]) == long
    assert merge_texts([long, short]) == long


def test_it_joins_chinese_sentences_without_a_space():
    a = "v2.6.0 版本周四发布，发布前冻结代码。"
    b = "v2.6.0 周四发布。发布前冻结代码，只修阻塞问题。"
    assert merge_texts([a, b]) == b + a


def test_it_puts_a_line_break_after_text_without_closing_punctuation():
    a = "Queue lag dashboard in Grafana: https://grafana.harbor.example/d/queue-lag"
    b = "Queue lag dashboard. Owned by Tom Becker."
    assert merge_texts([a, b]) == a + "\nOwned by Tom Becker."


def test_held_means_at_word_boundaries_after_folding():
    assert holds("Use ARGON2 for  password hashing, always.", "use argon2 for password hashing.")
    assert not holds("We reuse argon2 here.", "Use argon2.")
    assert not holds("不好说。", "好")
    assert holds("王磊负责迁移，月底完成。", "王磊负责迁移。")


def test_it_refuses_an_empty_list_and_a_text_over_the_limit():
    import pytest

    with pytest.raises(ValueError):
        merge_texts([])
    with pytest.raises(ValueError, match="limit 10"):
        merge_texts(["One fact here.", "Another fact there."], max_chars=10)


# Texts made of pieces that stress the cuts: dotted versions, addresses, CJK, blank lines.
PIECES = ["v2.6.0", "no-reply@mail.harbor.example", "Use", "argon2", "keys", "yearly",
          "王磊", "负责", "迁移", "好", "API", "e.g.", "3.7", "Kafka", "rotate", "use"]
SEPARATORS = [" ", ". ", "! ", "? ", "。", "，", "\n", "\n\n", ", ", ": ", "; ", "  ", ".", ""]
texts = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)),
                 min_size=1, max_size=12).map(lambda parts: "".join(p + s for p, s in parts))


@settings(max_examples=300, deadline=None)
@given(texts)
def test_sentences_give_back_the_text_exactly(text):
    assert "".join(lead + sentence for lead, sentence in sentences(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6))
def test_every_source_keeps_its_tokens_and_its_sentences(sources):
    merged = merge_texts(sources)
    assert max(sources, key=len).rstrip() in merged
    for analyzer in (ANALYZERS[CONTENT], ANALYZERS[CONTENT_STEMMED]):
        tokens = set(analyzer.tokens(merged))
        for source in sources:
            assert set(analyzer.tokens(source)) <= tokens, source
    for source in sources:
        for _, sentence in sentences(source):
            assert sentence in merged or holds(merged, sentence)
