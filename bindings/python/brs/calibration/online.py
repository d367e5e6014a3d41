"""Online calibration: time the micro-batches a loop trains, refit the cost model, switch.

Every micro-batch the training loop runs is timed with its shape (bs samples padded to L
tokens, and its real tokens). The time is fitted as ``seconds = c0 + c1*bs*L + c2*bs*L^2`` (the
cost terms of brs.cost_model), the planner's cost model in seconds (docs/algorithm.md), so
alpha = c2/c1 and intercept = c0/c1. A micro-batch with images (their patch counts, e.g. from
Qwen2-VL's ``image_grid_thw``) adds the encoder's terms, fitted jointly with the text's: ``+
c3*P + c4*S + c5*N`` over its P patches, their squares' sum S and its N images, so
encoder_weight = c3/c1 (what a patch costs in padded tokens), encoder_alpha = c4/c1 and
encoder_intercept = c5/c1; until some micro-batch had images the encoder's coefficients stay as
they were. What the fit needs is a fixed-size vector of sums of products (``Statistics``), which
ranks add up with one all-reduce and calibration's least squares solves (fit.nnls_from_sums): at
a boundary every rank knows in advance (each epoch, or every N optimizer steps), every rank adds
the same numbers, fits the same model, rounds it as the library stores it, and switches its
sampler from the first step not yet planned on.

The first run of each (bs, L) a rank trains is kept out of the fit: it can carry a one-time
price (cuDNN plans, compiler recompiles, CUDA graph captures) that a warm run of the same shape
does not pay. Its time goes into separate sums, so that at each refit the extra time of the
first runs over the fitted warm cost is known and logged (``brs/first_shape_*``).

Clocks, as brs.calibrate's: CUDA events on a GPU, read only once they have completed (never a
synchronisation: an event not yet done is read at a later boundary); on a CPU the thread's CPU
time when torch runs one thread (a busy machine cannot inflate it), else the wall clock.

The integrations drive it (a Trainer callback, Lightning's RebalanceCallback, accelerate's
loop); nothing here imports a framework, and torch only when a clock or a group needs it.
"""

import itertools
import logging
import math
import time

import numpy as np

from .. import _options
from .._handles import NativeSampler
from .._lengths import as_uint32
from ..cost_model import (COST_TERMS, TEXT_TERMS, CostModel, combine, cost_terms,
                          encoder_from_seconds, encoder_sums, from_seconds)
from .fit import nnls_from_sums

logger = logging.getLogger("brs")

# The vector's entries. Features x = cost_terms(bs, L, P, S, N) = (1, T, Q, P, S, N) with
# T = bs*L, Q = bs*L^2 and the images' P, S, N (0 without images), time y in seconds.
# Relative least squares (each point weighed by 1/y, as brs.calibrate fits: the planner
# compares costs by ratio) needs sum x x^T / y^2 and sum x / y; R^2 on seconds
# needs the plain sums. x0 is 1, so its plain sums are n, y and first_n.
_TERMS = len(COST_TERMS)
_PAIRS = tuple(itertools.combinations_with_replacement(range(_TERMS), 2))
FIELDS = (("n",) + tuple(f"xx{i}{j}/yy" for i, j in _PAIRS)
          + tuple(f"x{i}/y" for i in range(_TERMS))
          + tuple(f"xx{i}{j}" for i, j in _PAIRS[1:]) + ("y",)
          + tuple(f"x{i}y" for i in range(1, _TERMS)) + ("yy",) + ("real_tokens",)
          + ("first_n", "first_y") + tuple(f"first_x{i}" for i in range(1, _TERMS)))
_INDEX = {name: i for i, name in enumerate(FIELDS)}
#: A fit needs at least this many micro-batches over all ranks since training began.
MIN_MICRO_BATCHES = 8


