"""Summarisers: one interface, an extractive default, any other plugged in by setting.

``MEMORY_SUMMARISER`` names a class (dotted path) with ``summarise(texts, *, max_chars)``;
an LLM-backed one lives outside this package and is the only part tests replace.
"""

import functools
import re
from collections import Counter
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from search.index.fields import ANALYZERS, CONTENT_STEMMED

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


class Summariser(Protocol):
    def summarise(self, texts: list[str], *, max_chars: int = 1000) -> str: ...


class ExtractiveSummariser:
    """Keeps the sentences that carry the most frequent terms of all texts, in their
    original order, within ``max_chars`` (a sentence-scoring extractive summary in the
    spirit of Luhn, 1958)."""

    def summarise(self, texts: list[str], *, max_chars: int = 1000) -> str:
        analyzer = ANALYZERS[CONTENT_STEMMED]
        sentences = [s.strip() for t in texts for s in _SENTENCE.split(t) if s.strip()]
        if not sentences:
            return ""
        freq = Counter(tok for s in sentences for tok in set(analyzer.tokens(s)))
        def weight(s):
            toks = set(analyzer.tokens(s))
            return sum(freq[t] for t in toks) / (1 + len(toks)) ** 0.5
        ranked = sorted(range(len(sentences)), key=lambda i: (-weight(sentences[i]), i))
        chosen, size = [], 0
        for i in ranked:
            if sentences[i] in (sentences[j] for j in chosen):
                continue
            if size + len(sentences[i]) + 1 > max_chars and chosen:
                continue
            chosen.append(i)
            size += len(sentences[i]) + 1
        return " ".join(sentences[i] for i in sorted(chosen))[:max_chars]


@functools.cache
def _cached(path: str) -> Summariser:
    return import_string(path)()


def get_summariser() -> Summariser:
    return _cached(getattr(settings, "MEMORY_SUMMARISER",
                           "sessions.summarise.ExtractiveSummariser"))
