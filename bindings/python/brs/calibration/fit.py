"""Non-negative least squares for the models calibration fits (the cost terms), numpy only.

With a handful of unknowns the exact NNLS solution is found by trying every subset of
coefficients allowed to be non-zero (seven least-squares solves for three) and keeping the best
feasible one: the optimum of a convex problem under x >= 0 is the unconstrained optimum on its
support. The timed points of brs.calibrate are solved as points (nnls); online calibration,
whose ranks add up sums of products rather than gather points, solves the same problem from
those sums (nnls_from_sums).
"""

import itertools

import numpy as np

from ..cost_model import TEXT_TERMS, cost_terms


def nnls(design, target, weights=None):
    """argmin ||W (A x - y)|| subject to x >= 0, for a design with a handful of columns."""
    a = np.asarray(design, dtype=float)
    y = np.asarray(target, dtype=float)
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=float)
    aw, yw = a * w[:, None], y * w

    def solve(cols):
        return np.linalg.lstsq(aw[:, cols], yw, rcond=None)[0]

    def residual(x):
        return float(np.sum((aw @ x - yw) ** 2))

    return _best_support(a.shape[1], solve, residual, residual(np.zeros(a.shape[1])))


def nnls_from_sums(gram, moment, constant, scale):
    """argmin x^T G x - 2 m.x + c subject to x >= 0: nnls from the sums of its points,
    G = A^T W^2 A, m = A^T W^2 y and c = y^T W^2 y. ``scale`` equilibrates the columns (the
    cost terms span 1 .. 1e9): each subproblem is solved on G scaled by it on both sides."""
    gram, moment = np.asarray(gram, dtype=float), np.asarray(moment, dtype=float)

    def solve(cols):
        s = scale[cols]
        z, *_ = np.linalg.lstsq(gram[np.ix_(cols, cols)] * np.outer(s, s), moment[cols] * s,
                                rcond=None)
        return z * s

    def residual(x):
        return x @ gram @ x - 2 * x @ moment + constant

    return _best_support(len(moment), solve, residual, constant)


def _best_support(columns, solve, residual, residual_of_zero):
    """The x >= 0 of least ``residual`` over every support: ``solve(cols)`` is the
    unconstrained optimum with only ``cols`` non-zero; a support whose optimum has a negative
    coefficient is infeasible. All zeros when no support beats ``residual_of_zero``."""
    best, best_residual = np.zeros(columns), residual_of_zero
    for size in range(1, columns + 1):
        for support in itertools.combinations(range(columns), size):
            cols = list(support)
            x_s = solve(cols)
            if np.any(x_s < 0):
                continue
            x = np.zeros(columns)
            x[cols] = x_s
            value = residual(x)
            if value < best_residual:
                best, best_residual = x, value
    return best


def design(batch_sizes, lengths):
    """One column per text cost term (brs.cost_model.cost_terms: 1, bs*L, bs*L^2), a row per
    shape."""
    bs = np.asarray(batch_sizes, dtype=float)
    length = np.asarray(lengths, dtype=float)
    return np.column_stack(np.broadcast_arrays(*cost_terms(bs, length)[:TEXT_TERMS]))


def fit_three_terms(batch_sizes, lengths, values, relative=True, robust=False):
    """Fit values ~ c0 + c1*bs*L + c2*bs*L^2; a dict with c0, c1, c2, r2, worst (the largest
    relative residual) and outliers (indices left out of the fit).

    ``relative`` weighs every point by 1/value, so a 2 ms shape counts as much as a 2 s one:
    the planner compares costs by ratio, not by absolute error. ``robust`` refits once without
    the points whose relative residual exceeds max(OUTLIER_FLOOR, OUTLIER_FACTOR x the median
    one): on a shared machine one shape can be slowed by another process for all its repeats.
    """
    bs = np.asarray(batch_sizes, dtype=float)
    length = np.asarray(lengths, dtype=float)
    y = np.asarray(values, dtype=float)
    if np.linalg.matrix_rank(design(bs, length)) < TEXT_TERMS:
        raise ValueError("the grid cannot fit intercept, bs*L and bs*L^2 apart: give at least "
                         "two lengths and three (batch size, length) shapes whose bs*L differ")
    keep = np.ones(len(y), dtype=bool)
    coef = _solve(bs, length, y, relative)
    if robust:
        rel = _relative_residuals(design(bs, length) @ coef, y)
        keep = rel <= max(OUTLIER_FLOOR, OUTLIER_FACTOR * float(np.median(rel)))
        kept_design = design(bs[keep], length[keep])
        if not keep.all() and np.linalg.matrix_rank(kept_design) == TEXT_TERMS:
            coef = _solve(bs[keep], length[keep], y[keep], relative)
        else:
            keep[:] = True
    r2, worst = quality(design(bs[keep], length[keep]) @ coef, y[keep])
    return {"c0": float(coef[0]), "c1": float(coef[1]), "c2": float(coef[2]), "r2": r2,
            "worst": worst, "outliers": [int(i) for i in np.flatnonzero(~keep)]}