class Statistics:
    """The sufficient statistics of the fit: a float64 vector ranks can add."""

    def __init__(self, vector=None):
        self.vector = np.zeros(len(FIELDS)) if vector is None else np.asarray(vector, float)
        if self.vector.shape != (len(FIELDS),):
            raise ValueError(f"statistics must hold {len(FIELDS)} numbers ({', '.join(FIELDS)})")

    def add(self, batch_size, length, real_tokens, seconds, images=()):
        """A warm micro-batch: its shape, real tokens, seconds and images' patch counts."""
        if seconds <= 0 or not math.isfinite(seconds):
            return  # a clock too coarse for the micro-batch: no information on its shape
        x = tuple(float(term) for term in cost_terms(batch_size, length, *encoder_sums(images)))
        v, at = self.vector, _INDEX
        v[at["n"]] += 1
        for i, j in _PAIRS:
            v[at[f"xx{i}{j}/yy"]] += x[i] * x[j] / seconds ** 2
            if (i, j) != (0, 0):
                v[at[f"xx{i}{j}"]] += x[i] * x[j]
        for i in range(_TERMS):
            v[at[f"x{i}/y"]] += x[i] / seconds
        v[at["y"]] += seconds
        for i in range(1, _TERMS):
            v[at[f"x{i}y"]] += x[i] * seconds
        v[at["yy"]] += seconds ** 2
        v[at["real_tokens"]] += real_tokens

    def add_first(self, batch_size, length, seconds, images=()):
        """A shape's first run: kept apart from the fit's sums."""
        if seconds <= 0 or not math.isfinite(seconds):
            return
        v, at = self.vector, _INDEX
        v[at["first_n"]] += 1
        v[at["first_y"]] += seconds
        terms = cost_terms(batch_size, length, *encoder_sums(images))
        for i, term in enumerate(terms[1:], start=1):
            v[at[f"first_x{i}"]] += term

    @classmethod
    def from_saved(cls, vector, fields):
        """Statistics a state saved, matched by field name: a field the state predates is 0."""
        saved = dict(zip(fields or FIELDS, vector))
        return cls([float(saved.get(name, 0.0)) for name in FIELDS])

    def first_runs(self, coefficients):
        """(count, seconds beyond the warm fit of the cost terms) of the first runs."""
        sums = (self["first_n"],) + tuple(self[f"first_x{i}"] for i in range(1, _TERMS))
        return int(self["first_n"]), self["first_y"] - combine(coefficients, sums)

    def __getitem__(self, name):
        return float(self.vector[_INDEX[name]])

    def matrix(self, prefix, suffix=""):
        m = np.empty((_TERMS, _TERMS))
        for i, j in _PAIRS:
            m[i, j] = m[j, i] = (self["n"] if (i, j) == (0, 0) and not suffix
                                 else self[f"{prefix}{i}{j}{suffix}"])
        return m

    def images(self):
        """How many images the fitted micro-batches held."""
        return self[f"xx0{COST_TERMS.index('images')}"]

    def fit(self):
        """(c0 .. c5, r2, relative rms error): the seconds of each cost term (the encoder's c3,
        c4 and c5 are 0 while no micro-batch had images: nothing measured them), then the fit's
        quality; or a string saying why there is no fit."""
        n = self["n"]
        if n < MIN_MICRO_BATCHES:
            return f"{int(n)} micro-batches timed, fewer than {MIN_MICRO_BATCHES}"
        # The fit's features: the text terms alone, or all of them once images were timed (the
        # encoder's columns are all 0 before, which no solve could separate).
        terms = _TERMS if self.images() else TEXT_TERMS
        a = self.matrix("xx", "/yy")[:terms, :terms]
        b = np.array([self[f"x{i}/y"] for i in range(terms)])
        scale = 1.0 / np.sqrt(np.maximum(np.diag(a), 1e-300))  # columns span 1 .. 1e9
        text = a[:TEXT_TERMS, :TEXT_TERMS] * np.outer(scale, scale)[:TEXT_TERMS, :TEXT_TERMS]
        if np.linalg.matrix_rank(text, tol=1e-9) < TEXT_TERMS:
            return ("the micro-batches timed do not separate intercept, bs*L and bs*L^2 "
                    "(too few distinct shapes)")
        # Relative least squares: sum of (x.c / y - 1)^2, whose constant term is n. Images all
        # of one size cannot tell the patches', p^2 and per-image terms apart: the solver then
        # prices them by some of the three, which is right for that size.
        coef = nnls_from_sums(a, b, n, scale)
        if coef[1] <= 0:
            return "the fit has no linear term (bs*L) to express alpha and intercept in"
        rel_rss = max(coef @ a @ coef - 2 * coef @ b + n, 0.0)
        full = tuple(coef) + (0.0,) * (_TERMS - terms)
        return (*(float(c) for c in full), float(self._r2(np.array(full))),
                math.sqrt(rel_rss / n))

    def _r2(self, coef):
        """R^2 on seconds, from the plain sums."""
        n, sy, syy = self["n"], self["y"], self["yy"]
        xy = np.array([sy] + [self[f"x{i}y"] for i in range(1, _TERMS)])
        rss = syy - 2 * coef @ xy + coef @ self.matrix("xx") @ coef
        total = syy - sy * sy / n
        return 1.0 - max(rss, 0.0) / total if total > 0 else 1.0

    def mean_micro_batch(self):
        """(mean of each cost term, mean seconds) of the micro-batches timed."""
        n = max(self["n"], 1.0)
        means = (self["n"] / n,) + tuple(self[f"xx0{i}"] / n for i in range(1, _TERMS))
        return means, self["y"] / n


