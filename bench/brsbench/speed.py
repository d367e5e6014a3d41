"""Planning speed: brs in C (bench/plan_speed.c), brs through Python, and upstream, same data, same run.

For each configuration plan_speed generates the lengths, times brs_plan_compute and dumps the
lengths; the Python package and upstream's BatchRebalanceSampler are then timed on that file.
Upstream is pure Python and superlinear in B and K: a configuration is skipped when a fit of the
times measured so far (time ~ c * max(30K, B) * (B + K), its hill-climbing iteration budget times
the work per iteration) predicts more than the budget, and stopped by an alarm at the budget.

Every time is the fastest of its repetitions: the 2 cores are shared with other work, and the
minimum is the estimator least disturbed by it (medians are kept in `extra`).
"""

import json
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# K -> (dp, grad_accum): the layouts of the quality configurations where they exist.
LAYOUT = {4: (2, 2), 16: (8, 2), 64: (64, 1), 1024: (64, 16), 4096: (256, 16),
          16384: (1024, 16), 100000: (6250, 16)}
GRID_K = [4, 64, 1024, 16384]
GRID_B = [4096, 16384, 65536, 262144, 1048576]
TARGET_POINTS = [(4096, 64), (65536, 4096), (1000000, 100000)]  # the planning-speed targets of bench/README.md
TYPICAL = (128, 16)  # 8x2x8: where the Python per-micro-batch overhead matters most
STEP_SYNC = (4096, 1024, 15.0)  # B, K and the ms a step brs may plan in under per-step sync
UPSTREAM_SEED = 42


@dataclass
class Point:
    B: int
    K: int
    dist: str
    dp: int
    ga: int
    n: int = 0  # dataset size (the steps timed are drawn from it)
    c_ns_step: float = 0.0  # fastest brs_plan_compute (the default sync, per micro-step)
    c_ns_sample: float = 0.0
    c_step_sync_ns_step: float = 0.0  # the same under per-step sync
    py_plan_ns_step: float | None = None  # brs Sampler.plan(step): all ranks as Python objects
    py_iter_ns_step: float | None = None  # iterating this rank's micro-batches, per step
    py_overhead_ns_micro: float | None = None  # (py_iter - C) / grad_accum
    py_overhead_ns_index: float | None = None  # (py_iter - C) / indices this rank yields per step
    up_ns_step: float | None = None
    up_note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        return self.up_ns_step / self.c_ns_step if self.up_ns_step else None

    @property
    def ratio_step_sync(self) -> float | None:
        return self.up_ns_step / self.c_step_sync_ns_step if self.up_ns_step else None

    @property
    def ratio_py(self) -> float | None:
        return self.up_ns_step / self.py_iter_ns_step if self.up_ns_step and self.py_iter_ns_step else None


