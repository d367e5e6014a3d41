"""calibrate itself: its steps in order, each done by a module of brs.calibration."""

from . import (arguments as _arguments, extension as _extension, grid as _grid,
               memory as _memory, record as _record, result as _result, timing as _timing)

DEFAULT_REPEATS = 5


def calibrate(model, lengths, *, device=None, batch_sizes=None, seq_lens=None,
              repeats=DEFAULT_REPEATS, memory_budget=None, optimizer=None, progress=True):
    """Fit alpha, intercept and max_tokens to ``model``'s measured cost; returns a CostModel.

    model: a torch module called as ``model(input_ids=ids, labels=ids)`` returning a loss
    tensor or an object with ``.loss``; or a transformers config, a built-in shape name
    (brs.calibration.shapes.SHAPES) or a local directory with config.json, built with random
    weights.
    lengths: the dataset's token counts (a sequence, array, or a lengths file's path).
    device: where to run (default: the module's device; for a config, cuda if available).
    batch_sizes, seq_lens: the grid (default: batch sizes 1, 2, 4, 8, extended with larger
    ones while the time does not grow over the grid, and the lengths at the
    10/30/50/70/90/100th percentiles). repeats: timed rounds over the grid; each shape keeps
    its fastest. memory_budget: bytes or e.g. "70GiB" (default: free CUDA memory minus a
    margin; on CPU half of MemAvailable). optimizer: None (not timed), a
    torch.optim.Optimizer over the model's parameters, or a callable params -> optimizer; its
    step changes the weights. progress: a tqdm bar if tqdm is installed, else one line a shape.
    On CPU it first makes glibc keep freed memory (brs.calibration.memory.keep_freed_memory,
    recorded in the cost model's timing): process-wide, and what a CPU training loop should do
    too.
    Warns (UserWarning) when the machine was busy or the grid was extended.
    """
    import torch

    module, name = _arguments.resolve_module(model, device)
    device = _arguments.parameter_device(module)
    data = _arguments.resolve_lengths(lengths)
    repeats = _arguments.positive_int("repeats", repeats)
    budget, budget_rule = _arguments.resolve_budget(memory_budget, device)
    grid = _grid.build(module, data, device, batch_sizes, seq_lens)
    step = _arguments.resolve_optimizer(module, optimizer)
    vocab = _arguments.vocabulary(module)
    probe = _memory.PeakProbe(device)
    allocator = _memory.keep_freed_memory() if device.type == "cpu" else None
    module.train()
    load_before = _record.load_average()

    def measure(shapes):
        return _timing.measure(module, shapes, vocab, repeats, step, probe, device, progress,
                               torch)

    rows, clock = measure(grid)
    extended = [] if batch_sizes is not None else _extension.extend(rows, measure, device, budget)
    timing = _record.timing_info(clock, repeats, rows, load_before, _record.load_average(),
                                 extended)
    if allocator:
        timing["allocator"] = allocator
    _record.warn_if_busy(timing)
    return _result.cost_model(rows, data, budget, budget_rule, probe.method, name, device, timing)
