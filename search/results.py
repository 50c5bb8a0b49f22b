"""What a recall answers (PURE): the ranked hits, each with its explanation."""

import json
from dataclasses import dataclass, field


@dataclass
class Explain:
    bm25: float
    relevance: float
    recency: float
    importance: float
    terms: dict[str, float]
    weights: dict[str, float]
    final: float
    # Matched terms found only in the memory's context text, not its content.
    context_terms: list[str] = field(default_factory=list)
    # The time boost multiplied into ``final`` (1 = none), see search.temporal.
    time: float = 1.0
    # Cosine of query and memory embeddings when the profile rescores semantically (None:
    # not rescored, or the memory's embedding is not computed yet).
    semantic: float | None = None
    # The query's time range as a term (search.temporal.time_term): its share of the score.
    time_term: float = 0.0


@dataclass
class Hit:
    memory_id: str
    content: str
    type: str
    version: int
    score: float
    metadata: dict
    created_at: float
    importance: float
    conversation_id: str | None
    explain: Explain
    # The fact's validity (epoch seconds; None: from its creation / still holds) and the
    # memory that superseded it.
    valid_from: float | None = None
    valid_until: float | None = None
    superseded_by: str | None = None
    # Who and what it is filed under, and its agent scope.
    author: str = ""
    tags: list[str] = field(default_factory=list)
    agent_id: str = ""
    run_id: str = ""

    def take_scope(self, doc: dict[str, str]) -> None:
        """``author``, ``tags``, ``agent_id``, ``run_id`` from a memory's whole hot-store
        hash (a hash that lacks one, written before it was mirrored: left as it is)."""
        self.author = doc.get("author", self.author)
        if doc.get("tags"):
            self.tags = json.loads(doc["tags"])
        self.agent_id = doc.get("agent_id", self.agent_id)
        self.run_id = doc.get("run_id", self.run_id)

    def take_validity(self, doc: dict[str, str]) -> None:
        """Validity from a memory's hot-store hash (absent fields: left as they are)."""
        if doc.get("valid_from"):
            self.valid_from = float(doc["valid_from"])
        self.valid_until = float(doc["valid_until"]) if doc.get("valid_until") else None
        self.superseded_by = doc.get("superseded_by") or None


@dataclass
class SearchResult:
    results: list[Hit]
    match_mode_used: str
    profile: str
    took_ms: float
    terms: list[str] = field(default_factory=list)
    n_docs: int = 0
    avgdl: float = 0.0
    df: dict[str, int] = field(default_factory=dict)
    # {"range", "from", "mode", "applied"} when the query named a time, else None.
    time: dict | None = None
    # True when the search itself counted the results' recall hits (``count_hits``).
    hits_counted: bool = False
