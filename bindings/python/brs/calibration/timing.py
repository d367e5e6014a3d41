"""The measurement layer's clock and training step, and calibration's interleaved timer.

Clock (one call's fitted, wall and thread-CPU seconds), TrainingStep (forward, backward and the
optimizer's step, as training runs them) and OutOfMemory (a call that did not fit) are shared by
brs.calibrate and brs.trial (brs/_trial/measure.py), with memory.py's peak probes and
progress.py's progress: one way to time, probe and report a training step in the package.
measure() is calibration's own use of them: every shape of a grid timed in rounds, the fastest
warm repeat kept, on the clock that a busy machine disturbs least; each shape's first run timed
apart."""

import random
import time

from . import batches as _batches, memory as _memory, progress as _progress


def measure(grid, batches, rounds, train, probe, device, progress, torch):
    """One row per shape: the minimum over ``rounds`` interleaved warm timings, the time of
    the shape's first run, and the peak memory.

    ``batches(shape)`` is the collated batch of the shape (batches.Batches; the encoder's
    encoder.Images alike: ``describe(shape)``, ``remedy`` and ``row_keys(shape)`` say what a
    shape is) and ``train`` a TrainingStep. One
    untimed call of the first shape builds what any shape needs (kernels, gradient buffers):
    that shape's first run is then no first sight, and is not recorded. Round 0 runs the
    shapes smallest first, each once timed as its first run, once untimed inside the memory
    probe, then once timed warm; later rounds run the whole grid in a shuffled order, so a
    burst of load from another process lands on different shapes in different rounds instead
    of on every repeat of one shape. Each row keeps the minimum (``seconds``: interference only
    ever adds time, so the fastest repeat is the least disturbed one) and the median repeat
    (``median_seconds``), which the time fit takes where the minima are inconsistent across the
    shapes (fit.fit_timings, docs/calibration.md). On a contended CPU (``contention``) the
    rounds go on to CONTENDED_ROUNDS in all: the minimum of three or five repeats is then
    disturbed by a different amount on each shape, and the fit's alpha with it; each row's
    ``repeats`` says how many it kept.
    """
    clock = Clock(device, torch, train.reset)
    for shape in grid:
        batches(shape)  # collation is the data loader's work: never inside a timed call
    _guarded(grid[0], batches, device, lambda: clock.run(train, batches(grid[0])))
    samples = {shape: [] for shape in grid}
    firsts, peaks = {}, {}
    bar = _progress.reporter(len(grid) * rounds, progress)
    order = random.Random(0)
    index, planned = 0, rounds
    while index < planned:
        shapes = list(grid)
        if index:
            order.shuffle(shapes)
        for shape in shapes:
            def timed(batch=batches(shape)):
                return _guarded(shape, batches, device, lambda: probe.watch(
                    shape, lambda: clock.run(train, batch)))

            if index == 0:
                first = timed()[0]
                firsts[shape] = None if shape == grid[0] else first
                peaks[shape] = _guarded(shape, batches, device, lambda: probe.measure(
                    lambda: clock.run(train, batches(shape))))[1]
            samples[shape].append(timed())
            bar(f"round {index + 1}/{planned} {batches.describe(shape)} "
                f"{samples[shape][-1][0] * 1e3:.1f} ms")
        index += 1
        if index == rounds and rounds < CONTENDED_ROUNDS and contended(samples, clock):
            planned = CONTENDED_ROUNDS
            bar(None)
            bar = _progress.reporter(len(grid) * (planned - rounds), progress)
    bar(None)
    rows = [_row(shape, samples[shape], firsts[shape], peaks[shape], clock,
                 batches.row_keys(shape), probe) for shape in grid]
    return rows, clock.name


#: The rounds a contended CPU is timed in, at least: with four busy processes on two cores, a
#: module of known cost (bindings/python/tests/test_calibrate_timing.py) came out with alpha up
#: to 9.5% off from three rounds and 8% from six, and within 4% from ten, where every shape's
#: fastest repeat carries the same few tenths of a millisecond, which the intercept takes.
CONTENDED_ROUNDS = 10
#: A CPU is contended when the timed calls' wall clock exceeds their thread's CPU time by this
#: factor (median over the calls): they waited that long for a core. Quiet, one thread: 1.0-1.05.
CONTENDED_WALL_OVER_THREAD = 1.25