# -- clocks -----------------------------------------------------------------------------------

class _Pending:
    __slots__ = ("shape", "start", "end", "real", "first", "images")

    def __init__(self, shape, start, end, real, first, images):
        self.shape, self.start, self.end, self.real = shape, start, end, real
        self.first, self.images = first, images


class Timer:
    """Times micro-batches into ``local`` Statistics; CUDA events are read once complete. The
    first run of each shape in this process goes to the first-run sums, not the fit's."""

    def __init__(self):
        self.local = Statistics()
        self._pending = []  # CUDA micro-batches whose events may still be running
        self._open = None
        self._seen = set()  # the shapes this process has run

    def start(self, device):
        import torch

        if device is not None and device.type == "cuda":
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self._open = ("cuda", event)
        elif torch.get_num_threads() == 1:
            self._open = ("thread_time", time.thread_time())
        else:
            self._open = ("wall", time.perf_counter())

    def stop(self, batch_size, length, real_tokens, images=None):
        """``real_tokens`` may be a CUDA tensor: it is read with the events, once done.
        ``images``: the micro-batch's images as patch counts (a list, or a tensor read
        likewise), None without images."""
        if self._open is None:
            return
        clock, begin = self._open
        self._open = None
        shape = (batch_size, length)
        first = shape not in self._seen
        self._seen.add(shape)
        if clock == "cuda":
            import torch

            end = torch.cuda.Event(enable_timing=True)
            end.record()
            self._pending.append(_Pending(shape, begin, end, real_tokens, first, images))
            self.drain()
            return
        now = time.thread_time() if clock == "thread_time" else time.perf_counter()
        self._record(shape, real_tokens, now - begin, first, images)

    def _record(self, shape, real_tokens, seconds, first, images=None):
        # Images go in as a keyword only when there are some: a text-only micro-batch calls
        # add / add_first exactly as before images were priced.
        patches = {} if images is None else {"images": _patch_list(images)}
        if first:
            self.local.add_first(*shape, seconds, **patches)
        else:
            self.local.add(*shape, int(real_tokens), seconds, **patches)

    def drain(self):
        """Adds the CUDA micro-batches whose end event has completed (query() never waits)."""
        while self._pending and self._pending[0].end.query():
            item = self._pending.pop(0)
            seconds = item.start.elapsed_time(item.end) / 1000.0
            self._record(item.shape, item.real, seconds, item.first, item.images)

    def take(self):
        """The statistics timed since the last take (for the all-reduce); starts afresh."""
        self.drain()
        local, self.local = self.local, Statistics()
        return local


