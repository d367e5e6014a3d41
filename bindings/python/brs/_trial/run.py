"""brs.trial itself: its steps in order (docs/trial.md)."""

import math
import os
import sys

from . import largest as _largest, measure as _measure, plans as _plans, stats as _stats

DEFAULT_STEPS = 12
SYNCS = ("micro_step", "step")


def trial(model, lengths_or_dataset, *, collate_fn=None, forward=None, per_device_batch_size,
          grad_accum=1, dp_size=1, max_tokens=None, pad_to_multiple_of=None,
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
    (default model(**batch).loss). per_device_batch_size, grad_accum, dp_size: the job
    (dp_size ranks are simulated by one process, each rank's micro-batches run in turn).
    max_tokens and sampler_options go to brs's sampler only; pad_to_multiple_of is every
    strategy's collator rule. strategies: a subset of ("brs", "upstream", "group_by_length",
    "random") holding "brs". steps: timed optimizer steps, drawn at random over the epoch
    (seeded by ``seed``). memory_budget: bytes or "8GiB": the largest-batch search's limit
    (CPU: no search without it). progress: a tqdm bar where installed, else lines on stderr.
    command: the command line to write at the top of report.md.

    Raises ValueError (TypeError for a wrong type) on bad input before anything is timed.
    """
    import numpy as np
    import torch

    options = _check(per_device_batch_size, grad_accum, dp_size, steps, strategies,
                     sampler_options)
    lengths, dataset = _lengths(lengths_or_dataset)
    device = _device(device)
    budget = None if memory_budget is None else _parse_budget(memory_budget)
    notes = []
    strategies = list(dict.fromkeys(strategies))
    if "upstream" in strategies:
        cls, why = _plans.upstream_class()
        if cls is None:
            print(f"brs trial: note: upstream skipped: {why}", file=sys.stderr)
            notes.append(f"upstream skipped: {why}")
            strategies.remove("upstream")
    skipped = [] if len(notes) == 0 else ["upstream"]

    planner = _plans.Planner(lengths, per_device_batch_size=options["P"],
                             grad_accum=options["G"], dp_size=options["D"], seed=seed,
                             pad_to_multiple_of=pad_to_multiple_of, max_tokens=max_tokens,
                             sampler_options=sampler_options)
    try:
        sync = planner.sampler("brs").sync
        epochs = {name: planner.epoch(name) for name in strategies}
    except Exception as exc:  # noqa: BLE001 - the library's message, as bad input
        from .._errors import BrsError

        if not isinstance(exc, (ValueError, TypeError, BrsError)):
            raise
        raise ValueError(f"cannot plan the epoch: {exc}") from None

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
    show = _Progress(progress)

    # the largest batch per strategy, before any timing: a budget too small is bad input
    largest = {name: {"largest_batch": None, "largest_batch_probes": []} for name in strategies}
    if budget is not None or device.type == "cuda":
        limit = len(lengths) // (options["G"] * options["D"])
        for name in strategies:
            try:
                size, probes = _largest.search(planner, name, options["P"], limit, runner,
                                               budget)
            except _largest.DoesNotFit as exc:
                show.close()
                raise ValueError(str(exc)) from None
            largest[name] = {"largest_batch": size, "largest_batch_probes": probes,
                             "largest_batch_limit": limit}

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
    try:
        first = _warm(runner, epochs, strategies, chosen, rng, show)
        records, peaks, optimizer_seconds = _rounds(runner, epochs, strategies, chosen, rng,
                                                    show)
        if device.type == "cpu":
            peaks = _cpu_peaks(runner, records, strategies)
    finally:
        torch.set_num_threads(threads)
        show.close()
    load.append(_load())

    results = _results(records, first, peaks, optimizer_seconds, epochs, strategies, chosen,
                       largest, sync, seed, lengths)
    results.update(_header(device, torch, model_name, options, pad_to_multiple_of, max_tokens,
                           budget, seed, sampler_options, runner, allocator, threads))
    results["load_average"] = load
    results["cpus"] = os.cpu_count()
    results["notes"] = notes
    results["skipped"] = skipped
    results["command"] = command
    if out is not None:
        from . import output as _output

        _output.write(results, out)
    return results


# -- arguments --------------------------------------------------------------------------------

def _positive(name, value):
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an int >= 1; got {value!r}")
    return int(value)


def _check(size, grad_accum, dp_size, steps, strategies, sampler_options):
    options = {"P": _positive("per_device_batch_size", size),
               "G": _positive("grad_accum", grad_accum), "D": _positive("dp_size", dp_size)}
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


def _warm(runner, epochs, strategies, chosen, rng, show):
    """Each distinct shape of the timed steps run once, in a random order: its first-run
    seconds (shape -> seconds)."""
    first_mb = {}
    for name in strategies:
        for t in chosen:
            for rank in epochs[name][t]:
                for mb in rank:
                    first_mb.setdefault(mb.shape, mb)
    shapes = sorted(first_mb)
    order = [shapes[i] for i in rng.permutation(len(shapes))]
    show.start(len(order), "warming each shape once")
    first = {}
    for shape in order:
        batch = runner.batch(first_mb[shape])
        first[runner.shape_of(batch, first_mb[shape])] = runner.timed(runner.micro_step, batch)
        runner.zero_grad()
        show.update(f"{shape[0]}x{shape[1]}")
    return first


def _rounds(runner, epochs, strategies, chosen, rng, show):
    """Round i runs step chosen[i] of every strategy, in a fresh random order. Returns the
    micro-batch records, the CUDA reserved peak of each strategy (None on CPU) and each
    strategy's optimizer-step seconds per round."""
    torch = runner.torch
    records, optimizer_seconds = [], {name: [] for name in strategies}
    optimizer_thread = {name: [] for name in strategies}
    peaks = {name: 0 if runner.cuda else None for name in strategies}
    show.start(len(chosen) * len(strategies), "timing")
    for i, t in enumerate(chosen):
        for k in rng.permutation(len(strategies)):
            name = strategies[k]
            items = _plans.flatten(epochs[name][t])
            batches = [runner.batch(mb) for _, _, mb in items]  # collation is not timed
            if runner.cuda:
                torch.cuda.synchronize(runner.device)
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats(runner.device)
            for (r, m, mb), batch in zip(items, batches):
                seconds = runner.timed(runner.micro_step, batch)
                size, length = runner.shape_of(batch, mb)
                records.append({"strategy": name, "round": i, "step": t, "rank": r, "micro": m,
                                "batch_size": size, "padded_length": length,
                                "real_tokens": int(sum(runner.rows.lengths[j]
                                                       for j in mb.indices)),
                                "seconds": seconds, "thread_seconds": runner.thread_seconds,
                                "_mb": mb})
            optimizer_seconds[name].append(runner.timed(runner.optimizer_step))
            optimizer_thread[name].append(runner.thread_seconds)
            runner.zero_grad()
            if runner.cuda:
                peaks[name] = max(peaks[name],
                                  int(torch.cuda.max_memory_reserved(runner.device)))
            del batches
            show.update(f"step {t} {name}")
    optimizer_seconds["_thread"] = optimizer_thread
    return records, peaks, optimizer_seconds


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
             sync, seed, lengths):
    ranks, micro_steps = len(epochs["brs"][0]), len(epochs["brs"][0][0])
    by_name = {}
    for name in strategies:
        times = _step_times(records, optimizer_seconds, name, chosen, ranks, micro_steps)
        in_force = [x[0] if sync == "micro_step" else x[1] for x in times]
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
            "step_seconds_micro_step": [x[0] for x in times],
            "step_seconds_step": [x[1] for x in times],
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
            runner, allocator, threads):
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
            "torch_threads": threads, "processes": "one process simulates the dp ranks"}
