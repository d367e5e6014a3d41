"""The encoder part of brs.calibrate: images of chosen sizes through the model's vision tower.

A vision-language micro-batch costs its text plus, for each image of p patches,
``encoder_weight*p + encoder_alpha*p^2 + encoder_intercept`` units (docs/algorithm.md, "Two
parts"), in the unit of the text part: one padded token's linear work. So calibrate times the
text part first (its seconds_per_unit is the unit), then calls of the vision tower on ``count``
images of ``size`` patches each, for every (count, size) of a grid, with the text part's timer
(interleaved rounds, the fastest warm run kept, first runs apart), and fits the calls' seconds
in the library's form:

    seconds = k + seconds_per_unit * (encoder_weight*P + encoder_alpha*S + encoder_intercept*N)

over a call's P patches, their squares' sum S and its N images, every coefficient free (and
non-negative). k, the price of calling the tower at all, is fitted so that it does not bend the
per-image terms, and recorded, not planned with: a micro-batch with images pays it once, which
no term of the library's model expresses.

The hook is any callable ``encoder(sizes) -> step``. ``sizes`` are the images of one call, each
an int (patches) or an (h, w) grid of patches; ``step()`` runs the tower on them as training
does (forward, and backward when the tower trains) and is what is timed, so the hook builds the
inputs (pixel values, grids) before it returns. ``step.patches``, when set, lists the patch
counts it really runs (a tower taking grids of some multiple rounds a size up); otherwise the
sizes are taken as given (h*w for a grid). ``qwen2_vl(model)`` is the hook of a Qwen2-VL-style
model; ``encoder="auto"`` builds it from the model calibrate runs.
"""

import math
import numbers
import warnings

from ..cost_model import COST_TERMS, FIXED_ENCODER_WEIGHT, cost_terms, encoder_from_seconds
from . import fit as _fit, record as _record, result as _result, timing as _timing

#: The default grid: images of these many patches (8x8 to 64x64 grids; 1024 patches of 14
#: pixels is a 448x448 image) ...
DEFAULT_IMAGE_SIZES = (64, 256, 1024, 4096)
#: ... this many to a call.
DEFAULT_IMAGE_COUNTS = (1, 2, 4)
#: Default grids skip calls above this many patches on CPU, where they take seconds.
CPU_MAX_GRID_PATCHES = 4096
#: The fit's worst relative residual above which calibrate warns: the library's form then
#: misprices images by more than a quarter somewhere on the grid.
WARN_RESIDUAL = 0.25

_COLUMNS = tuple(COST_TERMS.index(t) for t in ("1", "patches", "patches^2", "images"))


# -- the arguments ------------------------------------------------------------------------------

def check(encoder, image_sizes, image_counts):
    """The encoder argument as given (None, "auto" or a callable), checked with the sizes and
    counts before anything is built; ValueError or TypeError naming what to change."""
    if encoder is None:
        if image_sizes is not None or image_counts is not None:
            raise ValueError("calibrate: image_sizes and image_counts time the vision tower: "
                             "pass encoder= too (a hook, or \"auto\" for a Qwen2-VL-style model)")
        return None
    if encoder != "auto" and not callable(encoder):
        raise TypeError("calibrate: encoder must be None, \"auto\" or a callable sizes -> step "
                        f"(docs/calibration.md); got {type(encoder).__name__}")
    return encoder


def grid(image_sizes, image_counts, device):
    """(count, size) shapes, fewest patches first; size an int or an (h, w) tuple."""
    import numpy as np

    explicit = image_sizes is not None or image_counts is not None
    sizes = _sizes(image_sizes) if image_sizes is not None else list(DEFAULT_IMAGE_SIZES)
    counts = _counts(image_counts) if image_counts is not None else list(DEFAULT_IMAGE_COUNTS)
    shapes = sorted({(c, s) for c in counts for s in sizes},
                    key=lambda shape: (shape[0] * patch_count(shape[1]), shape[0], str(shape[1])))
    if not explicit and device.type == "cpu":
        shapes = [s for s in shapes if s[0] * patch_count(s[1]) <= CPU_MAX_GRID_PATCHES]
    terms = _terms([(c, c * patch_count(s), c * patch_count(s) ** 2) for c, s in shapes])
    if not _separable(terms):
        # A call's images are all of one size p, so its P, S and N are its count times p, p^2
        # and 1: with two sizes some mix of those three terms is 0 at both, and only a third
        # size tells them apart.
        raise ValueError(f"calibrate: image_sizes {sizes} x image_counts {counts} cannot fit the "
                         "per-call, per-patch, patches^2 and per-image terms apart: give at "
                         "least three sizes (of distinct patch counts) and two counts")
    return shapes


