"""brs.trial itself: its steps in order (docs/trial.md)."""

import math
import os
import sys
import time

from . import distributed as _distributed, largest as _largest, measure as _measure, \
    plans as _plans, stats as _stats

DEFAULT_STEPS = 12
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

    Raises ValueError (TypeError for a wrong type) on bad input before anything is timed.
    """
    options = _check(per_device_batch_size, grad_accum, dp_size, steps, strategies,
                     sampler_options)
    lengths, dataset = _lengths(lengths_or_dataset)
    device = _distributed.local_device(_device(device))
    budget = None if memory_budget is None else _parse_budget(memory_budget)
    # every check that needs no group is done: bad input fails with no group to tear down
    group = _distributed.join(device)
    failed = True
    try:
        results = _trial(group, model, lengths, dataset, collate_fn, forward, options,
                         pad_to_multiple_of, max_tokens, list(dict.fromkeys(strategies)), steps,
                         device, seed, budget, progress, command, sampler_options)
        failed = False
    finally:
        group.close(failed)
    # after the group is gone: a file rank 0 cannot write leaves no rank waiting for it
    if out is not None and group.rank == 0:
        from . import output as _output

        _output.write(results, out)
    return results


def _trial(group, model, lengths, dataset, collate_fn, forward, options, pad_to_multiple_of,
           max_tokens, strategies, steps, device, seed, budget, progress, command,
           sampler_options):
    """trial's body in its group: the results dict, the same on every rank."""
    import numpy as np
    import torch

    notes, skipped = _without_upstream(strategies, group)
    planner = _plans.Planner(lengths, per_device_batch_size=options["P"],
                             grad_accum=options["G"], dp_size=options["D"], seed=seed,
                             pad_to_multiple_of=pad_to_multiple_of, max_tokens=max_tokens,
                             sampler_options=sampler_options)
    sync, epochs = _epochs(planner, strategies)
    module, model_name = _measure.resolve_model(model, device)
    vocab = _vocabulary(module)
    runner = _measure.Runner(module, _measure.Rows(lengths, dataset, vocab, seed), collate_fn,
                             forward, device, torch)
    allocator = None
    if device.type == "cpu":
        from ..calibration.memory import keep_freed_memory

        allocator = keep_freed_memory()
    smallest = min((mb for step in epochs["brs"] for rank in step for mb in rank),
                   key=lambda mb: len(mb.indices) * mb.padded_length)
    runner.settle(smallest)
    # the largest batch per strategy, before any timing: a budget too small is bad input
    largest = _largest_batches(planner, strategies, options, len(lengths), runner, budget,
                               group)

    # the steps timed: drawn uniformly over the epoch, the same for every strategy
    rng = np.random.default_rng(seed)
    per_epoch = min(len(epochs[name]) for name in strategies)
    if per_epoch < 1:
        raise ValueError(f"the epoch has no step: {len(lengths)} samples hold no global batch "
                         f"of {options['P'] * options['G'] * options['D']}")
    chosen = [int(t) for t in rng.choice(per_epoch, size=min(steps, per_epoch), replace=False)]
    if len(chosen) < steps:
        notes.append(f"the epoch has {per_epoch} steps: {len(chosen)} timed, not {steps}")

    load = [_load()]
    threads = torch.get_num_threads()
    if device.type == "cpu":
        torch.set_num_threads(1)
    clock = _BarrierClock(group, sync, runner) if isinstance(group, _distributed.Group) \
        else _SimulatedClock()
    show = _Progress(progress and group.rank == 0)
    try:
        first = _warm(runner, epochs, strategies, chosen, rng, show, clock)
        records, peaks, optimizer_seconds, measured = _rounds(runner, epochs, strategies,
                                                              chosen, rng, show, clock)
        if device.type == "cpu":
            peaks = _cpu_peaks(runner, records, strategies)
    finally:
        torch.set_num_threads(threads)
        show.close()
    load.append(_load())
    records, first, peaks, optimizer_seconds = _gathered(group, records, first, peaks,
                                                         optimizer_seconds)
    measured = clock.reduce(measured)

    results = None
    if group.rank == 0:  # the statistics once; the header (device, load) is rank 0's
        results = _results(records, first, peaks, optimizer_seconds, epochs, strategies,
                           chosen, largest, sync, seed, lengths, measured)
        results.update(_header(device, torch, model_name, options, pad_to_multiple_of,
                               max_tokens, budget, seed, sampler_options, runner, allocator,
                               threads, group, clock))
        results.update(load_average=load, cpus=os.cpu_count(), notes=notes, skipped=skipped,
                       command=command)
    return group.broadcast(results)


