"""How brs.calibrate times: interleaved rounds, the fastest repeat, the thread's CPU clock, the
machine's load, and larger batch sizes when the time does not grow over the grid.

Most tests drive a fake clock (tests/test_calibrate.py's KnownCostModel) so the result is
exact. One test runs a model that spins for a known CPU time next to busy processes: thread
CPU time is what the spin consumes whatever else runs, so the recovered coefficients do not
depend on the load; a sleeping model would consume none, and the wall clock of a 2 ms step is
stretched by whole scheduler slices when two processes share each core.
"""

import os
import subprocess
import sys
import time
import types
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import brs  # noqa: E402
from brs.calibration import extension, memory, record as timing_record, timing  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import test_calibrate as known_cost  # noqa: E402  (its fixture and fake model)

known = known_cost.known
LENGTHS = known_cost.LENGTHS
C0, A, B = known_cost.C0, known_cost.A, known_cost.B


def calls_per_shape(log):
    counts = {}
    for shape in log:
        counts[shape] = counts.get(shape, 0) + 1
    return counts


# -- rounds and the estimator ------------------------------------------------------------------

def test_every_shape_is_timed_in_interleaved_rounds(known):
    grid = dict(batch_sizes=[1, 2, 4], seq_lens=[16, 64, 128])
    brs.calibrate(known, LENGTHS, repeats=4, memory_budget="64MiB", progress=False, **grid)
    log = known.probe_log
    shapes = sorted({(b, l) for b in (1, 2, 4) for l in (16, 64, 128)},
                    key=lambda s: (s[0] * s[1], s))
    # the first call warms the whole model; then per shape its first run, one untimed run
    # inside the memory probe and 4 timed warm calls
    assert log[0] == shapes[0]
    counts = calls_per_shape(log[1:])
    assert counts == {shape: 6 for shape in shapes}
    later = log[1 + 3 * len(shapes):]  # rounds 2..4, one call per shape each
    rounds = [later[i:i + len(shapes)] for i in range(0, len(later), len(shapes))]
    assert all(sorted(r, key=lambda s: (s[0] * s[1], s)) == shapes for r in rounds)
    assert any(r != shapes for r in rounds), "the later rounds run in a shuffled order"


def test_a_burst_of_load_on_some_repeats_does_not_move_the_fit(known, monkeypatch):
    forward, calls = known.forward, [0]

    def forward_slowed_now_and_then(input_ids, labels, attention_mask=None):
        calls[0] += 1
        if calls[0] % 3 == 0:  # another process took the core: this call took 5x longer
            known.clock.now += 4 * (C0 + A * input_ids.numel()
                                   + B * input_ids.numel() * input_ids.shape[1])
        return forward(input_ids, labels)

    monkeypatch.setattr(known, "forward", forward_slowed_now_and_then)
    cm = brs.calibrate(known, LENGTHS, batch_sizes=[1, 2, 4], seq_lens=[16, 64, 128],
                       repeats=5, memory_budget="64MiB", progress=False)
    assert cm.alpha == pytest.approx(B / A, rel=1e-6)
    assert cm.intercept == pytest.approx(C0 / A, rel=1e-6)
    assert all(row["seconds"] <= row["wall_seconds"] + 1e-12 for row in cm.timings)
    assert max(row["spread"] for row in cm.timings) > 1.0  # the bursts are visible in the record
    assert cm.timing["estimator"] == "min" and cm.timing["rounds"] == 5


def test_the_timing_record_survives_the_json_file(known, tmp_path):
    cm = brs.calibrate(known, LENGTHS, batch_sizes=[1, 2], seq_lens=[16, 64], repeats=2,
                       memory_budget="64MiB", progress=False)
    assert cm.timing["clock"] in ("thread_time", "wall")
    assert cm.timing["load_average"] == [0.0, 0.0] and cm.timing["busy"] is False
    cm.save(tmp_path / "cost.json")
    assert brs.CostModel.load(tmp_path / "cost.json").timing == cm.timing


@pytest.mark.skipif("glibc" not in (os.confstr("CS_GNU_LIBC_VERSION") or ""), reason="not glibc")
def test_on_cpu_glibc_is_made_to_keep_freed_memory_and_the_record_says_so(known):
    cm = brs.calibrate(known, LENGTHS, batch_sizes=[1, 2], seq_lens=[16, 64], repeats=2,
                       memory_budget="64MiB", progress=False)
    assert cm.timing["allocator"] == memory.KEPT_FREED_MEMORY  # every mallopt call accepted


def test_a_busy_machine_is_recorded_and_warned_about(known, monkeypatch):
    monkeypatch.setattr(timing_record, "load_average", lambda: 64.0)
    with pytest.warns(UserWarning, match="machine was busy"):
        cm = brs.calibrate(known, LENGTHS, batch_sizes=[1, 2], seq_lens=[16, 64], repeats=2,
                           memory_budget="64MiB", progress=False)
    assert cm.timing["busy"] is True and cm.timing["load_average"] == [64.0, 64.0]


def test_the_clock_is_the_threads_cpu_time_on_one_torch_thread(monkeypatch):
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert timing.Clock(torch.device("cpu"), torch).name == "thread_time"
    monkeypatch.setattr(torch, "get_num_threads", lambda: 4)
    assert timing.Clock(torch.device("cpu"), torch).name == "wall"


# -- launch-bound grids ------------------------------------------------------------------------

