"""brs.trial itself: its steps in order (docs/trial.md)."""

import sys

from . import (clocks as _clocks, config as _config, cost as _cost, distributed as _distributed,
               measure as _measure, plans as _plans, results as _results, rounds as _rounds,
               time_split as _time_split)
from ..calibration import progress as _progress, record as _record

DEFAULT_STEPS = _config.DEFAULT_STEPS
SYNCS = ("micro_step", "step")


def trial(model, lengths_or_dataset, *, collate_fn=None, forward=None, per_device_batch_size,
          grad_accum=1, dp_size=None, max_tokens=None, pad_to_multiple_of=None,
          strategies=_plans.STRATEGIES, steps=DEFAULT_STEPS, device=None, out=None, seed=0,
          memory_budget=None, progress=True, command=None, **sampler_options):
    """Will brs pay on this setup? Times ``steps`` optimizer steps of each strategy on the
    user's model, lengths and device and returns the results dict (docs/trial.md's schema);
    with ``out`` (a folder) also writes results.json, report.md and trial.png there.

    model: a torch module, a transformers config, a directory with config.json or a locally
    cached hub name (built with random weights). lengths_or_dataset: token counts (a sequence,
    array or a lengths file's path, read by the library) or a tokenized dataset (rows with
    input_ids, given to collate_fn). collate_fn: rows -> batch (default: pad to the plan's
    padded length, attention_mask, labels -100 on padding). forward: (model, batch) -> loss
    (default model(**batch).loss). per_device_batch_size, grad_accum, dp_size: the job. In
    one process the dp_size ranks (default 1) are simulated, each rank's micro-batches in
    turn; under torchrun (torch.distributed initialised, or WORLD_SIZE > 1 and RANK set: the
    trial then creates the group, gloo on CPU and nccl on CUDA, and destroys it at the end)
    each process runs its own rank's micro-batches, dp_size must be the world size (the
    default), every rank returns the same dict and only rank 0 writes ``out`` and prints.
    max_tokens and sampler_options go to brs's sampler only; pad_to_multiple_of is every
    strategy's collator rule. strategies: a subset of ("brs", "upstream", "group_by_length",
    "random") holding "brs". steps: timed optimizer steps, drawn at random over the epoch
    (seeded by ``seed``). memory_budget: bytes or "8GiB": the largest-batch search's limit
    (CPU: no search without it). progress: a tqdm bar where installed, else lines on stderr.
    command: the command line to write at the top of report.md.

    cp_size (with max_tokens_per_rank, under torchrun): brs's dynamic context parallelism
    against a fixed CP degree and megatron-core's scheduler instead, on ``model`` "reference"
    or a CP module (brs/_trial/context_parallel.py; docs/trial.md "Context parallelism").

    Raises ValueError (TypeError for a wrong type) on bad input before anything is timed.
    """
    if sampler_options.get("cp_size") is not None:
        from .context_parallel import trial as context_parallel_trial

        return context_parallel_trial(
            model, lengths_or_dataset, per_device_batch_size=per_device_batch_size,
            grad_accum=grad_accum, steps=steps, device=device, out=out, seed=seed,
            progress=progress, command=command, **sampler_options)
    config = _config.checked(
        model, lengths_or_dataset, collate_fn=collate_fn, forward=forward,
        per_device_batch_size=per_device_batch_size, grad_accum=grad_accum, dp_size=dp_size,
        max_tokens=max_tokens, pad_to_multiple_of=pad_to_multiple_of, strategies=strategies,
        steps=steps, device=device, seed=seed, memory_budget=memory_budget, progress=progress,
        command=command, sampler_options=sampler_options)
    # every check that needs no group is done: bad input fails with no group to tear down
    return _distributed.run_in_group(config.device, lambda group: _trial(group, config), out)