class _Alarm(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Alarm()


def _steps_for(b: int) -> int:
    """A dataset of ~1M samples (4 MiB of lengths, more than a core's L2, as real datasets are),
    and at least 3 steps so that no single step is timed over and over."""
    return max(3, 2**20 // b)


def _reps_for(b: int, quick: bool) -> int:
    target = 2e7 if quick else 1e8  # samples planned per configuration
    return int(max(5, min(200, target // b)))


def time_c(plan_speed: Path, p: Point, dump: Path | None, quick: bool, steps: int | None = None) -> None:
    """brs in C under the default sync (per micro-step) and, with grad_accum > 1, under per-step
    sync (the same steps: the deal differs); with one micro-step the two plans are the same."""
    P = p.B // p.K
    cmd = [str(plan_speed), "--batch-size", str(P), "--dp-size", str(p.dp), "--grad-accum", str(p.ga),
           "--dist", p.dist, "--steps", str(steps or _steps_for(p.B)), "--reps", str(_reps_for(p.B, quick))]
    out = json.loads(subprocess.run(cmd + (["--dump", str(dump)] if dump else []), check=True,
                                    capture_output=True, text=True).stdout)
    p.n = out["n"]
    p.c_ns_step = out["min_ns_per_step"]
    p.c_ns_sample = p.c_ns_step / p.B
    p.extra["c_median_ns_step"] = out["median_ns_per_step"]
    p.c_step_sync_ns_step = p.c_ns_step
    if p.ga > 1:
        out = json.loads(subprocess.run(cmd + ["--sync", "step"], check=True, capture_output=True,
                                        text=True).stdout)
        p.c_step_sync_ns_step = out["min_ns_per_step"]
        p.extra["c_step_sync_median_ns_step"] = out["median_ns_per_step"]


def _timed(fn, reps: int, budget_s: float) -> list[int]:
    """fn() timed `reps` times, stopping early (after 3) once `budget_s` is spent."""
    times, start = [], time.perf_counter()
    for i in range(reps):
        t0 = time.perf_counter_ns()
        fn(i)
        times.append(time.perf_counter_ns() - t0)
        if i >= 2 and time.perf_counter() - start > budget_s:
            break
    return times


def time_python(p: Point, lengths: np.ndarray, quick: bool) -> None:
    import brs

    s = brs.BatchRebalanceSampler(lengths, per_device_batch_size=p.B // p.K, grad_accum=p.ga,
                                  dp_size=p.dp, rank=0, seed=1)
    steps = s.steps_per_epoch
    reps, budget = _reps_for(p.B, quick), 1.0 if quick else 10.0
    s.plan(0)
    times = _timed(lambda i: s.plan(i % steps), reps, budget)
    p.py_plan_ns_step = min(times)
    p.extra["py_plan_median_ns_step"] = statistics.median(times)
    it = iter(s)
    for _ in range(p.ga):  # the first step pays for any lazy set-up
        next(it)

    def one_step(_):
        for _ in range(p.ga):
            next(it)

    p.py_iter_ns_step = min(_timed(one_step, min(steps - 1, reps), budget))
    p.py_overhead_ns_micro = (p.py_iter_ns_step - p.c_ns_step) / p.ga
    p.py_overhead_ns_index = (p.py_iter_ns_step - p.c_ns_step) / (p.B / p.dp)


class UpstreamClock:
    """Times upstream's sampler per step, skipping what would take longer than the budget."""

    def __init__(self, budget_s: float):
        self.budget_s = budget_s
        self.c = 0.0  # fitted seconds per unit of max(30K, B) * (B + K)

    @staticmethod
    def units(b: int, k: int) -> float:
        return max(30 * k, b) * (b + k)

    def time(self, p: Point, lengths: np.ndarray) -> None:
        predicted = self.c * self.units(p.B, p.K)
        if predicted > self.budget_s:
            p.up_note = f"skipped: predicted ~{predicted:.0f} s per step (budget {self.budget_s:.0f} s)"
            return
        from transformers.trainer_pt_utils import BatchRebalanceSampler

        sampler = BatchRebalanceSampler(lengths=lengths.tolist(), effective_batch_size=p.B,
                                        dp_size=p.dp, grad_accum=p.ga, seed=UPSTREAM_SEED, rank=0)
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, self.budget_s)
        times, start = [], time.perf_counter()
        try:
            it = iter(sampler)
            for _ in range(min(len(sampler) // p.ga, 6)):
                t0 = time.perf_counter_ns()
                for _ in range(p.ga):
                    next(it)
                times.append(time.perf_counter_ns() - t0)
                if time.perf_counter() - start > self.budget_s / 3:
                    break
        except _Alarm:
            pass
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        if not times:
            p.up_note = f"stopped: one step took more than {self.budget_s:.0f} s"
            self.c = max(self.c, self.budget_s / self.units(p.B, p.K))
            return
        # The first step also draws the epoch permutation: use it only when nothing else ran.
        p.up_ns_step = min(times[1:] if len(times) > 1 else times)
        p.up_note = f"{len(times)} step(s) timed"
        self.c = max(self.c, p.up_ns_step * 1e-9 / self.units(p.B, p.K))


def points(quick: bool) -> list[Point]:
    """The grid (uniform lengths), the target points on both distributions, and the typical config."""
    pts, seen = [], set()

    def add(b, k, dist):
        if b % k or (b, k, dist) in seen:
            return
        seen.add((b, k, dist))
        dp, ga = LAYOUT[k]
        pts.append(Point(b, k, dist, dp, ga))

    for k in GRID_K:
        for b in GRID_B:
            if b >= k:
                add(b, k, "uniform")
    for b, k in TARGET_POINTS + [STEP_SYNC[:2]]:
        for dist in ("uniform", "longtail"):
            add(b, k, dist)
    add(*TYPICAL, "uniform")
    return pts


SWEEP = (65536, 64)  # B, K of the dataset-size sweep
SWEEP_STEPS = [1, 2, 4, 16, 64]  # N = steps * B: 256 KiB .. 16 MiB of lengths


def dataset_size_sweep(plan_speed: Path, *, quick: bool) -> list[Point]:
    """brs (C) at one B and K over growing datasets: the step's samples are gathered from random
    positions of the lengths array, so its size against the CPU caches shows in the time."""
    b, k = SWEEP
    pts = []
    for steps in SWEEP_STEPS:
        p = Point(b, k, "uniform", *LAYOUT[k])
        time_c(plan_speed, p, None, quick, steps)
        pts.append(p)
    return pts


def run_all(plan_speed: Path, work: Path, *, quick: bool, upstream_budget_s: float) -> list[Point]:
    clock = UpstreamClock(upstream_budget_s)
    pts = points(quick)
    # Cheap upstream configurations first, so the fit is calibrated before the expensive ones.
    pts.sort(key=lambda p: (UpstreamClock.units(p.B, p.K), p.dist))
    dump = work / "lengths.u32"
    for p in pts:
        t0 = time.perf_counter()
        time_c(plan_speed, p, dump, quick)
        lengths = np.fromfile(dump, dtype=np.uint32)
        time_python(p, lengths, quick)
        clock.time(p, lengths)
        print(f"speed B={p.B:8d} K={p.K:6d} {p.dist:8s} C {p.c_ns_sample:7.2f} ns/sample "
              f"py {p.py_iter_ns_step / 1e6:9.3f} ms/step up "
              f"{(p.up_ns_step or 0) / 1e6:10.2f} ms/step {p.up_note} ({time.perf_counter() - t0:.1f}s)",
              file=sys.stderr, flush=True)
    dump.unlink(missing_ok=True)
    return pts
