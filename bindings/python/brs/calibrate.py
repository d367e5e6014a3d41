"""brs.calibrate: time the user's own model and fit the planner's cost model to it.

    cm = brs.calibrate(model, lengths, device="cuda", memory_budget="70GiB")
    cm.save("cost.json")   # python -m brs calibrate ... -o cost.json does the same
    cm.predict(8, 512)     # seconds of a micro-batch of 8 samples padded to 512 tokens

For every (batch size, length) of a grid spanning the dataset's lengths, a forward and backward
pass (and the optimizer step, when one is given) is timed ``repeats`` times, in rounds over a
shuffled grid, and the fastest repeat is kept: CUDA events on a GPU, the thread's CPU time on a
CPU. Time is fitted as ``c0 + a*bs*L + b*bs*L^2`` by non-negative least squares, which gives
brs's units: alpha = b/a, intercept = c0/a. Memory is fitted the same way and gives
``max_tokens`` for the budget. docs/calibration.md explains the choices (grid, clocks,
estimator, memory probes). numpy and torch are imported on the first call only: ``import brs``
needs neither.
"""

import os
import random
import sys
import time
import warnings

from . import _memory, _shapes
from ._lengths import read_file as read_lengths_file
from .cost_model import CostModel

DEFAULT_QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
DEFAULT_BATCH_SIZES = (1, 2, 4, 8)
DEFAULT_REPEATS = 5
#: Default grids skip shapes above this many padded tokens on CPU, where a large shape takes
#: seconds per pass; on CUDA every shape of the grid runs.
CPU_MAX_GRID_TOKENS = 4096
#: ... and extensions of a default grid (below) skip shapes above this many on CPU.
CPU_MAX_EXTENDED_TOKENS = 4 * CPU_MAX_GRID_TOKENS
#: A default grid over which the time grows less than this factor, from its fewest to its most
#: padded tokens, is launch-bound (a GPU running small shapes): the fit would see only the
#: intercept, so the grid is extended with larger batch sizes.
GROWTH_MIN = 2.0
#: At most this many extensions, each adding 2x and 4x the largest batch size so far.
MAX_EXTENSIONS = 3
#: Extensions keep the fitted peak memory under this fraction of the budget.
EXTENSION_MEMORY_FRACTION = 0.8
#: A budget that holds more padded tokens than this by the memory fit caps nothing.
MAX_TOKENS_CAP = 2**53
_LENGTH_ROUND = 8


def calibrate(model, lengths, *, device=None, batch_sizes=None, seq_lens=None,
              repeats=DEFAULT_REPEATS, memory_budget=None, optimizer=None, progress=True):
    """Fit alpha, intercept and max_tokens to ``model``'s measured cost; returns a CostModel.

    model: a torch module called as ``model(input_ids=ids, labels=ids)`` returning a loss
    tensor or an object with ``.loss``; or a transformers config, a built-in shape name
    (brs._shapes.SHAPES) or a local directory with config.json, built with random weights.
    lengths: the dataset's token counts (a sequence, array, or a lengths file's path).
    device: where to run (default: the module's device; for a config, cuda if available).
    batch_sizes, seq_lens: the grid (default: batch sizes 1, 2, 4, 8, extended with larger
    ones while the time does not grow over the grid, and the lengths at the
    10/30/50/70/90/100th percentiles). repeats: timed rounds over the grid; each shape keeps
    its fastest. memory_budget: bytes or e.g. "70GiB" (default: free CUDA memory minus a
    margin; on CPU half of MemAvailable). optimizer: None (not timed), a
    torch.optim.Optimizer over the model's parameters, or a callable params -> optimizer; its
    step changes the weights. progress: a tqdm bar if tqdm is installed, else one line a shape.
    On CPU it first makes glibc keep freed memory (brs._memory.keep_freed_memory, recorded in
    the cost model's timing): process-wide, and what a CPU training loop should do too.
    Warns (UserWarning) when the machine was busy or the grid was extended.
    """
    import torch

    module, name = _module(model, device)
    device = _parameter_device(module)
    data = _lengths(lengths)
    repeats = _positive_int("repeats", repeats)
    budget, budget_rule = _budget(memory_budget, device)
    grid = _grid(module, data, device, batch_sizes, seq_lens)
    step = _optimizer(module, optimizer)
    vocab = _vocabulary(module)
    probe = _memory.PeakProbe(device)
    allocator = _memory.keep_freed_memory() if device.type == "cpu" else None
    module.train()
    load_before = _load_average()

    def measure(shapes):
        return _measure(module, shapes, vocab, repeats, step, probe, device, progress, torch)

    rows, clock = measure(grid)
    extended = [] if batch_sizes is not None else _extend(rows, measure, device, budget)
    timing = _timing_info(clock, repeats, rows, load_before, _load_average(), extended)
    if allocator:
        timing["allocator"] = allocator
    _warn_if_busy(timing)
    return _fitted(rows, data, budget, budget_rule, probe.method, name, device, timing)


