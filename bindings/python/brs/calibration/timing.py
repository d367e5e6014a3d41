"""The interleaved min-of-k timer: every shape of a grid timed in rounds, the fastest repeat
kept, on the clock that a busy machine disturbs least."""

import random
import time

from . import memory as _memory, progress as _progress


def measure(module, grid, vocab, rounds, step, probe, device, progress, torch):
    """One row per shape: the minimum over ``rounds`` interleaved timings, and the peak memory.

    Round 0 runs the shapes smallest first, each once untimed (its warm-up, with the memory
    probe around it) then once timed; later rounds run the whole grid in a shuffled order, so
    a burst of load from another process lands on different shapes in different rounds
    instead of on every repeat of one shape. The minimum is the estimator: interference only
    ever adds time, so the fastest repeat is the least disturbed one (docs/calibration.md).
    """
    clock = Clock(device, torch)
    ids_of = _id_maker(vocab, device, torch)
    inputs = {shape: ids_of(*shape) for shape in grid}
    _guarded(grid[0], device, lambda: clock.run(module, inputs[grid[0]], step))  # kernels, grads
    samples = {shape: [] for shape in grid}
    peaks = {}
    bar = _progress.reporter(len(grid) * rounds, progress)
    order = random.Random(0)
    for index in range(rounds):
        shapes = list(grid)
        if index:
            order.shuffle(shapes)
        for shape in shapes:
            if index == 0:
                peaks[shape] = _first_timing(module, inputs[shape], step, probe, clock, shape,
                                             samples, device)
            else:
                samples[shape].append(_guarded(shape, device,
                                               lambda: clock.run(module, inputs[shape], step)))
            bar(f"round {index + 1}/{rounds} bs={shape[0]} L={shape[1]} "
                f"{samples[shape][-1][0] * 1e3:.1f} ms")
    bar(None)
    return [_row(shape, samples[shape], peaks[shape], clock) for shape in grid], clock.name


def _first_timing(module, ids, step, probe, clock, shape, samples, device):
    def run():
        _, peak = probe.measure(lambda: clock.run(module, ids, step))  # this shape's warm-up
        return clock.run(module, ids, step), peak

    timed, peak = _guarded(shape, device, run)
    samples[shape].append(timed)
    return peak


def _guarded(shape, device, run):
    """run(), with an out-of-memory error turned into a ValueError naming the shape."""
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - only an OOM is turned into a message
        if not _memory.is_out_of_memory(exc):
            raise
    _memory.free_cached(device)
    raise OutOfMemory(f"calibrate: batch size {shape[0]} x length {shape[1]} ran out of "
                       f"memory on {device}; pass smaller batch_sizes or seq_lens (or a smaller "
                       "model). No cost model was written.")


class OutOfMemory(ValueError):
    """A shape did not fit: an error for the grid asked for, the end of a grid extension."""


def _row(shape, samples, peak, clock):
    fitted = sorted(s[0] for s in samples)
    row = {"batch_size": shape[0], "length": shape[1], "seconds": fitted[0],
           "wall_seconds": min(s[1] for s in samples), "peak_bytes": peak,
           "spread": fitted[len(fitted) // 2] / fitted[0] - 1.0 if fitted[0] > 0 else 0.0}
    if clock.cpu:
        row["thread_seconds"] = min(s[2] for s in samples)
    return row


class Clock:
    """Times one forward + backward (+ optimizer step): (fitted seconds, wall, thread CPU).

    CUDA: CUDA events around the call (the device's time, host jitter excluded), the wall
    clock around it with synchronisations. CPU: the calling thread's CPU time
    (time.thread_time), which a busy machine cannot inflate by preempting us, when torch runs
    on one thread; with several intra-op threads that clock would miss the workers' share, so
    the wall clock is fitted instead and the thread time is only recorded.
    """

    def __init__(self, device, torch):
        self.torch, self.device = torch, device
        self.cuda = device.type == "cuda"
        self.cpu = not self.cuda
        self.threads = torch.get_num_threads()
        if self.cuda:
            self.name = "cuda_events"
        else:
            self.name = "thread_time" if self.threads == 1 else "wall"

    def run(self, module, ids, step):
        torch = self.torch
        if self.cuda:
            torch.cuda.synchronize(self.device)
            begin, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            begin.record()
        wall, cpu = time.perf_counter(), time.thread_time()
        _step(module, ids, step, torch)
        if self.cuda:
            end.record()
            torch.cuda.synchronize(self.device)
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        if step is None:
            module.zero_grad(set_to_none=False)  # keep the gradient buffers: memory as in training
        if self.cuda:
            return begin.elapsed_time(end) / 1e3, wall, cpu
        return (cpu if self.name == "thread_time" else wall), wall, cpu


def _id_maker(vocab, device, torch):
    generator = torch.Generator().manual_seed(0)

    def ids_of(bs, length):
        return torch.randint(0, vocab, (bs, length), generator=generator).to(device)

    return ids_of


def _step(module, ids, step, torch):
    """One forward + backward (+ optimizer step) of the module on ids."""
    out = module(input_ids=ids, labels=ids)
    loss = out if isinstance(out, torch.Tensor) else getattr(out, "loss", None)
    if loss is None:
        raise TypeError("calibrate: the model's output has no .loss and is not a tensor; it "
                        "must compute a loss from labels=")
    loss.backward()
    if step is not None:
        step.step()
        step.zero_grad(set_to_none=True)