OUTLIER_FLOOR = 0.25
OUTLIER_FACTOR = 4.0


def _solve(bs, length, y, relative):
    weights = 1.0 / np.maximum(y, 1e-12) if relative else None
    return nnls(design(bs, length), y, weights)


def quality(predicted, values):
    """(R^2, the largest relative residual) of a fit's predictions of ``values``."""
    predicted, y = np.asarray(predicted, dtype=float), np.asarray(values, dtype=float)
    total = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum((y - predicted) ** 2)) / total if total > 0 else 1.0
    return r2, float(np.max(_relative_residuals(predicted, y)))


def _relative_residuals(predicted, y):
    return np.abs(predicted - y) / np.maximum(np.abs(y), 1e-12)


# -- which repeat of a shape to fit -------------------------------------------------------------

#: The per-shape statistics of the timed repeats a time fit may use, in order of preference.
ESTIMATORS = ("min", "median")
#: The median repeat is fitted instead of the fastest when its fit's median relative residual is
#: below this fraction of the fastest repeat's: clearly more consistent across the shapes, not
#: a tie.
MEDIAN_PREFERRED_BELOW = 0.75
#: ... and only when the minima's fit is off by more than this (median relative residual):
#: below it the minima are consistent, whatever the medians do.
MIN_GOOD_ENOUGH = 0.005


def estimator_values(rows, estimator):
    """Each row's time by ``estimator``: ``seconds`` (its fastest warm repeat) for "min", its
    ``median_seconds`` for "median" (from ``spread`` in rows written before it was kept)."""
    if estimator == "min":
        return [r["seconds"] for r in rows]
    return [r["median_seconds"] if r.get("median_seconds") is not None
            else r["seconds"] * (1.0 + r.get("spread", 0.0)) for r in rows]


def fit_timings(rows):
    """The time fit of timed rows (batch_size, length, seconds, median_seconds): fit_three_terms
    of the fastest repeats and of the median repeats, keeping the fit whose kept points the
    three-term form describes better (the median's only where the minima's fit is off by more
    than MIN_GOOD_ENOUGH and the median's by less than MEDIAN_PREFERRED_BELOW times that); its
    dict, with ``estimator`` ("min" or "median") and ``residuals`` (the median relative
    residual of each).

    Why not always the minimum: interference only adds time, but on a CPU whose other
    hyperthread or cache is busy part of the time the repeats are bimodal (a fast state and one
    25-35% slower), and the fastest of five repeats lands in the fast state for some shapes and
    not others. Minima of mixed states are inconsistent across the shapes, and no cost form
    fits them (a tiny Qwen2: R^2 0.965, held-out error 10% median, where the medians of the same
    repeats follow the three-term form within 2%). The median repeat is in the common state for
    every shape. Where the minima are consistent (a quiet machine, or one whose load is steady)
    their fit is the better or as good, and is kept."""
    bs = [r["batch_size"] for r in rows]
    length = [r["length"] for r in rows]
    fits, scores = {}, {}
    for estimator in ESTIMATORS:
        values = np.asarray(estimator_values(rows, estimator), dtype=float)
        fit = fit_three_terms(bs, length, values, robust=True)
        keep = np.ones(len(values), dtype=bool)
        keep[fit["outliers"]] = False
        coef = np.array([fit["c0"], fit["c1"], fit["c2"]])
        predicted = design(np.asarray(bs)[keep], np.asarray(length)[keep]) @ coef
        fits[estimator] = fit
        scores[estimator] = float(np.median(_relative_residuals(predicted, values[keep])))
    chosen = ("median" if scores["min"] > MIN_GOOD_ENOUGH
              and scores["median"] < MEDIAN_PREFERRED_BELOW * scores["min"] else "min")
    return dict(fits[chosen], estimator=chosen, residuals=scores)