def batch_shape(inputs):
    """(bs, padded L, real tokens) of a padded micro-batch of input_ids (and attention_mask),
    and its images' patch counts when it has Qwen2-VL's ``image_grid_thw`` (one (t, h, w) row
    of patches per image; a tensor, read when the micro-batch's time is): (bs, L, real,
    patches). None when it has no 2-D input_ids."""
    ids = inputs.get("input_ids") if hasattr(inputs, "get") else None
    if ids is None or getattr(ids, "ndim", 0) != 2:
        return None
    bs, length = (int(d) for d in ids.shape)
    mask = inputs.get("attention_mask")
    real = mask.sum() if mask is not None and getattr(mask, "shape", None) == ids.shape \
        else bs * length
    grid = inputs.get("image_grid_thw")
    if grid is None or getattr(grid, "ndim", 0) != 2 or int(grid.shape[0]) == 0:
        return bs, length, real
    return bs, length, real, grid.prod(-1)


def _patch_list(images):
    """A list of ints of a sequence or tensor of patch counts."""
    values = images.tolist() if hasattr(images, "tolist") else images
    return [int(p) for p in values]


# -- agreement across ranks -------------------------------------------------------------------

def all_reduce(statistics, position):
    """(sum of every rank's statistics, latest position over ranks); itself without a group."""
    try:
        import torch.distributed as dist
    except ImportError:
        return statistics, position
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return statistics, position
    import torch

    device = (torch.device("cuda", torch.cuda.current_device())
              if dist.get_backend() == "nccl" else torch.device("cpu"))
    summed = torch.tensor(statistics.vector, dtype=torch.float64, device=device)
    dist.all_reduce(summed)
    latest = torch.tensor(list(position), dtype=torch.int64, device=device)
    dist.all_reduce(latest, op=dist.ReduceOp.MAX)  # equal already: ranks draw alike
    return Statistics(summed.cpu().numpy()), tuple(int(v) for v in latest.tolist())


def stored(name, value):
    """``value`` as the library stores option ``name`` (clamped to its bounds; a positive
    value too small to store is 0): asked of a scratch handle, not restated here."""
    option = _options.BY_NAME[name]
    value = min(max(float(value), option.lower), option.upper)
    scratch = NativeSampler(as_uint32([1]))
    try:
        scratch.set(option, value)
    except ValueError:
        return 0.0  # only a positive value below the resolution is refused inside the bounds
    return scratch.get(option)


# -- the calibration --------------------------------------------------------------------------

