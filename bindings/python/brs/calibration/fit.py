"""Non-negative least squares for the three-term models calibration fits, in numpy only.

With three unknowns the exact NNLS solution is found by trying every subset of coefficients
allowed to be non-zero (eight least-squares solves) and keeping the best feasible one: the
optimum of a convex problem under x >= 0 is the unconstrained optimum on its support.
"""

import itertools

import numpy as np


def nnls(design, target, weights=None):
    """argmin ||W (A x - y)|| subject to x >= 0, for a design with a handful of columns."""
    a = np.asarray(design, dtype=float)
    y = np.asarray(target, dtype=float)
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=float)
    aw, yw = a * w[:, None], y * w
    best, best_residual = np.zeros(a.shape[1]), float(np.sum(yw ** 2))
    for size in range(1, a.shape[1] + 1):
        for support in itertools.combinations(range(a.shape[1]), size):
            cols = list(support)
            x_s, *_ = np.linalg.lstsq(aw[:, cols], yw, rcond=None)
            if np.any(x_s < 0):
                continue
            x = np.zeros(a.shape[1])
            x[cols] = x_s
            residual = float(np.sum((aw @ x - yw) ** 2))
            if residual < best_residual:
                best, best_residual = x, residual
    return best


def design(batch_sizes, lengths):
    """Columns 1, bs*L, bs*L^2: the cost model's terms (docs/algorithm.md)."""
    bs = np.asarray(batch_sizes, dtype=float)
    length = np.asarray(lengths, dtype=float)
    return np.column_stack([np.ones_like(bs), bs * length, bs * length * length])


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
    if np.linalg.matrix_rank(design(bs, length)) < 3:
        raise ValueError("the grid cannot fit intercept, bs*L and bs*L^2 apart: give at least "
                         "two lengths and three (batch size, length) shapes whose bs*L differ")
    keep = np.ones(len(y), dtype=bool)
    coef = _solve(bs, length, y, relative)
    if robust:
        rel = _relative_residuals(design(bs, length) @ coef, y)
        keep = rel <= max(OUTLIER_FLOOR, OUTLIER_FACTOR * float(np.median(rel)))
        if not keep.all() and np.linalg.matrix_rank(design(bs[keep], length[keep])) == 3:
            coef = _solve(bs[keep], length[keep], y[keep], relative)
        else:
            keep[:] = True
    predicted = design(bs[keep], length[keep]) @ coef
    kept = y[keep]
    total = float(np.sum((kept - kept.mean()) ** 2))
    r2 = 1.0 - float(np.sum((kept - predicted) ** 2)) / total if total > 0 else 1.0
    return {"c0": float(coef[0]), "c1": float(coef[1]), "c2": float(coef[2]), "r2": r2,
            "worst": float(np.max(_relative_residuals(predicted, kept))),
            "outliers": [int(i) for i in np.flatnonzero(~keep)]}


OUTLIER_FLOOR = 0.25
OUTLIER_FACTOR = 4.0


def _solve(bs, length, y, relative):
    weights = 1.0 / np.maximum(y, 1e-12) if relative else None
    return nnls(design(bs, length), y, weights)


def _relative_residuals(predicted, y):
    return np.abs(predicted - y) / np.maximum(np.abs(y), 1e-12)
