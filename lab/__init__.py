"""Ranking lab: judgments, query sets, evaluation and runs (ranking profiles, versioned, are
the search engine's: ``search.profile_services``).

Services (the only writers of Judgment, QuerySet and EvalRun: ``lab.judgments``,
``lab.query_sets``, ``lab.runs``) are keyword-only, check the actor's role and run in one
transaction; selectors only read. Ranking comes from :func:`search.memory_search.memory_search`
(so the lab measures exactly what recall serves) and the metrics from the pure
:mod:`search.ranking_metrics`.

Permissions (DESIGN "API"): viewers read and evaluate; editors create and edit their own
profiles, query sets, judgments and runs; admins edit any profile, delete profiles and
choose the default. The built-in profiles ``bm25`` and ``keyword`` are defined by DESIGN
("score is raw BM25", "0.5 / 0.3 / 0.2"), so they cannot be deleted, renamed or re-tuned:
only their default mark may change.
"""