class OnlineCalibration:
    """One per training run: the Timer, the statistics agreed so far, and the switch."""

    def __init__(self, every=None):
        self.every = every  # optimizer steps between refits; None: each epoch
        self.timer = Timer()
        self.agreed = Statistics()  # the sum over ranks since training began, equal on all

    def due(self, global_step, epoch_end):
        if self.every is None:
            return epoch_end
        return not epoch_end and global_step > 0 and global_step % self.every == 0

    def restore(self, sampler):
        """Continues from the statistics a resumed sampler carries (its state's measurements)."""
        measurements = sampler.measurements or {}
        if measurements.get("statistics") is not None:
            self.agreed = Statistics.from_saved(measurements["statistics"],
                                                measurements.get("fields"))

    def recalibrate(self, sampler, micro_steps):
        """All-reduce, fit, round, switch ``sampler``; returns the metrics to log (brs/ keys)."""
        local = self.timer.take()
        total, since = all_reduce(local, sampler.first_unplanned())
        self.agreed = Statistics(self.agreed.vector + total.vector)
        sampler.measurements = {"statistics": self.agreed.vector.tolist(),
                                "fields": list(FIELDS)}
        fit = self.agreed.fit()
        if isinstance(fit, str):
            logger.info("brs: online calibration keeps alpha=%.6g intercept=%.6g: %s (first "
                        "runs of a shape, left out: %d)", sampler.alpha, sampler.intercept, fit,
                        int(self.agreed["first_n"]))
            return {"brs/calibration_skipped": 1.0,
                    "brs/first_shape_count": self.agreed["first_n"]}
        coefficients, (r2, rel_rms) = fit[:_TERMS], fit[_TERMS:]
        firsts, extra = self.agreed.first_runs(coefficients)
        old = sampler.cost_model
        alpha, intercept, seconds_per_unit = from_seconds(coefficients)
        encoder = self._encoder_part(old, coefficients)
        new = CostModel(stored("alpha", alpha), stored("intercept", intercept),
                        old.max_tokens, r2=r2, worst_residual=rel_rms, source="calibrated",
                        model=old.model, device=old.device, seconds_per_unit=seconds_per_unit,
                        memory=old.memory,
                        timing={"clock": "online", "micro_batches": int(self.agreed["n"]),
                                "first_runs": firsts, "images": int(self.agreed.images())},
                        first_shape_seconds=max(0.0, extra / firsts) if firsts else 0.0,
                        **encoder)
        old_step, new_step, measured = self._step_times(old, new, micro_steps)
        switch_at = self._switch(sampler, new, since)
        logger.info("brs: online calibration (%d micro-batches, R^2 %.3f, relative rms %.3f): "
                    "alpha %.6g -> %.6g, intercept %.6g -> %.6g from epoch %d step %d; mean step "
                    "measured %.4g s, predicted %s -> %.4g s", int(self.agreed["n"]), r2,
                    rel_rms, old.alpha, new.alpha, old.intercept, new.intercept, *switch_at,
                    measured, "n/a" if old_step is None else f"{old_step:.4g}", new_step)
        logger.info("brs: %d first runs of a shape, left out of the fit, took %.4g s more than "
                    "the fit prices them (%.4g s each)", firsts, extra,
                    extra / firsts if firsts else 0.0)
        metrics = {"brs/calibration_alpha": new.alpha, "brs/calibration_intercept": new.intercept,
                   "brs/calibration_r2": r2, "brs/calibration_relative_rms": rel_rms,
                   "brs/calibration_step_seconds_measured": measured,
                   "brs/calibration_step_seconds_predicted": new_step,
                   "brs/calibration_switch_epoch": float(switch_at[0]),
                   "brs/calibration_switch_step": float(switch_at[1]),
                   "brs/first_shape_count": float(firsts), "brs/first_shape_seconds": extra}
        if old_step is not None:
            metrics["brs/calibration_step_seconds_predicted_before"] = old_step
        if self.agreed.images():
            logger.info("brs: online calibration (%d images): encoder_weight %.6g -> %.6g, "
                        "encoder_alpha %.6g -> %.6g, encoder_intercept %.6g -> %.6g",
                        int(self.agreed.images()), old.encoder_weight, new.encoder_weight,
                        old.encoder_alpha, new.encoder_alpha, old.encoder_intercept,
                        new.encoder_intercept)
            metrics.update({"brs/calibration_encoder_weight": new.encoder_weight,
                            "brs/calibration_encoder_alpha": new.encoder_alpha,
                            "brs/calibration_encoder_intercept": new.encoder_intercept})
        return metrics

    def _encoder_part(self, old, coefficients):
        """The encoder's keywords of the refitted CostModel: fitted once micro-batches had
        images, else the model in force's (nothing measured says otherwise)."""
        kept = {"max_encoder_tokens": old.max_encoder_tokens, "encoder": old.encoder}
        names = ("encoder_weight", "encoder_alpha", "encoder_intercept")
        if not self.agreed.images():
            return dict(kept, **{name: getattr(old, name) for name in names})
        fitted = encoder_from_seconds(coefficients)
        return dict(kept, **{name: stored(name, value) for name, value in zip(names, fitted)})

    def _step_times(self, old, new, micro_steps):
        """(old model's, new model's predicted, measured) seconds of the mean step timed: the
        mean micro-batch times the micro-steps of a step. The old model predicts seconds only
        when it has seconds_per_unit."""
        terms, seconds = self.agreed.mean_micro_batch()

        def predicted(model):
            return micro_steps * model.seconds_per_unit * combine(model.coefficients, terms)

        old_step = predicted(old) if old.seconds_per_unit is not None else None
        return old_step, predicted(new), micro_steps * seconds

    @staticmethod
    def _switch(sampler, new, since):
        """Switches at ``since``, the latest first unplanned step over ranks: a rank whose
        loader drew less far ahead plans the steps in between with the previous model too."""
        return sampler.switch_cost_model(new, since)
