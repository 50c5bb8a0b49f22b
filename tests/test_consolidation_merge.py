"""The merged text of a consolidation (pure): every source's wording kept byte for byte,
every source's tokens among the merged text's tokens."""

from hypothesis import given, settings
from hypothesis import strategies as st

from operations.consolidation.merge import holds, merge_texts, near_identical, sentences
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
def test_every_source_keeps_its_numbers_and_its_sentences_or_their_twin(sources):
    """Each sentence of a source is in the merged text, or a near-identical sentence of a
    source is (same named things); every token holding a digit stays findable."""
    merged = merge_texts(sources)
    every = [sentence for source in sources for _, sentence in sentences(source)]

    def kept(sentence):
        return sentence in merged or holds(merged, sentence)

    for analyzer in (ANALYZERS[CONTENT], ANALYZERS[CONTENT_STEMMED]):
        tokens = set(analyzer.tokens(merged))
        for source in sources:
            numbers = {t for t in analyzer.tokens(source) if any(c.isdigit() for c in t)}
            assert numbers <= tokens, source
    for sentence in every:
        assert kept(sentence) or any(near_identical(sentence, o) and kept(o) for o in every)


def test_near_identical_sentences_are_kept_once_the_longer_wording():
    a = "Password reset emails come from no-reply@mail.harbor.example since the INC-228 fix."
    b = "Password reset emails now come from no-reply@mail.harbor.example after the INC-228 fix."
    assert merge_texts([a, b]) == merge_texts([b, a]) == b
    # Case, punctuation and white space do not make two facts.
    assert merge_texts(["Nightly backup: runs at 02:30 UTC.", "nightly  backup runs at 02:30 UTC!"]) \
        == "Nightly backup: runs at 02:30 UTC."
    assert merge_texts(["代码评审安排在上午十点以后，周五不安排评审。",
                        "代码评审安排在上午十点以后，周五不安排代码评审。"]) \
        == "代码评审安排在上午十点以后，周五不安排代码评审。"


def test_a_sentence_contained_in_a_later_one_gives_way_to_the_longer():
    base = "Rotate the signing keys every year. Refunds need approval from Mei Lin."
    longer = "Refunds need approval from Mei Lin, in writing."
    assert merge_texts([base, longer]) == (
        "Rotate the signing keys every year. Refunds need approval from Mei Lin, in writing.")


def test_distinct_facts_stay_however_alike_their_words():
    for a, b in [
        ("Refunds above 500 EUR need approval from Mei Lin before the agent confirms them.",
         "Refunds above 900 EUR need approval from Mei Lin before the agent confirms them."),
        ("Deploys of the billing service to the eu cluster happen on Monday after standup.",
         "Deploys of the billing service to the eu cluster happen on Friday after standup."),
        ("Refunds above 500 EUR do need approval from Mei Lin before the agent confirms them.",
         "Refunds above 500 EUR do not need approval from Mei Lin before the agent confirms."),
        ("Use argon2 for password hashing.", "Rotate the signing keys yearly."),
    ]:
        assert not near_identical(a, b)
        merged = merge_texts([a, b])
        assert a in merged and b in merged
