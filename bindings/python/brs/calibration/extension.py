"""Launch-bound grids: a default grid over which the time barely grows is extended with larger
batch sizes, within the memory budget."""

import warnings

from ..cost_model import TEXT_TERMS, combine, cost_terms
from . import grid as _grid, timing as _timing

#: ... and extensions of a default grid (below) skip shapes above this many on CPU.
CPU_MAX_EXTENDED_TOKENS = 4 * _grid.CPU_MAX_GRID_TOKENS
#: A default grid over which the time grows less than this factor, from its fewest to its most
#: padded tokens, is launch-bound (a GPU running small shapes): the fit would see only the
#: intercept, so the grid is extended with larger batch sizes.
GROWTH_MIN = 2.0
#: At most this many extensions, each adding 2x and 4x the largest batch size so far.
MAX_EXTENSIONS = 3
#: Extensions keep the fitted peak memory under this fraction of the budget.
EXTENSION_MEMORY_FRACTION = 0.8


def growth(rows):
    """(time of the shape with the most padded tokens / the one with the fewest, their tokens)."""
    by_tokens = sorted(rows, key=lambda r: (r["batch_size"] * r["length"], r["seconds"]))
    low, high = by_tokens[0], by_tokens[-1]
    ratio = high["seconds"] / low["seconds"] if low["seconds"] > 0 else float("inf")
    return ratio, low["batch_size"] * low["length"], high["batch_size"] * high["length"]


def extend(rows, measure, device, budget):
    """Add larger batch sizes while the time does not grow over the grid; the sizes added.

    A GPU runs small shapes in the time of their kernel launches: over such a grid the time
    is flat, and the fit finds an intercept and no time per token. Doubling the batch sizes
    reaches the shapes where the device is busy, within the memory budget (by the memory fit
    of the shapes so far, and an out-of-memory error ends the extension, not the calibration).
    """
    added = []
    for _ in range(MAX_EXTENSIONS):
        ratio, low, high = growth(rows)
        if ratio >= GROWTH_MIN:
            break
        shapes = _larger_shapes(rows, device, budget)
        if not shapes:
            break
        warnings.warn(f"calibrate: the time grew only {ratio:.2f}x from {low} to {high} padded "
                      "tokens (the device is launch-bound at these shapes): extending the grid "
                      f"with batch sizes {sorted({s[0] for s in shapes})}", stacklevel=3)
        try:
            more, _ = measure(shapes)
        except _timing.OutOfMemory:
            break
        rows.extend(more)
        added.extend(sorted({s[0] for s in shapes}))
    return added


def _larger_shapes(rows, device, budget):
    """2x and 4x the largest batch size, at each length, where memory (and on CPU the token
    cap) allows."""
    top = max(r["batch_size"] for r in rows)
    lengths = sorted({r["length"] for r in rows})
    peak = _peak_model(rows)
    shapes = []
    for bs in (2 * top, 4 * top):
        for length in lengths:
            tokens = bs * length
            if device.type == "cpu" and tokens > CPU_MAX_EXTENDED_TOKENS:
                continue
            if peak and budget and peak(bs, length) > EXTENSION_MEMORY_FRACTION * budget:
                continue
            shapes.append((bs, length))
    return shapes


def _peak_model(rows):
    """bytes(bs, L) fitted to the shapes' peaks, or None when they were not measured."""
    from . import fit as _fit

    if any(r["peak_bytes"] is None for r in rows):
        return None
    bs = [r["batch_size"] for r in rows]
    length = [r["length"] for r in rows]
    try:
        fit = _fit.fit_three_terms(bs, length, [max(r["peak_bytes"], 1) for r in rows],
                                   relative=False)
    except ValueError:
        return None
    coefficients = (fit["c0"], fit["c1"], fit["c2"])
    return lambda b, l: combine(coefficients, cost_terms(b, l)[:TEXT_TERMS])
