"""Per-micro-batch Python overhead of iterating a BatchRebalanceSampler through ctypes.

    BRS_LIBRARY=BUILD/libbrs/libbrs.so.1 PYTHONPATH=bindings/python \
        python bindings/python/benchmarks/iteration_overhead.py [N]

Iterates whole epochs of N synthetic lengths (lognormal(5, 1) clipped to [16, 1024], the
upstream reference distribution). The time spent inside brs_plan_compute (the planning, C) is
clocked around each call and subtracted; what remains, per yielded micro-batch, is what the
Python layer adds: the generator, the ctypes call that fetches the indices, the list. Best of 3.
"""

import random
import sys
import time

from brs import BatchRebalanceSampler
from brs import _handles


def synthetic(n, seed=0):
    rng = random.Random(seed)
    return [min(1024, max(16, round(rng.lognormvariate(5, 1)))) for _ in range(n)]


class ClockedPlanning:
    """Wraps NativePlan.compute to add up the seconds spent planning."""

    def __init__(self):
        self.seconds = 0.0
        self.original = _handles.NativePlan.compute

    def __enter__(self):
        clock = self

        def compute(plan, sampler, epoch, step):
            started = time.perf_counter()
            clock.original(plan, sampler, epoch, step)
            clock.seconds += time.perf_counter() - started

        _handles.NativePlan.compute = compute
        return self

    def __exit__(self, *exc):
        _handles.NativePlan.compute = self.original


def epoch_overhead(sampler):
    with ClockedPlanning() as planning:
        started = time.perf_counter()
        count = sum(1 for _ in sampler)
        total = time.perf_counter() - started
    return (total - planning.seconds) / count, total / count, count


def main(n):
    lengths = synthetic(n)
    for p, g, dp in ((8, 1, 1), (8, 4, 8), (32, 2, 64)):
        sampler = BatchRebalanceSampler(lengths, per_device_batch_size=p, grad_accum=g,
                                        dp_size=dp, rank=dp // 2)
        overhead, total, count = min(epoch_overhead(sampler) for _ in range(3))
        print(f"P={p:<3} G={g:<2} R={dp:<3} {count:>7} micro-batches of ~{p} samples: Python "
              f"overhead {overhead * 1e6:.2f} us per micro-batch ({total * 1e6:.2f} us with "
              "planning)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