def patch_count(size):
    """The patches of an image size: an int, or h*w of an (h, w) grid."""
    return size if isinstance(size, int) else size[0] * size[1]


def _sizes(values):
    try:
        sizes = [_size(v) for v in values]
    except (TypeError, ValueError):
        raise TypeError("calibrate: image_sizes must be a list of patch counts (ints) or (h, w) "
                        f"grids of patches; got {values!r}") from None
    if not sizes or min(patch_count(s) for s in sizes) < 1:
        raise ValueError(f"calibrate: image_sizes must hold sizes of at least one patch; got "
                         f"{values!r}")
    return sorted(set(sizes), key=lambda s: (patch_count(s), str(s)))


def _size(value):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    h, w = value  # a grid; anything else is a TypeError or ValueError
    if not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in (h, w)):
        raise TypeError(value)
    return int(h), int(w)


def _counts(values):
    try:
        counts = sorted({int(v) for v in values})
    except (TypeError, ValueError):
        raise TypeError(f"calibrate: image_counts must be a list of ints; got {values!r}") \
            from None
    if not counts or counts[0] < 1:
        raise ValueError(f"calibrate: image_counts must hold ints >= 1; got {values!r}")
    return counts


# -- timing -----------------------------------------------------------------------------------

class Images:
    """(count, size) -> the hook's step for ``count`` images of ``size``, built once: what
    timing.measure times, as batches.Batches is for the text part."""

    remedy = "smaller image_sizes or image_counts"

    def __init__(self, hook):
        self._hook, self._built = hook, {}

    def __call__(self, shape):
        if shape not in self._built:
            count, size = shape
            step = self._hook([size] * count)
            if not callable(step):
                raise TypeError("calibrate: encoder(sizes) must return a callable step() that "
                                f"runs the vision tower on those images; got "
                                f"{type(step).__name__}")
            self._built[shape] = step
        return self._built[shape]

    @staticmethod
    def describe(shape):
        count, size = shape
        what = f"{size} patches" if isinstance(size, int) else f"{size[0]}x{size[1]} patches"
        return f"{count} image{'s' if count > 1 else ''} of {what}"

    def patches(self, shape):
        """The patch count of each image the shape's step runs."""
        count, size = shape
        ran = getattr(self(shape), "patches", None)
        if ran is None:
            return [patch_count(size)] * count
        ran = [int(p) for p in ran]
        if len(ran) != count or min(ran) < 1:
            raise ValueError(f"calibrate: the encoder's step.patches is {ran} for {count} "
                             "images: one patch count (>= 1) per image")
        return ran

    def row_keys(self, shape):
        patches = self.patches(shape)
        size = shape[1] if isinstance(shape[1], int) else list(shape[1])
        return {"images": shape[0], "size": size, "patches": sum(patches),
                "squares": sum(p * p for p in patches)}


class _Run:
    """timing.measure's training step for the encoder: the hook's step does all of it."""

    reset = None

    def __call__(self, step):
        step()


def measure(hook, shapes, repeats, device, progress, torch):
    """(timings rows, clock name, memory probe) of the shapes, on a probe of their own: the
    text part's reserved-bytes record stays the text's."""
    from . import memory as _memory

    probe = _memory.PeakProbe(device)
    rows, clock = _timing.measure(shapes, Images(hook), repeats, _Run(), probe, device,
                                  progress, torch)
    return rows, clock, probe


# -- the fit ----------------------------------------------------------------------------------

def _terms(calls):
    """The cost terms (brs.cost_model.cost_terms) of tower calls given as (images, patches,
    squares), a row per call: a call has no text, so its bs*L terms are 0."""
    import numpy as np

    return np.array([cost_terms(0, 0, patches, squares, images)
                     for images, patches, squares in calls], dtype=float)


def _rows_terms(rows):
    return _terms([(r["images"], r["patches"], r["squares"]) for r in rows])


