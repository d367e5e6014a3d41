"""brs.calibrate: time the user's own model and fit the planner's cost model to it.

    cm = brs.calibrate(model, lengths, device="cuda", memory_budget="70GiB")
    cm.save("cost.json")   # python -m brs calibrate ... -o cost.json does the same

For every (batch size, length) of a grid spanning the dataset's lengths, a forward and backward
pass (and the optimizer step, when one is given) is run after a warm-up, ``repeats`` times; the
median time and the peak memory are kept. Time is fitted as ``c0 + a*bs*L + b*bs*L^2`` by
non-negative least squares, which gives brs's units: alpha = b/a, intercept = c0/a. Memory is
fitted the same way and gives ``max_tokens`` for the budget. docs/calibration.md explains the
choices (grid, weights, memory probes). numpy and torch are imported on the first call only:
``import brs`` needs neither.
"""

import statistics
import sys
import time

from . import _memory, _shapes
from .cost_model import CostModel

DEFAULT_QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
DEFAULT_BATCH_SIZES = (1, 2, 4, 8)
#: Default grids skip shapes above this many padded tokens on CPU, where a large shape takes
#: seconds per pass; on CUDA every shape of the grid runs.
CPU_MAX_GRID_TOKENS = 4096
_LENGTH_ROUND = 8


def calibrate(model, lengths, *, device=None, batch_sizes=None, seq_lens=None, repeats=3,
              memory_budget=None, optimizer=None, progress=True):
    """Fit alpha, intercept and max_tokens to ``model``'s measured cost; returns a CostModel.

    model: a torch module called as ``model(input_ids=ids, labels=ids)`` returning a loss
    tensor or an object with ``.loss``; or a transformers config, a built-in shape name
    (brs._shapes.SHAPES) or a local directory with config.json, built with random weights.
    lengths: the dataset's token counts (a sequence, array, or a lengths file's path).
    device: where to run (default: the module's device; for a config, cuda if available).
    batch_sizes, seq_lens: the grid (default: batch sizes 1, 2, 4, 8 and the lengths at the
    10/30/50/70/90/100th percentiles). memory_budget: bytes or e.g. "70GiB" (default: free
    CUDA memory minus a margin; on CPU half of MemAvailable). optimizer: None (not timed), a
    torch.optim.Optimizer over the model's parameters, or a callable params -> optimizer; its
    step changes the weights. progress: a tqdm bar if tqdm is installed, else one line a shape.
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
    module.train()
    rows = _measure(module, grid, vocab, repeats, step, probe, device, progress, torch)
    return _fitted(rows, data, budget, budget_rule, probe.method, name, device)


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
        try:
            data = np.loadtxt(lengths, dtype=np.int64, ndmin=1)
        except (OSError, ValueError) as exc:
            raise ValueError(f"calibrate: cannot read lengths file {lengths!r}: {exc}") from None
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
    """(bs, L) shapes, smallest bs*L first so the CPU's peak-RSS probe sees growing peaks."""
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

def _measure(module, grid, vocab, repeats, step, probe, device, progress, torch):
    ids_of = _id_maker(vocab, device, torch)
    _run(module, ids_of(*grid[0]), step, device, torch)  # first call: kernels, grads, workspaces
    probe.set_baseline()
    rows = []
    bar = _progress(len(grid), progress)
    for bs, length in grid:
        ids = ids_of(bs, length)
        try:
            _run(module, ids, step, device, torch)  # warm-up of this shape
            probe.reset()
            times = [_run(module, ids, step, device, torch) for _ in range(repeats)]
            peak = probe.peak()
        except Exception as exc:  # noqa: BLE001 - only an OOM is turned into a message
            if not _memory.is_out_of_memory(exc):
                raise
            del ids
            _memory.free_cached(device)
            raise ValueError(f"calibrate: batch size {bs} x length {length} ran out of memory "
                             f"on {device}; pass smaller batch_sizes or seq_lens (or a smaller "
                             "model). No cost model was written.") from None
        rows.append({"batch_size": bs, "length": length, "seconds": statistics.median(times),
                     "peak_bytes": peak})
        bar(f"bs={bs} L={length} {rows[-1]['seconds'] * 1e3:.1f} ms")
    bar(None)
    return rows


def _id_maker(vocab, device, torch):
    generator = torch.Generator().manual_seed(0)

    def ids_of(bs, length):
        return torch.randint(0, vocab, (bs, length), generator=generator).to(device)

    return ids_of


def _run(module, ids, step, device, torch):
    """Seconds of one forward + backward (+ optimizer step), synchronised on CUDA."""
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    out = module(input_ids=ids, labels=ids)
    loss = out if isinstance(out, torch.Tensor) else getattr(out, "loss", None)
    if loss is None:
        raise TypeError("calibrate: the model's output has no .loss and is not a tensor; it "
                        "must compute a loss from labels=")
    loss.backward()
    if step is not None:
        step.step()
        step.zero_grad(set_to_none=True)
    if cuda:
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - start
    if step is None:
        module.zero_grad(set_to_none=False)  # keep the gradient buffers: memory as in training
    return seconds


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

def _fitted(rows, data, budget, budget_rule, memory_method, name, device):
    from . import _fit

    bs = [r["batch_size"] for r in rows]
    length = [r["length"] for r in rows]
    fit = _fit.fit_three_terms(bs, length, [r["seconds"] for r in rows], robust=True)
    c0, a, b = fit["c0"], fit["c1"], fit["c2"]
    for i in fit["outliers"]:
        rows[i]["outlier"] = True  # left out of the time fit (see _fit.fit_three_terms)
    if a <= 0:
        raise ValueError("calibrate: the fit found no time per padded token (a = 0); the grid "
                         "is too small or too noisy: give larger batch_sizes or seq_lens")
    memory, max_tokens = _memory_fit(rows, bs, length, int(data.max()), budget, budget_rule,
                                     memory_method)
    return CostModel(b / a, c0 / a, max_tokens, r2=fit["r2"], worst_residual=fit["worst"],
                     source="calibrated", model=name, device=_device_name(device),
                     seconds_per_unit=a, memory=memory, timings=rows)


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
    tokens = int((budget - m0) // per_token)
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
