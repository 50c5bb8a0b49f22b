"""What the live index holds for a few terms of one field: its statistics, each term's
document frequency and postings.

The reader behind ``GET /api/v1/index/terms``: operators and tests read the index through
it rather than through key names, so a later change of the postings' layout changes this
module, not its readers. Today it reads ``search.index.postings``' layout: the field's
statistics hash and one sorted set per term of the namespace's live generation, all in one
MULTI (a write or a reindex's switch lands wholly before or after it).
"""

from dataclasses import dataclass

from memories import store
from memories.errors import Busy
from search.index import fields as index_fields
from search.index import generations

MAX_TERMS = 50
# A reindex that switches the live generation between the read of ``gen`` and the MULTI
# makes the read start again; a switch is rare, so a few attempts suffice.
ATTEMPTS = 5


class GenerationMoved(Busy):
    """The live generation kept switching during every attempt (the API's 429, to be tried
    again in a second)."""


@dataclass(frozen=True)
class LiveTerms:
    """One field of a namespace's live index: ``N`` live documents, ``total_len`` the sum of
    their lengths (tokens), ``generation`` the live generation (0 before any reindex),
    ``df`` {term: documents holding it} and ``postings`` {term: [memory_id, ...] in ascending
    memory_id order}, for the terms asked."""

    N: int
    total_len: int
    generation: int
    df: dict[str, int]
    postings: dict[str, list[str]]

    @property
    def avgdl(self) -> float:
        """Mean document length in tokens (0.0 for an empty field)."""
        return self.total_len / self.N if self.N else 0.0

    def as_dict(self) -> dict:
        return {"N": self.N, "total_len": self.total_len, "avgdl": self.avgdl,
                "generation": self.generation, "df": self.df, "postings": self.postings}


def live_terms(client, *, user_id: str, field: str, terms: list[str]) -> LiveTerms | None:
    """``terms`` (index terms, looked up verbatim: no analysis) of ``field`` (one of
    ``search.index.fields.ANALYZERS``) in ``user_id``'s live index; None when Redis holds no
    index of the namespace (nothing was ever written to it, or Redis lost it). Raises
    ValueError for an unknown field or more than ``MAX_TERMS`` terms, GenerationMoved,
    RedisError."""
    if field not in index_fields.ANALYZERS:
        raise ValueError(f"unknown index field {field!r}")
    if len(terms) > MAX_TERMS:
        raise ValueError(f"at most {MAX_TERMS} terms")
    terms = list(dict.fromkeys(terms))
    base = store.namespace_base(user_id)
    for _ in range(ATTEMPTS):
        gen = int(store.text(client.get(base + "gen")) or 0)
        # Raw key names, as put.lua writes them (a term is not percent-encoded).
        head = base + field + generations.suffix(gen)
        pipe = store.NamespacePipelines(client, transaction=True).for_namespace(user_id)
        pipe.get(base + "gen")
        pipe.exists(base + "ver")
        pipe.hmget(head + ":stats", "N", "total_len")
        for term in terms:
            pipe.zrange(f"{head}:t:{term}", 0, -1)
        now_gen, indexed, (n, total), *lists = pipe.execute()
        if int(store.text(now_gen) or 0) != gen:
            continue
        if not indexed:
            return None
        postings = {t: sorted(store.text(m) for m in members)
                    for t, members in zip(terms, lists, strict=True)}
        return LiveTerms(N=int(n or 0), total_len=int(total or 0), generation=gen,
                         df={t: len(ids) for t, ids in postings.items()}, postings=postings)
    raise GenerationMoved(f"the live generation of {user_id!r} kept switching",
                          retry_after_seconds=1)
