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
    s = c.sampler
    k = s.dp_size * s.grad_accum
    cap = f"max_tokens {s.max_tokens}" if s.max_tokens else "no cap"
    lines = [
        f"brs report: {source}: {len(s.lengths)} samples, epoch {s.epoch}, "
        f"{len(c.lower_bounds)} steps",
        f"  per_device_batch_size {s.per_device_batch_size}, grad_accum {s.grad_accum}, "
        f"dp_size {s.dp_size} (K = {k} micro-batches, B = {k * s.per_device_batch_size} "
        f"samples per step), alpha {s.alpha:g}, intercept {s.intercept:g}, {cap}"
        + (", packed" if s.packed else ""),
        f"  length-grouped megabatch: {c.megabatch_size} samples",
        "",
        f"  {'':34}" + "".join(f"{TITLES[name]:>19}" for name in STRATEGIES),
    ]
    rows = [
        ("peak padded tokens / micro-batch", lambda st: f"{st.peak_padded_tokens:,}"),
        ("padding efficiency (real/padded)", lambda st: f"{st.padding_efficiency:.3f}"),
        ("step time, per-micro-step sync", lambda st: _time(st.micro_sync_time, c)),
        ("step time, per-step sync", lambda st: _time(st.step_sync_time, c)),
    ]
    if s.max_tokens:
        rows.append(("micro-batches above max_tokens",
                     lambda st: f"{st.cap_violations(s.max_tokens):,}"))
    for label, value in rows:
        lines.append(f"  {label:34}" + "".join(f"{value(c.strategies[name]):>19}"
                                               for name in STRATEGIES))
    per_step = c.planning_seconds / max(1, len(c.lower_bounds))
    lines += ["",
              f"  time ratios are to the proven lower bound {c.time_lower_bound:.6g} "
              "(sum over steps)",
              f"  brs planning time: {per_step * 1e6:.1f} us per step "
              f"({c.planning_seconds / max(1, c.planned_samples) * 1e9:.1f} ns per sample)"]
    return "\n".join(lines)


def _time(value, c):
    ratio = value / c.time_lower_bound if c.time_lower_bound else float("nan")
    return f"{value:.4g} (x{ratio:.3f})"
