"""python -m brsbench iteration_overhead: Python overhead of iterating a BatchRebalanceSampler through ctypes.

    BRS_LIBRARY=BUILD/libbrs/libbrs.so.1 PYTHONPATH=bindings/python:bench \
        python3 -m brsbench iteration_overhead [N]

Iterates whole epochs of N synthetic lengths (lognormal(5, 1) clipped to [16, 1024], the
upstream reference distribution). The time spent inside brs_plan_compute (the planning, C) is
clocked around each call and subtracted; what remains, per yielded micro-batch, is what the
Python layer adds: the generator, the ctypes call that fetches the indices, the list. Best of 3.

Then the same per optimizer step (one plan compute + this rank's G micro-batches) at B = 1024,
K = 64 on the manpages lengths (data/manpages.lengths): the overhead per step next to the C
planning time per step measured in the same run.
"""

import time

from brs import BatchRebalanceSampler
from brs.native import NativePlan

from .datasets import DATA, lognormal, read_lengths


class ClockedPlanning:
    """Wraps NativePlan.compute to add up the seconds spent planning."""

    def __init__(self):
        self.seconds = 0.0
        self.original = NativePlan.compute

    def __enter__(self):
        clock = self

        def compute(plan, sampler, epoch, step):
            started = time.perf_counter()
            clock.original(plan, sampler, epoch, step)
            clock.seconds += time.perf_counter() - started

        NativePlan.compute = compute
        return self

    def __exit__(self, *exc):
        NativePlan.compute = self.original


def epoch_overhead(sampler):
    with ClockedPlanning() as planning:
        started = time.perf_counter()
        count = sum(1 for _ in sampler)
        total = time.perf_counter() - started
    return (total - planning.seconds) / count, total / count, count


def per_step(lengths):
    """Overhead and C planning time per optimizer step at B = 1024, K = 64 (two layouts)."""
    for p, g, dp in ((16, 1, 64), (16, 8, 8)):
        sampler = BatchRebalanceSampler(lengths, per_device_batch_size=p, grad_accum=g,
                                        dp_size=dp, rank=dp // 2)
        best = None
        for _ in range(5):
            with ClockedPlanning() as planning:
                started = time.perf_counter()
                count = sum(1 for _ in sampler)
                total = time.perf_counter() - started
            steps = count // g
            row = ((total - planning.seconds) / steps, planning.seconds / steps, steps)
            best = row if best is None or row[0] < best[0] else best
        overhead, planning_time, steps = best
        print(f"B=1024 K=64 P={p} G={g} R={dp} manpages, {steps} steps: Python overhead "
              f"{overhead * 1e6:.1f} us per optimizer step, C planning {planning_time * 1e6:.1f} "
              "us per step (best of 5)")


def add_arguments(p) -> None:
    p.add_argument("n", nargs="?", type=int, default=1_000_000,
                   help="synthetic lengths per epoch (default 1000000)")


def run(args) -> int:
    lengths = lognormal(0, n=args.n)  # seed 0
    for p, g, dp in ((8, 1, 1), (8, 4, 8), (32, 2, 64)):
        sampler = BatchRebalanceSampler(lengths, per_device_batch_size=p, grad_accum=g,
                                        dp_size=dp, rank=dp // 2)
        overhead, total, count = min(epoch_overhead(sampler) for _ in range(3))
        print(f"P={p:<3} G={g:<2} R={dp:<3} {count:>7} micro-batches of ~{p} samples: Python "
              f"overhead {overhead * 1e6:.2f} us per micro-batch ({total * 1e6:.2f} us with "
              "planning)")
    per_step(read_lengths(DATA / "manpages.lengths"))
    return 0