def _separable(terms):
    """Whether calls of these cost terms can fit each of the encoder's coefficients apart."""
    import numpy as np

    return np.linalg.matrix_rank(terms[:, list(_COLUMNS)]) == len(_COLUMNS)


def fit(rows, seconds_per_unit):
    """The encoder's part of the cost model of the timed rows: a dict with encoder_weight,
    encoder_alpha, encoder_intercept and the record (the fit and its error).

    A tower that rounds sizes up (step.patches) can make two sizes of the grid one, leaving too
    few to fit the per-patch term apart from the others: encoder_weight then keeps the
    library's default, the rest is fitted around it, and the record's ``note`` says so."""
    import numpy as np

    terms = _rows_terms(rows)
    seconds = np.array([r["seconds"] for r in rows])
    weights = 1.0 / np.maximum(seconds, 1e-12)  # relative, as the text part's fit
    one, patches, squares, images = _COLUMNS
    note = None
    if _separable(terms):
        columns = terms[:, list(_COLUMNS)]
        call, per_patch, per_square, per_image = _fit.nnls(columns, seconds, weights)
    else:
        sizes = sorted({r["patches"] // r["images"] for r in rows})
        note = (f"encoder_weight not fitted: the tower ran images of {sizes} patches, too few "
                "distinct sizes to tell the per-patch term from the others; it keeps the "
                "library's default")
        per_patch = FIXED_ENCODER_WEIGHT * seconds_per_unit
        call, per_square, per_image = _fit.nnls(terms[:, [one, squares, images]],
                                                seconds - per_patch * terms[:, patches], weights)
    fitted = (call, per_patch, per_square, per_image)
    r2, worst = _fit.quality(terms[:, list(_COLUMNS)] @ fitted, seconds)
    coefficients = [0.0] * len(COST_TERMS)
    coefficients[COST_TERMS.index("bs*L")] = seconds_per_unit  # the unit: one padded token
    for column, value in zip(_COLUMNS, fitted):
        coefficients[column] = float(value)
    encoder_weight, encoder_alpha, encoder_intercept = encoder_from_seconds(coefficients)
    record = {"form": "seconds = seconds_per_call + seconds_per_unit * (encoder_weight * "
                      "patches + encoder_alpha * patches^2 + encoder_intercept * images)",
              "r2": r2, "worst_residual": worst, "seconds_per_call": float(call)}
    if note:
        record["note"] = note
    return {"encoder_weight": encoder_weight, "encoder_alpha": encoder_alpha,
            "encoder_intercept": encoder_intercept, "record": record}


def memory_fit(rows, method):
    """Peak bytes of the calls as base + a*patches + b*patches^2 (eager attention within each
    image), or a note where peaks were not measured. No cap is derived from it: the budget
    holds the text part's activations too, and how to split it between max_tokens and
    max_encoder_tokens is the user's call."""
    import numpy as np

    info = {"method": method, "max_encoder_tokens": "not derived: set it (patches per "
            "micro-batch) from the bytes per patch here and the budget left beside max_tokens"}
    if any(r["peak_bytes"] is None for r in rows):
        info["note"] = "peak memory not measurable here"
        return info
    _, patches, squares, _ = _COLUMNS
    terms = _rows_terms(rows)
    columns = np.column_stack([np.ones(len(rows)), terms[:, patches], terms[:, squares]])
    peaks = np.array([max(r["peak_bytes"], 1) for r in rows], dtype=float)
    if np.linalg.matrix_rank(columns) < 3:
        info["note"] = "the grid cannot fit the peaks' terms apart"
        return info
    base, per_patch, per_square = _fit.nnls(columns, peaks)
    r2, worst = _fit.quality(columns @ (base, per_patch, per_square), peaks)
    info.update(base_bytes=float(base), bytes_per_patch=float(per_patch),
                bytes_per_patch_squared=float(per_square), r2=r2, worst_residual=worst)
    return info


# -- calibrate's step -------------------------------------------------------------------------

def calibrate(cost_model, hook, shapes, repeats, device, progress, torch):
    """Times the shapes through ``hook``, fits them in the units of ``cost_model`` (the text
    part's, calibrated) and sets its encoder_weight, encoder_alpha, encoder_intercept and
    encoder record."""
    load_before = _record.load_average()
    rows, clock, probe = measure(hook, shapes, repeats, device, progress, torch)
    timing = _record.timing_info(clock, repeats, rows, load_before, _record.load_average(), [])
    fitted = fit(rows, cost_model.seconds_per_unit)
    cost_model.encoder_weight = fitted["encoder_weight"]
    cost_model.encoder_alpha = fitted["encoder_alpha"]
    cost_model.encoder_intercept = fitted["encoder_intercept"]
    cost_model.encoder = {**fitted["record"], "memory": memory_fit(rows, probe.method),
                          "first_shape_seconds": _result.first_shape_seconds(rows),
                          "timing": timing, "timings": rows}
    _warn_if_mispriced(cost_model.encoder)
    return cost_model


def _warn_if_mispriced(record):
    if record.get("note"):
        warnings.warn(f"calibrate: {record['note']} (docs/calibration.md, encoder)",
                      stacklevel=4)
    if record["worst_residual"] > WARN_RESIDUAL:
        warnings.warn(f"calibrate: the encoder fit is off by up to "
                      f"{record['worst_residual']:.0%} on the image grid (R^2 "
                      f"{record['r2']:.3f}): the tower's time does not follow the library's "
                      "form (per patch, patches^2, per image) there, and sizes outside the grid "
                      "may be priced worse (docs/calibration.md, encoder)", stacklevel=4)


# -- the hook of a Qwen2-VL-style model --------------------------------------------------------

def vision_tower(model):
    """The vision tower of a Qwen2-VL-style model: ``model.visual`` or ``model.model.visual``
    (transformers 4 and 5 place it differently); TypeError without one."""
    for owner in (model, getattr(model, "model", None)):
        tower = getattr(owner, "visual", None)
        if tower is not None:
            return tower
    raise TypeError(f"calibrate: encoder=\"auto\" times the vision tower of a Qwen2-VL-style "
                    f"model (model.visual or model.model.visual), and this "
                    f"{type(model).__name__} has none; pass encoder=<a hook sizes -> step> "
                    "(docs/calibration.md)")


def qwen2_vl(model, *, train=None):
    """The hook of a Qwen2-VL-style vision tower, called as the model calls it:
    ``tower(pixel_values, grid_thw=...)`` with one (1, h, w) row of patches per image and
    pixel_values of one row per patch (random values: time does not depend on them).

    A size is rounded up to the grids the tower takes (h and w multiples of its
    spatial_merge_size; an int p to the squarest such grid of at least p patches), and the
    step's ``patches`` says what ran. ``train``: run backward too (default: when any of the
    tower's parameters requires grad, as when it is trained; a frozen tower runs forward
    without autograd)."""
    import torch

    tower = vision_tower(model)
    weight = tower.patch_embed.proj.weight  # (width, channels, time, patch, patch)
    features = math.prod(weight.shape[1:])
    merge = int(getattr(tower, "spatial_merge_size", None)
                or getattr(tower.config, "spatial_merge_size", 1))
    trains = any(p.requires_grad for p in tower.parameters()) if train is None else bool(train)
    generator = torch.Generator(device="cpu").manual_seed(0)

    def hook(sizes):
        grids = [_merge_grid(size, merge) for size in sizes]
        pixels = torch.randn(sum(h * w for h, w in grids), features, generator=generator)
        pixels = pixels.to(device=weight.device, dtype=weight.dtype)
        grid_thw = torch.tensor([[1, h, w] for h, w in grids], device=weight.device)

        def step():
            with torch.set_grad_enabled(trains):
                out = tower(pixels, grid_thw=grid_thw)
            if trains:
                _output_tensor(out, torch).sum().backward()

        step.patches = [h * w for h, w in grids]
        return step

    return hook


def _merge_grid(size, merge):
    """(h, w) in patches, multiples of ``merge``, of an image size (rounded up)."""
    if not isinstance(size, int):
        return tuple(merge * -(-side // merge) for side in size)
    cells = -(-size // (merge * merge))  # the merger's cells of merge x merge patches
    rows = max(1, round(math.sqrt(cells)))
    return merge * rows, merge * -(-cells // rows)


def _output_tensor(out, torch):
    """The tensor of a tower's output: itself (transformers 4), or a model output's
    pooler_output (the merged patches, transformers 5) or first field."""
    if isinstance(out, torch.Tensor):
        return out
    pooled = getattr(out, "pooler_output", None)
    return pooled if pooled is not None else out[0]