def flat(known, c0, a):
    """known, re-priced: c0 + a*bs*L seconds, a large c0 as a launch-bound GPU shows."""
    def forward(input_ids, labels, attention_mask=None):
        known.clock.now += c0 + a * input_ids.numel()
        known.probe_log.append(tuple(input_ids.shape))
        return types.SimpleNamespace(loss=known.embedding(input_ids).sum())

    known.forward = forward
    return known


def test_a_flat_default_grid_is_extended_with_larger_batch_sizes(known):
    model = flat(known, 20e-3, 1e-6)
    with pytest.warns(UserWarning, match="launch-bound") as record:
        cm = brs.calibrate(model, LENGTHS, seq_lens=[16, 32], repeats=1, memory_budget="1GiB",
                           progress=False)
    assert len([w for w in record if "launch-bound" in str(w.message)]) >= 1
    sizes = sorted({row["batch_size"] for row in cm.timings})
    assert sizes[:4] == [1, 2, 4, 8] and sizes[-1] > 8
    assert cm.timing["extended_batch_sizes"] == sizes[4:]
    assert cm.intercept == pytest.approx(20e-3 / 1e-6, rel=1e-6)
    assert cm.alpha == pytest.approx(0.0, abs=1e-9)


def test_an_extension_stops_at_the_memory_budget(known):
    model = flat(known, 20e-3, 1e-6)
    # FakeProbe: 1e6 + 1000*bs*L + 2*bs*L^2 bytes; 4 MiB holds bs*L of about 3000 at L=32
    with pytest.warns(UserWarning, match="launch-bound"):
        cm = brs.calibrate(model, [32] * 10, seq_lens=[16, 32], repeats=1,
                           memory_budget="4MiB", progress=False)
    budget = extension.EXTENSION_MEMORY_FRACTION * 4 * 2**20
    assert all(row["peak_bytes"] <= budget for row in cm.timings)


def test_an_explicit_flat_grid_says_the_device_is_launch_bound(known):
    model = flat(known, 20e-3, 0.0)
    with pytest.raises(ValueError, match="launch-bound"):
        brs.calibrate(model, LENGTHS, batch_sizes=[1, 2, 4], seq_lens=[16, 32], repeats=1,
                      memory_budget="1GiB", progress=False)


# -- a real clock next to busy processes ---------------------------------------------------------

# intercept = SPIN_C0 / SPIN_A = 5000. The unit is large enough that the ~0.3 ms of thread time
# a module call, its backward and the rescheduling of a loaded machine add stays near 3%.
SPIN_C0, SPIN_A, SPIN_ALPHA = 10e-3, 2e-6, 0.004


class SpinningModel(torch.nn.Module):
    """Burns SPIN_A * (bs*L + SPIN_ALPHA*bs*L^2) + SPIN_C0 seconds of this thread's CPU."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(1))

    def forward(self, input_ids, labels, attention_mask=None):
        bs, length = input_ids.shape
        target = SPIN_C0 + SPIN_A * (bs * length + SPIN_ALPHA * bs * length * length)
        start = time.thread_time()
        while time.thread_time() - start < target:
            pass
        return self.weight.sum()


@pytest.fixture
def busy_machine():
    """Two busy-looping processes per CPU, killed whatever the test does."""
    procs = []
    try:
        for _ in range(2 * timing_record.cpu_count()):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def test_calibrate_recovers_a_known_cost_next_to_busy_processes(busy_machine, one_thread):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # busy, by design
        cm = brs.calibrate(SpinningModel(), LENGTHS, batch_sizes=[1, 2, 4, 8],
                           seq_lens=[64, 256, 512], repeats=3, memory_budget="1GiB",
                           progress=False)
    assert all(proc.poll() is None for proc in busy_machine)  # they ran throughout
    assert cm.timing["clock"] == "thread_time"
    assert cm.alpha == pytest.approx(SPIN_ALPHA, rel=0.10)
    assert cm.intercept == pytest.approx(SPIN_C0 / SPIN_A, rel=0.10)
    assert cm.predict(3, 200) == pytest.approx(
        SPIN_C0 + SPIN_A * (600 + SPIN_ALPHA * 600 * 200), rel=0.10)
    assert np.all(cm.predict(np.array([1, 8]), 512) > 0)


def test_a_contended_cpu_is_timed_in_more_rounds(known, monkeypatch, one_thread):
    # the wall clock runs twice as fast as the thread's CPU time: the calls waited for a core
    monkeypatch.setattr(known_cost.FakeClock, "perf_counter", lambda self: 2.0 * self.now)
    with pytest.warns(UserWarning, match="waited for a core"):
        cm = brs.calibrate(known, LENGTHS, batch_sizes=[1, 2, 4], seq_lens=[16, 32], repeats=3,
                           memory_budget="1GiB", progress=False)
    assert cm.timing["rounds"] == timing.CONTENDED_ROUNDS and cm.timing["rounds_asked"] == 3
    assert cm.timing["busy"] is True and cm.timing["wall_over_thread"] == pytest.approx(2.0)
    assert all(r["repeats"] == timing.CONTENDED_ROUNDS for r in cm.timings)
    assert cm.alpha == pytest.approx(B / A, rel=1e-6)


def test_a_quiet_cpu_is_timed_in_the_rounds_asked(known):
    cm = brs.calibrate(known, LENGTHS, batch_sizes=[1, 2, 4], seq_lens=[16, 32], repeats=3,
                       memory_budget="1GiB", progress=False)
    assert cm.timing["rounds"] == 3 and "rounds_asked" not in cm.timing
    assert all(r["repeats"] == 3 for r in cm.timings)
