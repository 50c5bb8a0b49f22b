"""Which memories are near-duplicates, and the groups a consolidation may merge (pure).

Input: :class:`Candidate` rows (id, text, scope) of one namespace, oldest first, and the
tokenizer the index uses (so "deploys" and "deploy" are one term). Output: :class:`Group`
lists, each of 2..``max_members`` candidates of one scope.

Similarity of two texts: the mean of the IDF-weighted Dice coefficient and the IDF-weighted
overlap coefficient (Szymkiewicz–Simpson) of their term sets A and B, with w(S) = Σ_{t ∈ S} idf(t):

    dice = 2 · w(A∩B) / (w(A) + w(B)),   overlap = w(A∩B) / min(w(A), w(B)),
    sim(a, b) = (dice + overlap) / 2                                                  (0..1)

Dice alone undervalues a note that extends another ("Use argon2 for password hashing." inside
"Use argon2 for password hashing. Rotate keys yearly."); the overlap alone would rate any
short note contained in a long one 1.0. idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5)) over the N candidates given (Lucene's
BM25 IDF), so a shared rare term ("argon2", "kestrel") counts for far more than a shared
common one ("customer", "plan"). Two candidates can pair only when

- they have the same scope (namespace, agent_id and conversation),
- they are written in the same language (:func:`.script.language_of`),
- they agree on every kind of named thing both mention (:func:`.entities.agree`),
- and sim ≥ ``threshold``.

Groups are formed by complete linkage: pairs are taken from the most similar down, and two
groups join only when EVERY pair across them can pair and the result has at most
``max_members``. So a group never chains unrelated notes through intermediate ones (single
linkage grew 48- and 73-memory groups on the demo data), and a group's ``similarity`` (its
least similar pair) is never below the threshold.

Candidate pairs come from postings of the rarest terms of each text (prefix filtering, see
:func:`_prefix`): exact, and the common terms that would pair every text with every other
are never probed.
"""

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from operations.consolidation import entities
from operations.consolidation.script import language_of

DEFAULT_THRESHOLD = 0.65
DEFAULT_MAX_MEMBERS = 8


@dataclass(frozen=True)
class Candidate:
    """One memory that may be consolidated. ``scope``: what must be equal for two memories
    to merge (namespace, agent_id, conversation); ``text``: its content."""
    id: str
    text: str
    scope: tuple = ()


@dataclass
class Group:
    """Members (candidate ids, in input order) and the similarity of the least similar
    pair (0..1). ``group_id``: ``grp_`` + 12 hex of the sorted member ids, stable across dry
    runs of the same data."""
    members: list[str]
    similarity: float
    group_id: str = field(init=False)

    def __post_init__(self):
        self.group_id = group_id(self.members)


def group_id(members: Iterable[str]) -> str:
    digest = hashlib.sha1("\n".join(sorted(members)).encode()).hexdigest()
    return "grp_" + digest[:12]


@dataclass
class _Profile:
    terms: frozenset
    language: str
    entities: dict
    weight: float = 0.0


class Corpus:
    """Term statistics and per-text profiles of a set of candidates (or any texts)."""

    def __init__(self, texts: dict[str, str], tokenize: Callable[[str], Iterable[str]]):
        known = set()
        for text in texts.values():
            known |= entities.names_inside_sentences(text)
        self.profiles = {
            key: _Profile(frozenset(tokenize(text)), language_of(text),
                          entities.extract(text, known))
            for key, text in texts.items()}
        self.df = Counter(t for p in self.profiles.values() for t in p.terms)
        self.n = len(texts)
        self._idf = {t: math.log(1 + (self.n - df + 0.5) / (df + 0.5)) for t, df in self.df.items()}
        for p in self.profiles.values():
            p.weight = sum(self._idf[t] for t in p.terms)

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return self._idf[term] if df else math.log(1 + (self.n + 0.5) / 0.5)

    def similarity(self, a: str, b: str) -> float:
        """Mean of the IDF-weighted Dice and overlap coefficients of the term sets of ``a``
        and ``b`` (keys of ``texts``), 0..1."""
        pa, pb = self.profiles[a], self.profiles[b]
        if not (pa.weight and pb.weight):
            return 0.0
        idf = self._idf
        shared = sum(idf[t] for t in pa.terms & pb.terms)
        dice = 2 * shared / (pa.weight + pb.weight)
        return (dice + shared / min(pa.weight, pb.weight)) / 2

    def compatible(self, a: str, b: str) -> bool:
        """Same language, and the entities both name agree."""
        pa, pb = self.profiles[a], self.profiles[b]
        return pa.language == pb.language and entities.agree(pa.entities, pb.entities)

    def near_duplicates(self, a: str, b: str, threshold: float = DEFAULT_THRESHOLD) -> bool:
        return self.compatible(a, b) and self.similarity(a, b) >= threshold


