"""The trial's measurements, in the order it takes them: the largest batch per strategy under
the budget, each shape's first run, the interleaved rounds of timed steps, the CPU peaks, and
every rank's records gathered."""

import math
from typing import Any, NamedTuple

from . import largest as _largest, measure as _measure


class Session(NamedTuple):
    """What the timing reads: the runner, each strategy's epoch, the strategies, the steps
    timed, the generator of the orders, the progress and the step clock."""

    runner: Any
    epochs: dict
    strategies: list
    chosen: list
    rng: Any
    show: Any
    clock: Any


def warm(session):
    """Each distinct shape of this process's micro-batches of the timed steps run once, in a
    random order: its first-run seconds (shape -> seconds). The order is drawn over every
    rank's shapes, so the generator advances alike on every rank (the rounds' strategy order
    that follows is drawn from it and must agree)."""
    runner, epochs, strategies, chosen, rng, show, clock = session
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


def rounds(session):
    """Round i runs step chosen[i] of every strategy, in a fresh random order. Returns this
    process's micro-batch records, the CUDA reserved peak of each strategy (None on CPU), each
    strategy's optimizer-step seconds per round and the clock's step seconds per round."""
    runner, epochs, strategies, chosen, rng, show, clock = session
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


def cpu_peaks(runner, records, strategies):
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


def largest_batches(planner, config, runner, group):
    """Each strategy's largest per-device batch (largest.py), where there is a budget or a GPU.
    Under torchrun every rank searches on its own device at once (each GPU has its own memory,
    and a job fits only where every rank fits): the smallest result is kept, with the probes
    of the rank that found it. A batch that fits at 1 on no rank is bad input: ValueError on
    every rank alike, after the gather, so no rank is left waiting."""
    strategies, budget = config.strategies, config.budget
    found = {name: {"largest_batch": None, "largest_batch_probes": []} for name in strategies}
    failure = None
    if budget is not None or runner.cuda:
        limit = len(config.lengths) // (config.grad_accum * config.dp_size)
        for name in strategies:
            try:
                size, probes = _largest.search(planner, name, config.per_device_batch_size,
                                               limit, runner, budget)
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


def gathered(group, records, first, peaks, optimizer_seconds):
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
