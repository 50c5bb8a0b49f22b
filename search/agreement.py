"""Agreement between raters who graded the same items (PURE: no Django, no Redis).

An item is one (query, memory) pair; a rating is a grade 0-3. Both statistics are 1 for
perfect agreement, 0 for agreement at chance level, below 0 for less than chance; both are
None when undefined (too few items, or every grade the same, so chance explains all).
"""

from collections import Counter
from collections.abc import Mapping, Sequence


def cohen_kappa_quadratic(pairs: Sequence[tuple[int, int]], categories: int = 4) -> float | None:
    """Cohen's weighted kappa with quadratic weights, for two raters.

    ``pairs``: ``[(grade of rater 1, grade of rater 2)]``, one per item both graded, each
    grade an int in ``0..categories - 1``. Quadratic weights count a disagreement by its
    squared distance, as graded relevance is ordinal (a 0 against a 3 is worse than a 2
    against a 3): ``kappa_w = 1 - sum(w_ij * o_ij) / sum(w_ij * e_ij)`` with
    ``w_ij = (i - j)^2 / (categories - 1)^2``, ``o`` the observed proportions and ``e`` the
    products of each rater's marginal proportions. Source: J. Cohen, "Weighted kappa:
    Nominal scale agreement with provision for scaled disagreement or partial credit",
    Psychological Bulletin 70(4), 213-220 (1968). None when ``pairs`` is empty or the
    expected disagreement is 0. Raises ValueError for a grade outside the categories.
    """
    if not pairs:
        return None
    n = len(pairs)
    for a, b in pairs:
        if not (0 <= a < categories and 0 <= b < categories):
            raise ValueError(f"grades must be 0..{categories - 1}")
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    scale = (categories - 1) ** 2
    observed = sum((a - b) ** 2 for a, b in pairs) / (n * scale)
    expected = sum(
        first[i] * second[j] * (i - j) ** 2 for i in first for j in second
    ) / (n * n * scale)
    if expected == 0:
        return None
    return 1.0 - observed / expected


def krippendorff_alpha_interval(items: Sequence[Sequence[float]]) -> float | None:
    """Krippendorff's alpha with the interval metric, for any number of raters.

    ``items``: one list of grades per item (every rater's grade of it; raters missing an
    item simply have no grade in its list). Items with fewer than two grades are not
    pairable and are left out. ``alpha = 1 - D_o / D_e`` with the interval difference
    ``(c - k)^2``: ``D_o`` the mean difference within items (each item's pairs weighted by
    ``1 / (m_u - 1)``), ``D_e`` the mean difference between all pairable grades. Interval,
    not ordinal: grades are used as numbers elsewhere (the gains of nDCG), so their
    distances count as such. Source: K. Krippendorff, "Computing Krippendorff's
    Alpha-Reliability" (2011), https://repository.upenn.edu/asc_papers/43/, sections on the
    coincidence matrix and the interval metric. None when fewer than two grades are
    pairable or every pairable grade is the same.
    """
    units = [list(u) for u in items if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    if n < 2:
        return None
    within = sum(_pair_sum(u) * 2 / (len(u) - 1) for u in units) / n
    between = _pair_sum(values) * 2 / (n * (n - 1))
    if between == 0:
        return None
    return 1.0 - within / between


def _pair_sum(values: Sequence[float]) -> float:
    """``sum((a - b)^2)`` over the unordered pairs of ``values``, as ``m * sum(x^2) -
    (sum(x))^2`` (linear in their number, not quadratic)."""
    return len(values) * sum(v * v for v in values) - sum(values) ** 2


def items_by_rater(ratings: Sequence[tuple[object, str, int]]) -> Mapping[object, dict[str, int]]:
    """``{item: {rater: grade}}`` from ``[(item, rater, grade)]`` (a later rating of the same
    item by the same rater replaces the earlier one)."""
    out: dict[object, dict[str, int]] = {}
    for item, rater, grade in ratings:
        out.setdefault(item, {})[rater] = grade
    return out