def contention(runs):
    """The median wall clock over thread CPU time of timed calls (fitted, wall, thread); None
    where no thread time was spent."""
    ratios = sorted(wall / cpu for _, wall, cpu in runs if cpu > 0)
    return ratios[len(ratios) // 2] if ratios else None


def contended(samples, clock):
    """Whether the thread-time clock timed these calls (lists of runs per shape) on a
    contended CPU; other clocks are not told apart from the load this way (several threads
    spend CPU beside the caller's)."""
    ratio = contention([run for runs in samples.values() for run in runs])
    return (clock.name == "thread_time" and ratio is not None
            and ratio > CONTENDED_WALL_OVER_THREAD)


class TrainingStep:
    """One forward, backward (and optimizer step) as training runs it: step(batch). reset()
    clears the gradients afterwards, outside the timed call. The trial runs the parts apart:
    micro_step(batch) per micro-batch (gradients accumulate), optimizer_step() once a step,
    zero_grad() after it."""

    def __init__(self, module, forward, optimizer, torch):
        self.module, self.optimizer, self.torch = module, optimizer, torch
        self.forward = forward or _batches.default_forward

    def __call__(self, batch):
        self.micro_step(batch)
        self.optimizer_step()

    def micro_step(self, batch):
        """Forward and backward of one micro-batch."""
        _batches.loss_of(self.forward(self.module, batch), self.torch).backward()

    def optimizer_step(self):
        if self.optimizer is not None:
            self.optimizer.step()

    def zero_grad(self):
        """Clear the gradients and keep their buffers: memory as a training job holds it."""
        if self.optimizer is not None:
            self.optimizer.zero_grad(set_to_none=False)
        else:
            self.module.zero_grad(set_to_none=False)

    def reset(self):
        if self.optimizer is not None:
            self.optimizer.zero_grad(set_to_none=True)
        else:
            self.module.zero_grad(set_to_none=False)  # keep the buffers: memory as trained


def guarded(run, device, message, cleanup=None):
    """run(), with an out-of-memory error turned into OutOfMemory(message(the device's text)),
    after ``cleanup()`` and freeing the device's cached blocks."""
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - only an OOM is turned into a message
        if not _memory.is_out_of_memory(exc):
            raise
        said = str(exc)
    if cleanup is not None:
        cleanup()
    _memory.free_cached(device)
    raise OutOfMemory(message(said))


def _guarded(shape, batches, device, run):
    """run(), with an out-of-memory error turned into an OutOfMemory naming the shape."""
    return guarded(run, device, lambda said: (
        f"calibrate: {batches.describe(shape)} ran out of memory on {device}; pass "
        f"{batches.remedy}. No cost model was written. The device said: {said}"))


class OutOfMemory(ValueError):
    """A call did not fit on its device: for calibration an error for the grid asked for (or
    the end of a grid extension), for the trial a per-device batch size that does not fit."""


def _row(shape, samples, first, peak, clock, keys, probe):
    fitted = sorted(s[0] for s in samples)
    row = {**keys, "seconds": fitted[0], "median_seconds": fitted[len(fitted) // 2],
           "wall_seconds": min(s[1] for s in samples), "peak_bytes": peak,
           "spread": fitted[len(fitted) // 2] / fitted[0] - 1.0 if fitted[0] > 0 else 0.0,
           "first_seconds": first, "repeats": len(samples)}
    if clock.cpu:
        row["thread_seconds"] = min(s[2] for s in samples)
        row["wall_over_thread"] = contention(samples)
    row.update(probe.watched(shape))
    return row


class Clock:
    """Times one call: (fitted seconds, wall, thread CPU); ``reset`` runs after it, untimed.

    CUDA: CUDA events around the call (the device's time, host jitter excluded), the wall
    clock around it with synchronisations. CPU: the calling thread's CPU time
    (time.thread_time), which a busy machine cannot inflate by preempting us, when torch runs
    on one thread; with several intra-op threads that clock would miss the workers' share, so
    the wall clock is fitted instead and the thread time is only recorded.
    """

    def __init__(self, device, torch, reset=None):
        self.torch, self.device, self._reset = torch, device, reset
        self.cuda = device.type == "cuda"
        self.cpu = not self.cuda
        self.threads = torch.get_num_threads()
        if self.cuda:
            self.name = "cuda_events"
        else:
            self.name = "thread_time" if self.threads == 1 else "wall"

    def run(self, fn, *args):
        torch = self.torch
        if self.cuda:
            torch.cuda.synchronize(self.device)
            begin, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            begin.record()
        wall, cpu = time.perf_counter(), time.thread_time()
        fn(*args)
        if self.cuda:
            end.record()
            torch.cuda.synchronize(self.device)
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        if self._reset is not None:
            self._reset()
        if self.cuda:
            return begin.elapsed_time(end) / 1e3, wall, cpu
        return (cpu if self.name == "thread_time" else wall), wall, cpu
