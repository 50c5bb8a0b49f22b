"""Tests for search.analysis.tokenizer (pure; no database, no Redis)."""

import pytest

from search.analysis.tokenizer import (
    DEFAULT_ANALYZER,
    ENGLISH_STOPWORDS,
    Analyzer,
    normalize,
    tokenize,
)


def test_it_normalizes_full_width_and_case():
    assert normalize("ＶＩＰ") == "vip"
    assert normalize("ＨＥＬＬＯ　ｗｏｒｌｄ１２３") == "hello world123"
    assert normalize("Straße") == "strasse"


def test_it_splits_a_chinese_sentence_into_bigrams():
    tokens = tokenize("我明天要去杭州出差")
    assert "杭州" in tokens
    assert len(tokens) > 1
    # Bigrams of a function character across two words (我明, 天要, 要去) are dropped.
    assert tokens == ["明天", "去杭", "杭州", "州出", "出差"]


def test_it_makes_overlapping_bigrams_like_lucene_cjk_bigram_filter():
    assert tokenize("杭州出差") == ["杭州", "州出", "出差"]


def test_it_keeps_an_isolated_cjk_character_as_a_unigram():
    assert tokenize("猫 and dogs") == ["猫", "dogs"]


def test_it_splits_latin_from_cjk_and_drops_full_width_punctuation():
    tokens = tokenize("请问VIP会员怎么续费？")
    assert "" not in tokens
    assert "？" not in tokens and "?" not in tokens
    assert "vip" in tokens
    assert "续费" in tokens
    assert "会员" in tokens
    assert "怎么" not in tokens  # Chinese stopword bigram


def test_it_handles_mixed_scripts_in_order():
    tokens = tokenize("Meeting with 张伟 about the Q3 预算, then 東京タワー")
    assert tokens == [
        "meeting",
        "张伟",
        "q3",
        "预算",
        "東京",
        "京タ",
        "タワ",
        "ワー",
    ]


def test_it_tokenizes_hangul_as_bigrams():
    assert tokenize("안녕하세요") == ["안녕", "녕하", "하세", "세요"]


def test_it_ignores_emoji_glued_to_words():
    tokens = tokenize("🌱plants need water every 3 days🚿")
    assert "plants" in tokens
    assert "days" in tokens
    assert "3" in tokens
    assert all(tokens)


def test_it_returns_nothing_for_a_lone_emoji():
    assert tokenize("🌱") == []


def test_it_folds_full_width_text():
    assert tokenize("ＨＥＬＬＯ　ｗｏｒｌｄ１２３") == ["hello", "world123"]


def test_it_returns_nothing_for_a_stopword_only_query():
    assert tokenize("what is it that they were doing?") == []
    assert tokenize("我们") == []
    assert tokenize("的") == []


def test_it_keeps_stopwords_when_disabled():
    assert tokenize("what is it", stopwords=False) == ["what", "is", "it"]
    assert tokenize("的", stopwords=False) == ["的"]


def test_it_stems_when_enabled():
    assert tokenize("running", stemming=True) == ["run"]
    assert tokenize("plants need water every 3 days", stemming=True) == [
        "plant",
        "need",
        "water",
        "everi",
        "3",
        "day",
    ]


def test_it_keeps_words_unstemmed_by_default():
    assert tokenize("running") == ["running"]


def test_it_does_not_stem_digits_or_cjk():
    assert tokenize("2026 杭州出差 x1234567", stemming=True) == [
        "2026",
        "杭州",
        "州出",
        "出差",
        "x1234567",
    ]


def test_it_returns_nothing_for_punctuation_only():
    assert tokenize("...!?，。？、「」—()[]{}") == []
    assert tokenize("") == []
    assert tokenize("   \n\t") == []


def test_it_keeps_digits_and_splits_on_underscores():
    assert tokenize("order x1234567 shipped 2026 via snake_case") == [
        "order",
        "x1234567",
        "shipped",
        "2026",
        "via",
        "snake",
        "case",
    ]


def test_it_drops_possessive_s():
    assert tokenize("Caroline's garden") == ["caroline", "garden"]
    assert tokenize("Caroline’s garden") == ["caroline", "garden"]


def test_it_splits_contractions_and_drops_the_stopword_halves():
    assert tokenize("don't forget") == ["forget"]
    assert tokenize("don't", stopwords=False) == ["don", "t"]


def test_it_has_a_standard_sized_english_stopword_list():
    assert 100 <= len(ENGLISH_STOPWORDS) <= 180
    assert {"the", "a", "and", "is", "of"} <= ENGLISH_STOPWORDS


def test_it_rejects_an_unknown_cjk_mode():
    with pytest.raises(ValueError):
        tokenize("x", cjk="unigram")
    with pytest.raises(ValueError):
        Analyzer(cjk="unigram")


def test_it_segments_with_jieba_when_asked():
    tokens = tokenize("请问VIP会员怎么续费？", cjk="jieba")
    assert "vip" in tokens
    assert "续费" in tokens
    assert "" not in tokens
    assert "怎么" not in tokens
    assert "杭州" in tokenize("我明天要去杭州出差", cjk="jieba")


def test_it_counts_term_frequencies():
    analyzer = Analyzer(stemming=True)
    assert analyzer.term_frequencies("Plants, plants and more plant food") == {
        "plant": 3,
        "food": 1,
    }


def test_it_exposes_a_default_analyzer():
    assert Analyzer(stemming=False, stopwords=True, cjk="bigram") == DEFAULT_ANALYZER
    assert DEFAULT_ANALYZER.tokens("Running 杭州") == ["running", "杭州"]
    with pytest.raises(AttributeError):
        DEFAULT_ANALYZER.stemming = True  # frozen


def test_threads_stemming_at_once_get_each_word_s_own_stem():
    """gunicorn's threads analyse texts at once (a recall beside a write): a shared Snowball
    stemmer mixed their words up, raising IndexError or returning another word's stem."""
    import sys
    import threading

    import snowballstemmer

    from search.analysis import tokenizer

    words = [f"{stem}{n}{suffix}" for n in range(800)
             for stem, suffix in (("national", "izations"), ("relat", "ional"), ("run", "ning"))]
    want = {w: snowballstemmer.stemmer("english").stemWord(w) for w in words}
    tokenizer._stem.cache_clear()
    got, errors = {}, []

    def stem_all(part):
        try:
            for w in part:
                got[w] = tokenizer._stem(w)
        except Exception as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=stem_all, args=(words[i::6],)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
        tokenizer._stem.cache_clear()
    assert errors == [] and got == want
