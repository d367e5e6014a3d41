"""Per-micro-batch Python overhead of iterating a BatchRebalanceSampler through ctypes.

    BRS_LIBRARY=BUILD/libbrs/libbrs.so.1 PYTHONPATH=bindings/python \
        python bindings/python/benchmarks/iteration_overhead.py [N]

Iterates one whole epoch of N synthetic lengths (lognormal(5, 1) clipped to [16, 1024], the
upstream reference distribution) and times it; then times brs_plan_compute alone for the same
steps. The difference, per yielded micro-batch, is what the Python layer adds (ctypes calls, the
list of indices, the generator).
"""

import ctypes
import random
import sys
import time

from brs import BatchRebalanceSampler, _native
from brs._handles import NativePlan


def synthetic(n, seed=0):
    rng = random.Random(seed)
    return [min(1024, max(16, round(rng.lognormvariate(5, 1)))) for _ in range(n)]


def measure(lengths, p, g, dp, rank):
    s = BatchRebalanceSampler(lengths, per_device_batch_size=p, grad_accum=g, dp_size=dp,
                              rank=rank)
    started = time.perf_counter()
    count = sum(1 for _ in s)
    iterate = time.perf_counter() - started
    plan, handle = NativePlan(), s._native.handle
    compute = _native.lib.brs_plan_compute
    started = time.perf_counter()
    for step in range(s.steps_per_epoch):
        compute(plan.handle, handle, 0, step)
    planning = time.perf_counter() - started
    overhead = (iterate - planning) / count
    print(f"P={p:<3} G={g:<2} R={dp:<3} {count:>7} micro-batches: epoch {iterate:.3f} s, "
          f"planning {planning:.3f} s, Python overhead {overhead * 1e6:.2f} us per micro-batch "
          f"({iterate / count * 1e6:.2f} us in all)")


def main(n):
    lengths = synthetic(n)
    for p, g, dp in ((8, 1, 1), (8, 4, 8), (32, 2, 64)):
        measure(lengths, p, g, dp, rank=dp // 2)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