def _prefix(corpus: Corpus, key: str, threshold: float) -> list[str]:
    """The rarest terms of ``key`` of which a text at least as heavy must share one for a
    similarity of ``threshold`` or more (prefix filtering, Chaudhuri et al. 2006, weighted).

    For a pair with w(A) ≤ w(B) and shared weight s: dice = 2s / (w(A) + w(B)) ≤ s / w(A)
    = overlap, so sim ≥ t needs overlap ≥ t, i.e. s ≥ t · w(A). With every text's terms in
    one global order (rarest first), the pair's first shared term is among A's first terms,
    those before a rest lighter than t · w(A): else all it shares would weigh less."""
    profile = corpus.profiles[key]
    alpha = threshold * profile.weight
    rest, prefix = profile.weight, []
    for term in sorted(profile.terms, key=lambda t: (corpus.df[t], t)):
        if rest < alpha - 1e-9:
            break
        prefix.append(term)
        rest -= corpus.idf(term)
    return prefix


def _candidate_pairs(corpus: Corpus, ids: list[str], scope: dict,
                     threshold: float) -> set[tuple[str, str]]:
    """Pairs of one scope that may reach ``threshold``: each text (the lighter of a pair)
    probes the postings of its prefix terms (:func:`_prefix`) for texts at least as heavy.
    Exact; the cost is the postings of each text's rarest terms, not N². Below a threshold
    of 0.3 a term in more than ``max(200, N / 5)`` texts is not probed, to bound the cost
    (such thresholds are for looking around, and may miss pairs of common words)."""
    cap = max(200, corpus.n // 5) if threshold < 0.3 else corpus.n + 1
    postings: dict[tuple, list[str]] = {}
    for key in ids:
        for term in corpus.profiles[key].terms:
            postings.setdefault((scope[key], term), []).append(key)
    rank = {key: (corpus.profiles[key].weight, key) for key in ids}
    pairs = set()
    for a in ids:
        for term in _prefix(corpus, a, threshold):
            keys = postings[(scope[a], term)]
            if len(keys) > cap:
                continue
            pairs.update((a, b) for b in keys if rank[b] > rank[a])
    return pairs


def _link(ids: list[str], edges: dict[frozenset, float], max_members: int) -> list[Group]:
    """Complete-linkage groups from ``edges`` ({pair: similarity}, only pairs that may
    merge), most similar pairs first; members keep the order of ``ids``."""
    order = {key: i for i, key in enumerate(ids)}
    cluster = {key: (key,) for key in ids}
    for pair, _ in sorted(edges.items(), key=lambda e: (-e[1], sorted(order[k] for k in e[0]))):
        a, b = sorted(pair, key=order.get)
        ca, cb = cluster[a], cluster[b]
        if ca is cb or ca == cb or len(ca) + len(cb) > max_members:
            continue
        if all(frozenset((x, y)) in edges for x in ca for y in cb):
            joined = tuple(sorted(ca + cb, key=order.get))
            for key in joined:
                cluster[key] = joined
    groups, seen = [], set()
    for key in ids:
        members = cluster[key]
        if len(members) < 2 or members in seen:
            continue
        seen.add(members)
        sim = min(edges[frozenset((x, y))] for i, x in enumerate(members) for y in members[i + 1:])
        groups.append(Group(list(members), round(sim, 4)))
    return groups


def plan_groups(candidates: list[Candidate], *, tokenize: Callable[[str], Iterable[str]],
                threshold: float = DEFAULT_THRESHOLD,
                max_members: int = DEFAULT_MAX_MEMBERS) -> list[Group]:
    """The groups to merge among ``candidates`` (see the module docstring). ``threshold``
    0..1, ``max_members`` ≥ 2; raises ValueError otherwise. Groups come in the order of their
    first member."""
    if not 0 <= threshold <= 1:
        raise ValueError("threshold must be within 0..1")
    if max_members < 2:
        raise ValueError("max_members must be 2 or more")
    corpus = Corpus({c.id: c.text for c in candidates}, tokenize)
    scope = {c.id: c.scope for c in candidates}
    ids = [c.id for c in candidates]
    edges = {}
    for a, b in _candidate_pairs(corpus, ids, scope, threshold):
        sim = corpus.similarity(a, b)  # cheaper than the entity check: first
        if sim >= threshold and corpus.compatible(a, b):
            edges[frozenset((a, b))] = sim
    return _link(ids, edges, max_members)