def _without_upstream(strategies, group):
    """(notes, skipped): drops upstream from ``strategies`` where the installed transformers
    lacks it, with a note (on stderr from rank 0)."""
    if "upstream" not in strategies:
        return [], []
    cls, why = _plans.upstream_class()
    if cls is not None:
        return [], []
    if group.rank == 0:
        print(f"brs trial: note: upstream skipped: {why}", file=sys.stderr)
    strategies.remove("upstream")
    return [f"upstream skipped: {why}"], ["upstream"]


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


# -- arguments --------------------------------------------------------------------------------

def _positive(name, value):
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an int >= 1; got {value!r}")
    return int(value)


def _check(size, grad_accum, dp_size, steps, strategies, sampler_options):
    options = {"P": _positive("per_device_batch_size", size),
               "G": _positive("grad_accum", grad_accum),
               "D": _dp_size(dp_size, _distributed.processes())}
    _positive("steps", steps)
    unknown = [s for s in strategies if s not in _plans.STRATEGIES]
    if unknown or "brs" not in strategies:
        raise ValueError(f"strategies must hold 'brs' and only names of {_plans.STRATEGIES}; "
                         f"got {tuple(strategies)}")
    for name in ("rank", "strategy", "per_device_batch_size", "grad_accum", "dp_size",
                 "packed"):
        if sampler_options.get(name):
            raise ValueError(f"trial sets {name} itself (packed micro-batches are not "
                             "simulated); leave it out of the sampler options")
    return options


def _dp_size(value, processes):
    """dp_size of the job. One process (``processes`` None) simulates any dp_size, 1 by
    default. Under torchrun each process runs one rank's micro-batches, so dp_size is the
    world size: the default there, and any other value is refused rather than adjusted (a
    plan for another dp_size would leave ranks unrun or run nowhere)."""
    if value is None:
        return 1 if processes is None else processes
    value = _positive("dp_size", value)
    if processes is not None and value != processes:
        raise ValueError(f"dp_size {value} disagrees with the world size {processes}: under "
                         f"torchrun each of the {processes} processes runs one dp rank's "
                         f"micro-batches, so dp_size must be {processes} (or left out)")
    return value


def _lengths(value):
    """(lengths as an int64 array, the dataset or None). A lengths file is read by the library,
    so a bad line gets its message."""
    import numpy as np

    if isinstance(value, str) or hasattr(value, "__fspath__"):
        from .._lengths import read_file

        return np.asarray(read_file(value), dtype=np.int64), None
    from ..calibration.arguments import is_dataset, resolve_lengths

    try:
        data = resolve_lengths(value)
    except (ValueError, TypeError) as exc:
        raise type(exc)(str(exc).replace("calibrate: ", "")) from None
    return data, (value if is_dataset(value) else None)


def _device(device):
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device {device!r} is not a torch device: {exc}") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda: this torch has no CUDA device")
    return device


def _parse_budget(value):
    from ..calibration.memory import parse_bytes

    return parse_bytes(value)


def _vocabulary(module):
    from ..calibration.arguments import vocabulary

    return vocabulary(module)


def _load():
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


# -- timing -------------------------------------------------------------------------------------

