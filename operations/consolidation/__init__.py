"""Consolidation of near-duplicate memories: which memories form a group (:mod:`.grouping`,
with :mod:`.entities` and :mod:`.script` as its guards) and what text the merged memory gets
(:mod:`.merge`). Every module here is pure: no Django, no Redis."""
