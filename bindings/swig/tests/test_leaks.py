"""Returned lists, raised errors and freed samplers leak nothing.

Python-side leaks (a missing Py_DECREF in the list builders) show in
tracemalloc; C-side leaks (a handle not freed by the destructor) show in the
resident set size. Each check repeats an operation enough times that a leak
of even one small object per call exceeds the bound many times over.
"""
import gc
import tracemalloc
import unittest

import brs_swig as b

LENGTHS = [(i * 37) % 500 + 1 for i in range(4096)]
REPEATS = 3000


def traced_growth(operation):
    """Bytes still allocated by Python after REPEATS calls (after a warm-up)."""
    for _ in range(50):
        operation()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(REPEATS):
        operation()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before


def rss_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


class Leaks(unittest.TestCase):
    BOUND = 64 * 1024  # a leaked int per call alone would be 3000 * 28 bytes

    def setUp(self):
        self.sampler = b.Sampler(LENGTHS, batch_size=16, grad_accum=2, dp_size=4)

    def test_plan_lists(self):
        steps = self.sampler.steps_per_epoch()
        counter = iter(range(10**9))
        growth = traced_growth(lambda: self.sampler.plan(next(counter) % steps))
        self.assertLess(growth, self.BOUND)

    def test_stats_and_scalars(self):
        self.sampler.plan(0)

        def read():
            self.sampler.stats()
            self.sampler.fingerprint()
            self.sampler.plan_double(b.BRS_PLAN_MAX_COST)
            b.option_bounds_int(b.BRS_OPT_DP_SIZE)
        self.assertLess(traced_growth(read), self.BOUND)

    def test_raised_errors(self):
        def fail():
            for call in (lambda: self.sampler.plan(10**9), lambda: b.Sampler([1, 0])):
                try:
                    call()
                except ValueError:
                    pass
        self.assertLess(traced_growth(fail), self.BOUND)

    def test_destructor_frees_the_handles(self):
        # Each sampler copies 4096 lengths (16 KiB) and plans 128 samples:
        # 3000 leaked samplers would add far more than 16 MiB.
        def cycle():
            sampler = b.Sampler(LENGTHS, batch_size=16, grad_accum=2, dp_size=4)
            sampler.plan(1)
            del sampler
        for _ in range(200):
            cycle()
        before = rss_bytes()
        for _ in range(REPEATS):
            cycle()
        self.assertLess(rss_bytes() - before, 16 * 1024 * 1024)


if __name__ == "__main__":
    unittest.main()
