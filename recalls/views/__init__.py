"""The Recalls pages: ``browse`` (the log and one recall, replayed) and ``grading`` (its
results graded as lab judgments, its query added to a query set)."""
