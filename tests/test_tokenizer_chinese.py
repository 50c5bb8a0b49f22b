"""Chinese query analysis: dates and numbers keep their units, cross-word bigrams of function
characters are dropped, content characters stay findable (search.analysis.tokenizer; pure)."""

import pytest

from search.analysis.cjk_words import FUNCTION_CHAR_WORDS, FUNCTION_CHARS
from search.analysis.tokenizer import tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("4月27号", ["4月27日"]),
        ("4月27日", ["4月27日"]),
        ("04月05号", ["4月5日"]),
        ("2025年3月", ["2025", "2025年", "3月"]),
        ("1998年7月1日香港回归", ["1998", "1998年", "7月1日", "香港", "港回", "回归"]),
        ("他18岁", ["18", "18岁", "岁"]),
        ("3天前", ["3", "3天", "天前"]),
        ("第2号", ["第", "2", "2号", "号"]),
    ],
)
def test_dates_and_numbers_keep_their_units(text, tokens):
    assert tokenize(text) == tokens


def test_a_date_is_one_token_that_matches_only_that_date():
    query = tokenize("在4月27号这天，我在公园里跑了多久？")
    assert query[0] == "4月27日"
    assert "4" not in query and "27" not in query and "月" not in query
    assert "4月27日" not in tokenize("5月27日我们去了公园")


def test_latin_digits_glued_to_letters_are_not_dates():
    assert tokenize("x10月") == ["x10", "月"]
    assert tokenize("2026-04-27") == ["2026", "04", "27"]


@pytest.mark.parametrize("gram", ["号我", "们聊", "我明", "在公"])
def test_cross_word_bigrams_of_function_characters_are_dropped(gram):
    text = {"号我": "27号我在", "们聊": "我们聊了", "我明": "我明天", "在公": "我在公园"}[gram]
    assert gram not in tokenize(text)


@pytest.mark.parametrize("word", ["我国", "现在", "了解", "目的", "其他", "是否"])
def test_words_that_hold_a_function_character_are_kept(word):
    assert word in FUNCTION_CHAR_WORDS
    assert word in tokenize(f"关于{word}的问题")


def test_a_content_character_between_function_characters_stays_a_unigram():
    assert tokenize("昨天我们聊了什么") == ["昨天", "聊"]
    assert tokenize("我的书") == ["书"]
    assert tokenize("的了吗") == []


def test_without_stopwords_every_bigram_is_kept():
    assert tokenize("我们聊了", stopwords=False) == ["我们", "们聊", "聊了"]


def test_function_characters_are_han_and_words_are_two_characters():
    assert all("\u4e00" <= ch <= "\u9fff" for ch in FUNCTION_CHARS)
    assert all(len(w) == 2 and set(w) & FUNCTION_CHARS for w in FUNCTION_CHAR_WORDS)