def _trial(group, config):
    """trial's body in its group: the results dict, the same on every rank."""
    import numpy as np
    import torch

    config, notes, skipped = _without_upstream(config, group)
    strategies = list(config.strategies)
    module, model_name = _measure.resolve_model(config.model, config.device)
    # brs plans with the cost model the user would train with: fitted here unless given
    cost_model, cost_source, cost_notes = _cost.resolve(config, module, group, torch)
    notes += cost_notes
    planner = _plans.Planner(config.lengths, per_device_batch_size=config.per_device_batch_size,
                             grad_accum=config.grad_accum, dp_size=config.dp_size,
                             seed=config.seed, pad_to_multiple_of=config.pad_to_multiple_of,
                             max_tokens=config.max_tokens,
                             sampler_options={**config.sampler_options,
                                              "cost_model": cost_model})
    sync, epochs = _epochs(planner, strategies)
    runner = _measure.Runner(module, _measure.Rows(config.lengths, config.dataset,
                                                   _vocabulary(module), config.seed),
                             config.collate_fn, config.forward, config.device, torch)
    allocator = None
    if config.device.type == "cpu":
        from ..calibration.memory import keep_freed_memory

        allocator = keep_freed_memory()
    smallest = min((mb for step in epochs["brs"] for rank in step for mb in rank),
                   key=lambda mb: len(mb.indices) * mb.padded_length)
    runner.settle(smallest)
    # the largest batch per strategy, before any timing: a budget too small is bad input
    largest = _rounds.largest_batches(planner, config, runner, group)

    # the steps timed: drawn uniformly over the epoch, the same for every strategy
    rng = np.random.default_rng(config.seed)
    chosen = _chosen_steps(rng, epochs, config, notes)

    load = [_record.load_average()]
    threads = torch.get_num_threads()
    if config.device.type == "cpu":
        torch.set_num_threads(1)
    runner.start_clock()
    clock = _clocks.BarrierClock(group, sync, runner) \
        if isinstance(group, _distributed.Group) else _clocks.SimulatedClock()
    show = _progress.Progress("brs trial", config.progress and group.rank == 0)
    session = _rounds.Session(runner, epochs, strategies, chosen, rng, show, clock)
    try:
        first = _rounds.warm(session)
        records, peaks, optimizer_seconds, step_seconds = _rounds.rounds(session)
        if config.device.type == "cpu":
            peaks = _rounds.cpu_peaks(runner, records, strategies)
    finally:
        torch.set_num_threads(threads)
        show.close()
    load.append(_record.load_average())
    records, first, peaks, optimizer_seconds = _rounds.gathered(group, records, first, peaks,
                                                                optimizer_seconds)
    measured = _results.Measured(records, first, peaks, optimizer_seconds,
                                 clock.reduce(step_seconds), largest)

    results = None
    if group.rank == 0:  # the statistics once; the header (device, load) is rank 0's
        results = _results.results(measured, epochs, strategies, chosen, sync, config.seed)
        results.update(_results.header(config, model_name, runner, allocator, threads, group,
                                       clock))
        results.update(load_average=load, cpus=_record.cpu_count(), notes=notes, skipped=skipped,
                       command=config.command,
                       cost_model={"source": cost_source, "alpha": cost_model.alpha,
                                   "intercept": cost_model.intercept,
                                   "max_tokens": cost_model.max_tokens})
        results["warnings"] = _results.warnings_of(results)
        # where each strategy's step goes, modelled with the cost model brs planned with
        for name, split in _time_split.shares(planner, epochs, chosen).items():
            results["strategies"][name]["time_split"] = split
    return group.broadcast(results)


def _chosen_steps(rng, epochs, config, notes):
    """The steps timed, drawn without replacement over the epoch (the same for every
    strategy); a note where the epoch holds fewer than asked."""
    per_epoch = min(len(epochs[name]) for name in config.strategies)
    if per_epoch < 1:
        raise ValueError(f"the epoch has no step: {len(config.lengths)} samples hold no global "
                         f"batch of {config.global_batch}")
    chosen = [int(t) for t in rng.choice(per_epoch, size=min(config.steps, per_epoch),
                                         replace=False)]
    if len(chosen) < config.steps:
        notes.append(f"the epoch has {per_epoch} steps: {len(chosen)} timed, not {config.steps}")
    return chosen


def _without_upstream(config, group):
    """(config, notes, skipped): drops upstream from the strategies where the installed
    transformers lacks it, with a note (on stderr from rank 0)."""
    if "upstream" not in config.strategies:
        return config, [], []
    cls, why = _plans.upstream_class()
    if cls is not None:
        return config, [], []
    if group.rank == 0:
        print(f"brs trial: note: upstream skipped: {why}", file=sys.stderr)
    return config.without("upstream"), [f"upstream skipped: {why}"], ["upstream"]


def _epochs(planner, strategies):
    """(brs's sync model, each strategy's epoch plan); a plan the library refuses is bad
    input."""
    try:
        return planner.sampler("brs").sync, {name: planner.epoch(name) for name in strategies}
    except Exception as exc:  # noqa: BLE001 - the library's message, as bad input
        from .._errors import BrsError

        if not isinstance(exc, (ValueError, TypeError, BrsError)):
            raise
        raise ValueError(f"cannot plan the epoch: {exc}") from None


def _vocabulary(module):
    from ..calibration.arguments import vocabulary

    return vocabulary(module)

