"""The (batch size, length) shapes calibrate times: the ones given, or batch sizes 1 to 8 at
quantiles of the dataset's lengths (docs/calibration.md)."""

DEFAULT_QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
DEFAULT_BATCH_SIZES = (1, 2, 4, 8)
#: Default grids skip shapes above this many padded tokens on CPU, where a large shape takes
#: seconds per pass; on CUDA every shape of the grid runs.
CPU_MAX_GRID_TOKENS = 4096
_LENGTH_ROUND = 8


def build(limit, data, device, batch_sizes, seq_lens):
    """(bs, L) shapes, smallest bs*L first: a shape that runs out of memory comes last.
    ``limit``: the model's positions (shapes.max_positions), or None."""
    import numpy as np

    from . import fit as _fit

    explicit = batch_sizes is not None or seq_lens is not None
    sizes = _int_list("batch_sizes", batch_sizes) if batch_sizes is not None \
        else list(DEFAULT_BATCH_SIZES)
    if seq_lens is not None:
        lens = _int_list("seq_lens", seq_lens)
        if limit and max(lens) > limit:
            raise ValueError(f"calibrate: seq_lens holds {max(lens)}, above the model's "
                             f"{limit} positions")
    else:
        lens = _quantile_lengths(data, limit)
    shapes = sorted({(b, l) for b in sizes for l in lens}, key=lambda s: (s[0] * s[1], s))
    if not explicit and device.type == "cpu":
        shapes = [s for s in shapes if s[0] * s[1] <= CPU_MAX_GRID_TOKENS] or shapes[:1]
    design = _fit.design(*zip(*shapes))
    if np.linalg.matrix_rank(design) < design.shape[1]:
        raise ValueError(f"calibrate: the grid batch_sizes={sizes} x seq_lens={lens} cannot fit "
                         "intercept, bs*L and bs*L^2 apart: give at least two distinct lengths "
                         "and three shapes")
    return shapes


def _int_list(name, values):
    try:
        out = sorted({int(v) for v in values})
    except (TypeError, ValueError):
        raise TypeError(f"calibrate: {name} must be a list of ints; got {values!r}") from None
    if not out or out[0] < 1:
        raise ValueError(f"calibrate: {name} must hold ints >= 1; got {values!r}")
    return out


def _quantile_lengths(data, limit):
    import numpy as np

    top = int(data.max()) if limit is None else min(int(data.max()), limit)
    picks = np.quantile(np.minimum(data, top), DEFAULT_QUANTILES)
    rounded = {min(top, int(-(-p // _LENGTH_ROUND) * _LENGTH_ROUND)) for p in picks}
    return sorted(max(1, v) for v in rounded)
