"""`python -m brs report`: brs against fixed-size random and length-grouped batches, one epoch.

The numbers are those of the C CLI's `brs compare` (same baselines, same step count, same
synchronisation models); the optional figure shows per-step cost per rank and padded tokens per
micro-batch for the three strategies on one page (see _plot.py).
"""

import time
from dataclasses import dataclass, field
from typing import List

from . import _baselines, _native as n
from ._handles import NativePlan
from ._baselines import Slot

STRATEGIES = ("random", "grouped", "brs")
TITLES = {"random": "fixed-size random", "grouped": "length-grouped", "brs": "brs"}


@dataclass
class Strategy:
    """One strategy's epoch: steps[t][rank][micro] -> Slot."""

    name: str
    steps: List[List[List[Slot]]] = field(default_factory=list)

    def slots(self):
        return [slot for step in self.steps for rank in step for slot in rank]

    @property
    def peak_padded_tokens(self):
        return max(slot.padded_tokens for slot in self.slots())

    @property
    def padding_efficiency(self):
        padded = sum(slot.padded_tokens for slot in self.slots())
        return sum(slot.real_tokens for slot in self.slots()) / padded if padded else 1.0

    @property
    def micro_sync_time(self):
        """Sum over steps and micro-steps of the slowest rank (FSDP / ZeRO-3)."""
        return sum(max(rank[m].cost for rank in step)
                   for step in self.steps for m in range(len(step[0])))

    @property
    def step_sync_time(self):
        """Sum over steps of the slowest rank's whole step (DDP with no_sync)."""
        return sum(max(sum(slot.cost for slot in rank) for rank in step) for step in self.steps)

    def cap_violations(self, max_tokens):
        return sum(1 for slot in self.slots() if max_tokens and slot.padded_tokens > max_tokens)


@dataclass
class Comparison:
    sampler: object
    strategies: dict
    time_lower_bound: float  # sum over steps of libbrs's proven per-step time bound
    lower_bounds: List[float]  # per step, for the figure
    planning_seconds: float
    planned_samples: int
    megabatch_size: int


def compare(sampler):
    """Measure every step of the sampler's epoch under the three strategies (all ranks)."""
    native = sampler._native
    model = _baselines.CostModel(native.get_double(n.OPT_ALPHA),
                                 native.get_double(n.OPT_INTERCEPT), sampler.packed)
    brs, lower_bounds, seconds, planned = _measure_brs(sampler)
    lengths = sampler.lengths.tolist()  # Python ints: numpy's uint32 would overflow bs * L
    shape = (sampler.per_device_batch_size, sampler.grad_accum, sampler.dp_size)
    random = _measure_order(_baselines.random_order(len(lengths), sampler.seed, sampler.epoch,
                                                    sampler.shuffle), lengths, shape, model,
                            len(brs.steps))
    grouped_order = _baselines.length_grouped_order(lengths, shape[0], shape[1], sampler.seed,
                                                    sampler.epoch, sampler.shuffle)
    grouped = _measure_order(grouped_order, lengths, shape, model, len(brs.steps))
    return Comparison(sampler, {"random": random, "grouped": grouped, "brs": brs},
                      sum(lower_bounds), lower_bounds, seconds, planned,
                      _baselines.megabatch_size(len(lengths), shape[0], shape[1]))


def _measure_brs(sampler):
    result, bounds, seconds, planned = Strategy("brs"), [], 0.0, 0
    plan, handle = NativePlan(), sampler._native.handle
    for step in range(sampler.steps_per_epoch):
        started = time.perf_counter()
        plan.compute(handle, sampler.epoch, step)
        seconds += time.perf_counter() - started
        planned += plan.get_int(n.PLAN_NUM_SAMPLES)
        bounds.append(plan.get_double(n.PLAN_TIME_LOWER_BOUND))
        result.steps.append([[_slot(plan, r, m) for m in range(sampler.grad_accum)]
                             for r in range(sampler.dp_size)])
    return result, bounds, seconds, planned