class _Progress:
    """A tqdm bar where tqdm is installed, else a line per stage on stderr."""

    def __init__(self, enabled):
        self.enabled, self.bar, self.total = enabled, None, 0

    def start(self, total, what):
        if not self.enabled:
            return
        self.close()
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        self.total, self.done = total, 0
        if tqdm is not None:
            self.bar = tqdm(total=total, desc=f"brs trial: {what}", unit="run")
        else:
            self.what = what
            print(f"brs trial: {what}: {total} runs", file=sys.stderr, flush=True)

    def update(self, text):
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(text)
            self.bar.update(1)
        else:
            self.done += 1
            print(f"brs trial: {self.what} {self.done}/{self.total} {text}", file=sys.stderr,
                  flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class _SimulatedClock:
    """One process runs every rank's micro-batches in turn; a step's time is the sync model's
    arithmetic over them (_step_times), so this clock times no step itself."""

    describe = ("the sync model's arithmetic over the measured micro-batches (micro_step: the "
                "sum over micro-steps of the slowest rank; step: the slowest rank's sum)")

    @staticmethod
    def mine(step_plan):
        """The (rank, micro, micro-batch) this process runs: every rank's."""
        return _plans.flatten(step_plan)

    def start(self):
        pass

    def micro_step_done(self):
        pass

    def stop(self):
        return None

    @staticmethod
    def reduce(measured):
        return None  # nothing measured: _results computes the step times


class _BarrierClock:
    """One process per rank runs its own rank's micro-batches; a step's time is the wall clock
    from a barrier before its first micro-step to a barrier after the optimizer step, its
    maximum over the ranks. micro_step sync adds a barrier after every micro-step, where DDP or
    FSDP would all-reduce gradients and every rank waits for the slowest; step sync (DDP under
    no_sync) waits only at the end. No gradient is all-reduced: that cost is the same for every
    strategy, and the model is not wrapped in DDP."""

    describe = "wall clock between barriers, max over ranks"

    def __init__(self, group, sync, runner):
        self.group, self.sync, self.runner = group, sync, runner
        self.began = None

    def mine(self, step_plan):
        return [item for item in _plans.flatten(step_plan) if item[0] == self.group.rank]

    def start(self):
        self._drain()
        self.group.barrier()
        self.began = time.perf_counter()

    def micro_step_done(self):
        if self.sync == "micro_step":
            self.group.barrier()

    def stop(self):
        self._drain()
        self.group.barrier()
        return time.perf_counter() - self.began

    def _drain(self):
        # queued CUDA kernels belong to the step they were launched in, not to the clock's
        # next reading
        if self.runner.cuda:
            self.runner.torch.cuda.synchronize(self.runner.device)

    def reduce(self, measured):
        """Each strategy's step times, the maximum over ranks: one all_reduce per strategy
        after the timing, so no collective but the barriers runs inside a step."""
        return {name: self.group.max(values) for name, values in measured.items()}


def _warm(runner, epochs, strategies, chosen, rng, show, clock):
    """Each distinct shape of this process's micro-batches of the timed steps run once, in a
    random order: its first-run seconds (shape -> seconds). The order is drawn over every
    rank's shapes, so the generator advances alike on every rank (the rounds' strategy order
    that follows is drawn from it and must agree)."""
    every = sorted({mb.shape for name in strategies for t in chosen
                    for rank in epochs[name][t] for mb in rank})
    first_mb = {}
    for name in strategies:
        for t in chosen:
            for _, _, mb in clock.mine(epochs[name][t]):
                first_mb.setdefault(mb.shape, mb)
    order = [every[i] for i in rng.permutation(len(every)) if every[i] in first_mb]
    show.start(len(order), "warming each shape once")
    first = {}
    for shape in order:
        batch = runner.batch(first_mb[shape])
        first[runner.shape_of(batch, first_mb[shape])] = runner.timed(runner.micro_step, batch)
        runner.zero_grad()
        show.update(f"{shape[0]}x{shape[1]}")
    return first


def _rounds(runner, epochs, strategies, chosen, rng, show, clock):
    """Round i runs step chosen[i] of every strategy, in a fresh random order. Returns this
    process's micro-batch records, the CUDA reserved peak of each strategy (None on CPU), each
    strategy's optimizer-step seconds per round and the clock's step seconds per round."""
    torch = runner.torch
    records, optimizer_seconds = [], {name: [] for name in strategies}
    optimizer_thread = {name: [] for name in strategies}
    measured = {name: [] for name in strategies}
    peaks = {name: 0 if runner.cuda else None for name in strategies}
    show.start(len(chosen) * len(strategies), "timing")
    for i, t in enumerate(chosen):
        for block, k in enumerate(rng.permutation(len(strategies)), i * len(strategies)):
            name = strategies[k]
            items = clock.mine(epochs[name][t])
            batches = [runner.batch(mb) for _, _, mb in items]  # collation is not timed
            if runner.cuda:
                torch.cuda.synchronize(runner.device)
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats(runner.device)
            clock.start()
            for (r, m, mb), batch in zip(items, batches):
                seconds = runner.timed(runner.micro_step, batch)
                size, length = runner.shape_of(batch, mb)
                records.append({"strategy": name, "round": i, "step": t, "rank": r, "micro": m,
                                "batch_size": size, "padded_length": length,
                                "real_tokens": int(sum(runner.rows.lengths[j]
                                                       for j in mb.indices)),
                                "seconds": seconds, "thread_seconds": runner.thread_seconds,
                                "_mb": mb, "_block": block})
                clock.micro_step_done()
            optimizer_seconds[name].append(runner.timed(runner.optimizer_step))
            optimizer_thread[name].append(runner.thread_seconds)
            measured[name].append(clock.stop())
            runner.zero_grad()
            if runner.cuda:
                peaks[name] = max(peaks[name],
                                  int(torch.cuda.max_memory_reserved(runner.device)))
            del batches
            show.update(f"step {t} {name}")
    optimizer_seconds["_thread"] = optimizer_thread
    return records, peaks, optimizer_seconds, measured


def _cpu_peaks(runner, records, strategies):
    """CPU: each strategy's peak over its timed shapes that no other of them dominates, by the
    profiler (untimed runs, one per shape)."""
    cache, peaks = {}, {}
    for name in strategies:
        mine = {}
        for r in records:
            if r["strategy"] == name:
                mine.setdefault((r["batch_size"], r["padded_length"]), r)
        values = []
        for shape in _measure.pareto_largest(mine):
            if shape not in cache:
                r = mine[shape]
                cache[shape] = runner.peak_bytes(r["_mb"])
            values.append(cache[shape])
        peaks[name] = None if not values or None in values else max(values)
    return peaks


def _largest_batches(planner, strategies, options, samples, runner, budget, group):
    """Each strategy's largest per-device batch (largest.py), where there is a budget or a GPU.
    Under torchrun every rank searches on its own device at once (each GPU has its own memory,
    and a job fits only where every rank fits): the smallest result is kept, with the probes
    of the rank that found it. A batch that fits at 1 on no rank is bad input: ValueError on
    every rank alike, after the gather, so no rank is left waiting."""
    found = {name: {"largest_batch": None, "largest_batch_probes": []} for name in strategies}
    failure = None
    if budget is not None or runner.cuda:
        limit = samples // (options["G"] * options["D"])
        for name in strategies:
            try:
                size, probes = _largest.search(planner, name, options["P"], limit, runner,
                                               budget)
            except _largest.DoesNotFit as exc:
                failure = str(exc)
                break
            found[name] = {"largest_batch": size, "largest_batch_probes": probes,
                           "largest_batch_limit": limit}
    parts = group.gather((failure, found))
    for rank, (failure, _) in enumerate(parts):
        if failure is not None:
            raise ValueError(failure if len(parts) == 1 else f"rank {rank}: {failure}")
    return {name: min((part[name] for _, part in parts),
                      key=lambda f: math.inf if f["largest_batch"] is None
                      else f["largest_batch"]) for name in strategies}


def _gathered(group, records, first, peaks, optimizer_seconds):
    """Every rank's measurements on every rank: the records of all ranks in the order one
    process runs them (a round's strategy blocks, each rank by rank); a shape's first run, a
    strategy's peak and its optimizer step at their worst rank (a synchronised job waits for
    the slowest rank and must fit on the fullest). In one process, what it measured."""
    parts = group.gather((records, first, peaks, optimizer_seconds))
    records = sorted((r for part in parts for r in part[0]),
                     key=lambda r: (r["_block"], r["rank"], r["micro"]))
    first = {shape: _worst([part[1][shape] for part in parts if shape in part[1]])
             for shape in {s for part in parts for s in part[1]}}
    peaks = {name: _worst([part[2][name] for part in parts]) for name in peaks}
    optimizer = {name: [_worst(values) for values in zip(*(part[3][name] for part in parts))]
                 for name in optimizer_seconds if name != "_thread"}
    optimizer["_thread"] = {name: [_worst(values) for values in
                                   zip(*(part[3]["_thread"][name] for part in parts))]
                            for name in optimizer_seconds["_thread"]}
    return records, first, peaks, optimizer


def _worst(values):
    """The largest value, or None where any rank measured none."""
    return None if any(v is None for v in values) else max(values)


# -- results -------------------------------------------------------------------------------------

def _step_times(records, optimizer_seconds, name, chosen, ranks, micro_steps,
                key="seconds"):
    """Per timed step: (micro_step-sync seconds, step-sync seconds, real tokens)."""
    rows = []
    for i, t in enumerate(chosen):
        grid = [[0.0] * micro_steps for _ in range(ranks)]
        tokens = 0
        for r in records:
            if r["strategy"] == name and r["round"] == i:
                grid[r["rank"]][r["micro"]] = r[key]
                tokens += r["real_tokens"]
        opt = optimizer_seconds[name][i]
        micro = sum(max(grid[q][m] for q in range(ranks)) for m in range(micro_steps)) + opt
        step = max(sum(row) for row in grid) + opt
        rows.append((micro, step, tokens))
    return rows


def _median(values):
    values = sorted(values)
    n = len(values)
    if n == 0:
        return None
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _first_shape_seconds(records, first, name):
    warm = {}
    for r in records:
        warm.setdefault((r["batch_size"], r["padded_length"]), []).append(r["seconds"])
    mine = {(r["batch_size"], r["padded_length"]) for r in records if r["strategy"] == name}
    extra = [first[s] - _median(warm[s]) for s in mine if s in first]
    return max(0.0, _median(extra) or 0.0)


def _results(records, first, peaks, optimizer_seconds, epochs, strategies, chosen, largest,
             sync, seed, lengths, measured=None):
    """The results dict. ``measured``: each strategy's step seconds by the clock (one process
    per rank), which replace the sync model's arithmetic for the sync in force; the other sync
    model stays the arithmetic over the ranks' measured micro-batches."""
    ranks, micro_steps = len(epochs["brs"][0]), len(epochs["brs"][0][0])
    by_name = {}
    for name in strategies:
        times = _step_times(records, optimizer_seconds, name, chosen, ranks, micro_steps)
        by_sync = {"micro_step": [x[0] for x in times], "step": [x[1] for x in times]}
        if measured is not None:
            by_sync[sync] = measured[name]
        in_force = by_sync[sync]
        thread = None
        if records and records[0].get("thread_seconds") is not None:
            thread = [x[0] if sync == "micro_step" else x[1] for x in _step_times(
                records, optimizer_seconds["_thread"], name, chosen, ranks, micro_steps,
                "thread_seconds")]
        epoch_shapes = _plans.shapes(epochs[name])
        first_cost = _first_shape_seconds(records, first, name)
        total_seconds = sum(in_force)
        by_name[name] = {
            "step_seconds": in_force,
            "step_seconds_micro_step": by_sync["micro_step"],
            "step_seconds_step": by_sync["step"],
            "median_step_seconds": _median(in_force),
            "real_tokens_per_second": sum(x[2] for x in times) / total_seconds
            if total_seconds > 0 else 0.0,
            "peak_reserved_bytes": peaks.get(name),
            "distinct_shapes": len(epoch_shapes),
            "first_shape_seconds": first_cost,
            "first_shape_epoch_seconds": first_cost * len(epoch_shapes),
            "optimizer_step_seconds": optimizer_seconds[name],
            # CPU: the same steps by the thread's CPU time (immune to preemption by others)
            "step_thread_seconds": thread,
            "padded_tokens_per_step": _padded_per_step(epochs[name], chosen),
            **largest[name],
        }
    paired, other_sync = {}, {}
    if "upstream" in by_name:
        p = _stats.paired(by_name["brs"]["step_seconds"], by_name["upstream"]["step_seconds"])
        paired["brs/upstream"] = p
        # the other sync model's view of the same runs
        other_sync["brs/upstream"] = _stats.paired(
            by_name["brs"][f"step_seconds_{_other(sync)}"],
            by_name["upstream"][f"step_seconds_{_other(sync)}"])
    thread_time = {}
    if "upstream" in by_name and by_name["brs"]["step_thread_seconds"]:
        thread_time["brs/upstream"] = _stats.paired(
            by_name["brs"]["step_thread_seconds"], by_name["upstream"]["step_thread_seconds"])
    unpaired = {}
    for name in strategies:
        if name not in ("brs", "upstream"):
            unpaired[f"brs/{name}"] = _stats.bootstrap_ratio(
                by_name["brs"]["step_seconds"], by_name[name]["step_seconds"], seed)
    error = _stats.prediction_error([r for r in records], seed)
    return {"strategies": by_name, "paired": paired, "unpaired": unpaired,
            f"paired_{_other(sync)}_sync": other_sync, "paired_thread_time": thread_time,
            "prediction_error": error, "verdict": verdict(paired, unpaired),
            "sync": sync, "timed_steps": chosen, "steps_per_epoch": len(epochs["brs"]),
            "micro_batches": [{k: v for k, v in r.items() if not k.startswith("_")}
                              for r in records],
            "first_run_seconds": {f"{s[0]}x{s[1]}": v for s, v in sorted(first.items())}}


def _other(sync):
    return "step" if sync == "micro_step" else "micro_step"


def _padded_per_step(epoch, chosen):
    return [sum(len(mb.indices) * mb.padded_length for rank in epoch[t] for mb in rank)
            for t in chosen]


def verdict(paired, unpaired):
    """The one sentence: brs against upstream (paired) where it ran, else against random."""
    if "brs/upstream" in paired:
        p = paired["brs/upstream"]
        what, detail = "upstream's", (f"sign test p = {p['sign_test_p']:.3g}, brs faster on "
                                      f"{p['faster_steps']} of {p['steps']} steps")
    elif unpaired:
        key = "brs/random" if "brs/random" in unpaired else sorted(unpaired)[0]
        p = unpaired[key]
        what, detail = f"{key.split('/')[1]}'s", "unpaired, bootstrap"
    else:
        return "brs ran alone: nothing to compare it with."
    ratio, (low, high) = p["ratio"], p["ci95"]
    interval = f"95% CI {low:.3f}-{high:.3f}" if not math.isnan(low) else "no interval"
    numbers = f"brs's step time is {ratio:.3f}x {what} ({interval}; {detail})"
    if math.isnan(low) or low <= 1 <= high:
        return f"brs and {what[:-2]} are indistinguishable on this setup: {numbers}."
    if high < 1:
        return f"brs pays on this setup: {numbers}, {1 - ratio:.0%} less time per step."
    return f"brs does not pay on this setup: {numbers}, {ratio - 1:.0%} more time per step."


def _header(device, torch, model_name, options, pad, max_tokens, budget, seed, sampler_options,
            runner, allocator, threads, group, clock):
    if device.type == "cuda":
        name = f"{device} ({torch.cuda.get_device_name(device)})"
    else:
        import platform

        name = f"cpu ({platform.processor() or platform.machine()}, 1 thread while timing)"
    return {"device": name, "torch": torch.__version__, "model": model_name,
            "per_device_batch_size": options["P"], "grad_accum": options["G"],
            "dp_size": options["D"], "pad_to_multiple_of": pad, "max_tokens": max_tokens,
            "memory_budget": budget, "seed": seed,
            "sampler_options": {k: (v if isinstance(v, (int, float, str, bool, type(None)))
                                    else repr(v)) for k, v in sampler_options.items()},
            "clock": "cuda events" if device.type == "cuda" else "time.perf_counter, 1 thread",
            "memory_method": runner.memory_method(), "allocator": allocator,
            "torch_threads": threads, "processes": group.describe(),
            "step_clock": clock.describe}