# -- arguments ---------------------------------------------------------------------------------

def _module(model, device):
    import torch

    if model is None:
        raise TypeError("calibrate: model is required (a torch module, a transformers config, a "
                        "built-in shape name or a directory with config.json)")
    if isinstance(model, torch.nn.Module):
        if device is not None:
            model = model.to(_device(device))
        return model, type(model).__name__
    config = model
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        config = _shapes.load_config(model)
    elif not hasattr(model, "to_dict") or not hasattr(model, "model_type"):
        raise TypeError(f"calibrate: model must be a torch.nn.Module, a transformers config, a "
                        f"shape name or a directory; got {type(model).__name__}")
    target = _device(device) if device is not None else _default_device()
    dtype = torch.bfloat16 if target.type == "cuda" else torch.float32
    label = str(model) if isinstance(model, str) else config.model_type
    return _shapes.build_model(config, device=target, dtype=dtype), label


def _device(device):
    import torch

    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"calibrate: device {device!r} is not a torch device: {exc}") from None


def _default_device():
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _parameter_device(module):
    import torch

    for parameter in module.parameters():
        return parameter.device
    return torch.device("cpu")


def _lengths(lengths):
    import numpy as np

    if isinstance(lengths, str) or hasattr(lengths, "__fspath__"):
        try:  # the format of docs/formats.md, as `brs plan --lengths` reads it
            data = np.asarray(read_lengths_file(lengths), dtype=np.int64)
        except ValueError as exc:
            raise ValueError(f"calibrate: {exc}") from None
    else:
        try:
            data = np.asarray(lengths, dtype=np.int64).reshape(-1)
        except (TypeError, ValueError):
            raise TypeError("calibrate: lengths must be a sequence of token counts or a "
                            f"lengths file's path; got {type(lengths).__name__}") from None
    if data.size == 0 or data.min() < 1:
        raise ValueError("calibrate: lengths must hold at least one token count, each >= 1")
    return data


def _positive_int(name, value):
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"calibrate: {name} must be an int >= 1; got {value!r}")
    return int(value)


def _budget(memory_budget, device):
    if memory_budget is None:
        return _memory.default_budget(device)
    return _memory.parse_bytes(memory_budget), "given"


def _optimizer(module, optimizer):
    import torch

    if optimizer is None:
        return None
    if callable(optimizer) and not isinstance(optimizer, torch.optim.Optimizer):
        optimizer = optimizer(module.parameters())
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError("calibrate: optimizer must be None, a torch.optim.Optimizer or a "
                        f"callable params -> Optimizer; got {type(optimizer).__name__}")
    return optimizer


def _vocabulary(module):
    """How many token ids the model embeds: random ids are drawn below it."""
    import torch

    size = getattr(getattr(module, "config", None), "vocab_size", None)
    if size:
        return int(size)
    for sub in module.modules():
        if isinstance(sub, torch.nn.Embedding):
            return sub.num_embeddings
    return 1


# -- the grid ----------------------------------------------------------------------------------

