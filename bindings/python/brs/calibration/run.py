"""calibrate itself: its steps in order, each done by a module of brs.calibration."""

from . import (arguments as _arguments, batches as _batches, context_parallel as _cp,
               encoder as _encoder,
               extension as _extension, grid as _grid, memory as _memory, record as _record,
               result as _result, timing as _timing)

DEFAULT_REPEATS = 5


def calibrate(model, lengths_or_dataset, *, collate_fn=None, forward=None, device=None,
              dtype=None, batch_sizes=None, seq_lens=None, repeats=DEFAULT_REPEATS,
              memory_budget=None, optimizer=None, progress=True, encoder=None, image_sizes=None,
              image_counts=None, cp_size=None):
    """Fit alpha, intercept and max_tokens to ``model``'s measured cost; returns a CostModel.

    model: a torch module; or a transformers config, a built-in shape name
    (brs.calibration.shapes.SHAPES) or a local directory with config.json, built with random
    weights (in ``dtype``: default bfloat16 on CUDA, float32 elsewhere).
    lengths_or_dataset: the dataset's token counts (a sequence, array, or a lengths file's
    path), or a tokenized dataset (its "length" column, else its rows' input_ids).
    collate_fn: rows -> batch, the training collator; rows are dicts with ``input_ids`` (a list
    of token ids). Default: pad to the longest, attention_mask, labels -100 on padding
    (batches.default_collate). forward: (model, batch) -> loss, the training loss; default
    ``model(**batch)`` and its ``.loss``. A timed batch of shape (bs, L) holds bs rows, one of
    length L, the others of lengths drawn from the dataset's up to L (docs/calibration.md).
    device: where to run (default: the module's device; for a config, cuda if available).
    batch_sizes, seq_lens: the grid (default: batch sizes 1, 2, 4, 8, extended with larger
    ones while the time does not grow over the grid, and the lengths at the
    10/30/50/70/90/100th percentiles). repeats: timed warm rounds over the grid; each shape
    keeps its fastest, and its first run is timed apart (CostModel.first_shape_seconds).
    memory_budget: bytes or e.g. "70GiB" (default: free CUDA memory minus a margin; on CPU
    no cap unless one is given). optimizer: None (not timed), a torch.optim.Optimizer over the
    model's parameters, or a callable params -> optimizer; its step changes the weights.
    progress: a tqdm bar if tqdm is installed, else one line a shape.
    encoder: also calibrate the encoder part (vision-language models): a hook ``encoder(sizes)
    -> step`` running the vision tower on images of those sizes (brs.calibration.encoder), or
    "auto" for a Qwen2-VL-style model's own tower. image_sizes: the images timed, patch counts
    or (h, w) grids of patches (default 64, 256, 1024, 4096 patches); image_counts: images per
    call (default 1, 2, 4); at least three sizes and two counts. Fits encoder_weight,
    encoder_alpha and encoder_intercept in the text part's units; max_encoder_tokens is left to
    the user (the encoder record has its bytes per patch).
    Checks the lengths, the grid and the budget against the model's own memory, in that
    order, before building or timing anything. On CPU it first makes glibc keep freed memory
    (brs.calibration.memory.keep_freed_memory, recorded in the cost model's timing):
    process-wide, and what a CPU training loop should do too.
    cp_size: fit context parallelism's cost instead (brs/calibration/context_parallel.py): on
    every rank of a group of cp_size processes, ``model`` a module with ``loss_sum(shard,
    groups)`` over brs.integrations.context_parallel shards (None or "reference": brs's
    TinyDecoder), timed at every degree up to cp_size on seq_lens (default ten quantiles of the
    lengths); alpha, intercept, cp_comm_cost and cp_latency fitted together.
    Warns (UserWarning) when the machine was busy, the grid was extended or a shape's first
    run costs more than a quarter of the median warm micro-batch.
    """
    import torch

    data = _arguments.resolve_lengths(lengths_or_dataset)
    if cp_size is not None:
        return _cp.calibrate(seq_lens or _cp.quantiles(data), _arguments.positive_int(
            "cp_size", cp_size), model=_cp.module_of(model), repeats=repeats)
    repeats = _arguments.positive_int("repeats", repeats)
    collate_fn = _arguments.check_callable("collate_fn", collate_fn)
    forward = _arguments.check_callable("forward", forward)
    spec = _arguments.ModelSpec(model, device, dtype)
    device = spec.device
    grid = _grid.build(spec.max_positions(), data, device, batch_sizes, seq_lens)
    encoder = _encoder.check(encoder, image_sizes, image_counts)
    image_grid = encoder and _encoder.grid(image_sizes, image_counts, device)
    budget, budget_rule = _arguments.resolve_budget(memory_budget, device)
    _arguments.check_budget(budget, budget_rule, spec.held_bytes(optimizer))

    module = spec.build()
    if encoder == "auto":  # before any timing: a model without a tower fails at once
        encoder = _encoder.qwen2_vl(module)
    train = _timing.TrainingStep(module, forward,
                                 _arguments.resolve_optimizer(module, optimizer), torch)
    batches = _batches.Batches(data, _arguments.vocabulary(module), _batches.pad_id_of(module),
                               collate_fn, device, torch)
    probe = _memory.PeakProbe(device)
    allocator = _memory.keep_freed_memory() if device.type == "cpu" else None
    module.train()
    load_before = _record.load_average()

    def measure(shapes):
        return _timing.measure(shapes, batches, repeats, train, probe, device, progress, torch)

    rows, clock = measure(grid)
    extended = [] if batch_sizes is not None else _extension.extend(rows, measure, device, budget)
    timing = _record.timing_info(clock, repeats, rows, load_before, _record.load_average(),
                                 extended)
    if allocator:
        timing["allocator"] = allocator
    _record.warn_if_busy(timing)
    cost_model = _result.cost_model(rows, data, budget, budget_rule, probe.method, spec.name,
                                    device, timing, probe.reserved_record())
    _record.warn_if_first_shapes_cost(cost_model, device)
    if encoder is not None:
        _encoder.calibrate(cost_model, encoder, image_grid, repeats, device, progress, torch)
    return cost_model