def _slot(plan, rank, micro):
    mb = plan.micro_batch(rank, micro)
    return Slot(mb.padded_tokens, mb.real_tokens, mb.cost)


def _measure_order(order, lengths, shape, model, steps):
    result = Strategy("baseline")
    for step in range(steps):
        result.steps.append(_baselines.step_slots(order, lengths, step, *shape, model))
    return result


def format_report(c, source):
    """The text of `brs compare`, line for line (so the two tools read, and diff, alike)."""
    s = c.sampler
    capped = bool(s.max_tokens)
    lines = [f"brs report: {source}"] + _header(c) + [
        f"{'strategy':<15}  {'peak tokens':>11}  {'padding eff.':>12}  {'micro-sync time':>15}  "
        f"{'x bound':>7}  {'step-sync time':>15}  {'x bound':>7}" + ("  over cap" if capped else "")
    ]
    for name, label in (("random", "random"), ("grouped", "length-grouped"), ("brs", "brs")):
        lines.append(_row(label, c.strategies[name], c.time_lower_bound,
                          s.max_tokens if capped else None))
    return "\n".join(lines + [""] + _legend(c))


def _header(c):
    s = c.sampler
    steps = len(c.lower_bounds)
    shuffle = "" if s.shuffle else ", no shuffle"
    drop = ", drop-last" if s.drop_last else ", last step kept"
    alpha, intercept = _resolved(s)
    cost = (f"cost of a micro-batch = {intercept:g} + sum(L) + {alpha:g}*sum(L^2) "
            "(packed: no padding)" if s.packed else
            f"cost of a micro-batch = {intercept:g} + bs*L + {alpha:g}*bs*L^2 "
            "(bs samples padded to L tokens)")
    per_step = s.per_device_batch_size * s.grad_accum * s.dp_size
    return [f"{len(s.lengths)} samples, epoch {s.epoch}, seed {s.seed}{shuffle}{drop}: "
            f"all {steps} steps",
            f"{per_step} samples per step = dp {s.dp_size} x grad-accum {s.grad_accum} "
            f"x batch {s.per_device_batch_size}",
            cost, ""]


def _resolved(sampler):
    native = sampler._native
    return native.get_double(n.OPT_ALPHA), native.get_double(n.OPT_INTERCEPT)


def _row(label, st, bound, max_tokens):
    text = f"{label:<15}  {st.peak_padded_tokens:>11}  {100 * st.padding_efficiency:>11.1f}%"
    for time_ in (st.micro_sync_time, st.step_sync_time):
        text += f"  {time_:>15.0f}" if time_ >= 1000 else f"  {time_:>15.3g}"
        text += f"  {time_ / bound:>7.2f}" if bound > 0 else f"  {'-':>7}"
    if max_tokens is not None:
        text += f"  {st.cap_violations(max_tokens):>8}"
    return text


def _legend(c):
    s = c.sampler
    steps = len(c.lower_bounds)
    lines = [
        "peak tokens      largest padded micro-batch (bs*L): what activation memory must hold",
        "padding eff.     real tokens / padded tokens",
        "micro-sync time  sum over micro-steps of the slowest rank (FSDP / ZeRO-3)",
        "step-sync time   the slowest rank's sum over its micro-steps (DDP with no_sync)",
        f"x bound          ratio to the proven lower bound, {c.time_lower_bound:.0f} (a sum over "
        "steps; 1 is perfect)",
    ]
    if s.max_tokens:
        lines.append(f"over cap         micro-batches above --max-tokens {s.max_tokens}")
    lines += [f"length-grouped   megabatches of {c.megabatch_size} samples, longest first (as "
              "transformers'",
              "                 LengthGroupedSampler)"]
    if steps and c.planned_samples:
        lines.append(f"brs planning     {1e6 * c.planning_seconds / steps:.1f} us per step, "
                     f"{1e9 * c.planning_seconds / c.planned_samples:.1f} ns per sample (mean of "
                     f"{steps} steps, Python ctypes calls included)")
    return lines