def _grid(module, data, device, batch_sizes, seq_lens):
    """(bs, L) shapes, smallest bs*L first: a shape that runs out of memory comes last."""
    import numpy as np

    from . import _fit

    limit = _shapes.max_positions(module)
    explicit = batch_sizes is not None or seq_lens is not None
    sizes = _int_list("batch_sizes", batch_sizes) if batch_sizes is not None \
        else list(DEFAULT_BATCH_SIZES)
    if seq_lens is not None:
        lens = _int_list("seq_lens", seq_lens)
        if limit and max(lens) > limit:
            raise ValueError(f"calibrate: seq_lens holds {max(lens)}, above the model's "
                             f"{limit} positions")
    else:
        lens = _quantile_lengths(data, limit)
    shapes = sorted({(b, l) for b in sizes for l in lens}, key=lambda s: (s[0] * s[1], s))
    if not explicit and device.type == "cpu":
        shapes = [s for s in shapes if s[0] * s[1] <= CPU_MAX_GRID_TOKENS] or shapes[:1]
    if np.linalg.matrix_rank(_fit.design(*zip(*shapes))) < 3:
        raise ValueError(f"calibrate: the grid batch_sizes={sizes} x seq_lens={lens} cannot fit "
                         "intercept, bs*L and bs*L^2 apart: give at least two distinct lengths "
                         "and three shapes")
    return shapes


def _int_list(name, values):
    try:
        out = sorted({int(v) for v in values})
    except (TypeError, ValueError):
        raise TypeError(f"calibrate: {name} must be a list of ints; got {values!r}") from None
    if not out or out[0] < 1:
        raise ValueError(f"calibrate: {name} must hold ints >= 1; got {values!r}")
    return out


def _quantile_lengths(data, limit):
    import numpy as np

    top = int(data.max()) if limit is None else min(int(data.max()), limit)
    picks = np.quantile(np.minimum(data, top), DEFAULT_QUANTILES)
    rounded = {min(top, int(-(-p // _LENGTH_ROUND) * _LENGTH_ROUND)) for p in picks}
    return sorted(max(1, v) for v in rounded)


# -- timing ------------------------------------------------------------------------------------

def _measure(module, grid, vocab, rounds, step, probe, device, progress, torch):
    """One row per shape: the minimum over ``rounds`` interleaved timings, and the peak memory.

    Round 0 runs the shapes smallest first, each once untimed (its warm-up, with the memory
    probe around it) then once timed; later rounds run the whole grid in a shuffled order, so
    a burst of load from another process lands on different shapes in different rounds
    instead of on every repeat of one shape. The minimum is the estimator: interference only
    ever adds time, so the fastest repeat is the least disturbed one (docs/calibration.md).
    """
    clock = _Clock(device, torch)
    ids_of = _id_maker(vocab, device, torch)
    inputs = {shape: ids_of(*shape) for shape in grid}
    _guarded(grid[0], device, lambda: clock.run(module, inputs[grid[0]], step))  # kernels, grads
    samples = {shape: [] for shape in grid}
    peaks = {}
    bar = _progress(len(grid) * rounds, progress)
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
    raise _OutOfMemory(f"calibrate: batch size {shape[0]} x length {shape[1]} ran out of "
                       f"memory on {device}; pass smaller batch_sizes or seq_lens (or a smaller "
                       "model). No cost model was written.")


class _OutOfMemory(ValueError):
    """A shape did not fit: an error for the grid asked for, the end of a grid extension."""


def _row(shape, samples, peak, clock):
    fitted = sorted(s[0] for s in samples)
    row = {"batch_size": shape[0], "length": shape[1], "seconds": fitted[0],
           "wall_seconds": min(s[1] for s in samples), "peak_bytes": peak,
           "spread": fitted[len(fitted) // 2] / fitted[0] - 1.0 if fitted[0] > 0 else 0.0}
    if clock.cpu:
        row["thread_seconds"] = min(s[2] for s in samples)
    return row


class _Clock:
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


# -- machine load --------------------------------------------------------------------------------

def _load_average():
    try:
        return os.getloadavg()[0]
    except OSError:  # not on this platform: no figure rather than a wrong one
        return None


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# -- launch-bound grids -------------------------------------------------------------------------

def _growth(rows):
    """(time of the shape with the most padded tokens / the one with the fewest, their tokens)."""
    by_tokens = sorted(rows, key=lambda r: (r["batch_size"] * r["length"], r["seconds"]))
    low, high = by_tokens[0], by_tokens[-1]
    ratio = high["seconds"] / low["seconds"] if low["seconds"] > 0 else float("inf")
    return ratio, low["batch_size"] * low["length"], high["batch_size"] * high["length"]


def _extend(rows, measure, device, budget):
    """Add larger batch sizes while the time does not grow over the grid; the sizes added.

    A GPU runs small shapes in the time of their kernel launches: over such a grid the time
    is flat, and the fit finds an intercept and no time per token. Doubling the batch sizes
    reaches the shapes where the device is busy, within the memory budget (by the memory fit
    of the shapes so far, and an out-of-memory error ends the extension, not the calibration).
    """
    added = []
    for _ in range(MAX_EXTENSIONS):
        ratio, low, high = _growth(rows)
        if ratio >= GROWTH_MIN:
            break
        shapes = _larger_shapes(rows, device, budget)
        if not shapes:
            break
        warnings.warn(f"calibrate: the time grew only {ratio:.2f}x from {low} to {high} padded "
                      "tokens (the device is launch-bound at these shapes): extending the grid "
                      f"with batch sizes {sorted({s[0] for s in shapes})}", stacklevel=3)
        try:
            more, _ = measure(shapes)
        except _OutOfMemory:
            break
        rows.extend(more)
        added.extend(sorted({s[0] for s in shapes}))
    return added


def _larger_shapes(rows, device, budget):
    """2x and 4x the largest batch size, at each length, where memory (and on CPU the token
    cap) allows."""
    top = max(r["batch_size"] for r in rows)
    lengths = sorted({r["length"] for r in rows})
    peak = _peak_model(rows)
    shapes = []
    for bs in (2 * top, 4 * top):
        for length in lengths:
            tokens = bs * length
            if device.type == "cpu" and tokens > CPU_MAX_EXTENDED_TOKENS:
                continue
            if peak and budget and peak(bs, length) > EXTENSION_MEMORY_FRACTION * budget:
                continue
            shapes.append((bs, length))
    return shapes


def _peak_model(rows):
    """bytes(bs, L) fitted to the shapes' peaks, or None when they were not measured."""
    from . import _fit

    if any(r["peak_bytes"] is None for r in rows):
        return None
    bs = [r["batch_size"] for r in rows]
    length = [r["length"] for r in rows]
    try:
        fit = _fit.fit_three_terms(bs, length, [max(r["peak_bytes"], 1) for r in rows],
                                   relative=False)
    except ValueError:
        return None
    return lambda b, l: fit["c0"] + fit["c1"] * b * l + fit["c2"] * b * l * l


# -- how the timings were taken ------------------------------------------------------------------

def _timing_info(clock, rounds, rows, load_before, load_after, extended):
    spreads = sorted(r["spread"] for r in rows)
    loads = [x for x in (load_before, load_after) if x is not None]
    cpus = _cpu_count()
    info = {"clock": clock, "estimator": "min", "rounds": rounds, "interleaved": True,
            "cpus": cpus, "load_average": [load_before, load_after],
            "busy": bool(loads) and max(loads) > cpus,
            "median_spread": spreads[len(spreads) // 2]}
    if extended:
        info["extended_batch_sizes"] = extended
    return info


def _warn_if_busy(timing):
    if not timing["busy"]:
        return
    load = max(x for x in timing["load_average"] if x is not None)
    advice = ("the fastest of the interleaved repeats is kept, and the thread's CPU time is "
              "what was fitted" if timing["clock"] in ("thread_time", "cuda_events") else
              "the wall clock was fitted because torch runs on several threads: "
              "torch.set_num_threads(1) (CLI: --threads 1) times the thread's CPU time, which "
              "other processes cannot inflate")
    warnings.warn(f"calibrate: the machine was busy (load average {load:.1f} on "
                  f"{timing['cpus']} CPUs; the median shape's repeats spread "
                  f"{timing['median_spread']:.0%}); {advice}", stacklevel=3)


def _progress(total, enabled):
    if not enabled:
        return lambda text: None
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is not None:
        bar = tqdm(total=total, desc="brs calibrate", unit="shape")

        def update(text):
            if text is None:
                bar.close()
            else:
                bar.set_postfix_str(text)
                bar.update(1)
        return update
    count = [0]

    def line(text):
        if text is not None:
            count[0] += 1
            print(f"brs calibrate: {count[0]}/{total} {text}", file=sys.stderr, flush=True)
    return line


# -- fitting -----------------------------------------------------------------------------------

def _fitted(rows, data, budget, budget_rule, memory_method, name, device, timing):
    from . import _fit

    bs = [r["batch_size"] for r in rows]
    length = [r["length"] for r in rows]
    fit = _fit.fit_three_terms(bs, length, [r["seconds"] for r in rows], robust=True)
    c0, a, b = fit["c0"], fit["c1"], fit["c2"]
    for i in fit["outliers"]:
        rows[i]["outlier"] = True  # left out of the time fit (see _fit.fit_three_terms)
    if a <= 0:
        ratio, low, high = _growth(rows)
        raise ValueError(f"calibrate: the fit found no time per padded token (a = 0): the time "
                         f"grew {ratio:.2f}x from {low} to {high} padded tokens, so the device "
                         "is launch-bound (or the timings too noisy) over this grid; give larger "
                         "batch_sizes or seq_lens (unset batch_sizes extends the grid itself)")
    memory, max_tokens = _memory_fit(rows, bs, length, int(data.max()), budget, budget_rule,
                                     memory_method)
    return CostModel(b / a, c0 / a, max_tokens, r2=fit["r2"], worst_residual=fit["worst"],
                     source="calibrated", model=name, device=_device_name(device),
                     seconds_per_unit=a, memory=memory, timings=rows, timing=timing)


def _memory_fit(rows, bs, length, longest, budget, budget_rule, method):
    from . import _fit

    peaks = [r["peak_bytes"] for r in rows]
    info = {"method": method, "budget_bytes": budget, "budget_rule": budget_rule,
            "longest_length": longest}
    if any(p is None for p in peaks) or budget is None:
        info["note"] = "peak memory not measurable here: max_tokens left unset"
        return info, None
    fit = _fit.fit_three_terms(bs, length, [max(p, 1) for p in peaks], relative=False)
    m0, m1, m2 = fit["c0"], fit["c1"], fit["c2"]
    info.update(base_bytes=m0, bytes_per_token=m1, bytes_per_token_length=m2, r2=fit["r2"],
                worst_residual=fit["worst"])
    per_token = m1 + m2 * longest  # a micro-batch of the longest samples is the worst case
    if per_token <= 0:
        info["note"] = "peak memory did not grow with the shapes: max_tokens left unset"
        return info, None
    tokens = (budget - m0) / per_token
    if tokens > MAX_TOKENS_CAP:  # peaks flat to the byte (a model allocating nothing per token)
        info["note"] = "peak memory barely grew with the shapes: max_tokens left unset"
        return info, None
    tokens = int(tokens)
    if tokens < longest:
        raise ValueError(f"calibrate: memory_budget {budget} bytes ({budget_rule}) holds "
                         f"{max(tokens, 0)} padded tokens by the fit, less than one sample of "
                         f"the longest length {longest}; raise memory_budget")
    return info, tokens


def _device_name(device):
    import torch

    if device.type == "cuda":
        return f"cuda:{torch.cuda.get_device_name(device)}"
    return "cpu"
