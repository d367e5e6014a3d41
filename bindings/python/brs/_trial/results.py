"""The trial's results dict (docs/trial.md's schema) from what it measured: step times by the
sync model in force, the paired and unpaired comparisons, the prediction error of a cost
model fitted to the micro-batches, the verdict and the header (device, clock, job)."""

import math
from typing import Any, NamedTuple

from . import plans as _plans, stats as _stats


class Measured(NamedTuple):
    """Every rank's measurements (rounds.gathered): the micro-batch records, each shape's
    first-run seconds, each strategy's peak bytes and optimizer-step seconds per round, the
    step seconds by the clock (None where it is the sync model's arithmetic) and the largest
    batches."""

    records: list
    first: dict
    peaks: dict
    optimizer_seconds: dict
    step_seconds: Any
    largest: dict


def step_times(records, optimizer_seconds, name, chosen, ranks, micro_steps,
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


def results(m, epochs, strategies, chosen, sync, seed):
    """The results dict of the measurements ``m``. ``m.step_seconds``: each strategy's step
    seconds by the clock (one process per rank), which replace the sync model's arithmetic for
    the sync in force; the other sync model stays the arithmetic over the ranks' measured
    micro-batches."""
    records, first, peaks, optimizer_seconds, measured, largest = m
    ranks, micro_steps = len(epochs["brs"][0]), len(epochs["brs"][0][0])
    by_name = {}
    for name in strategies:
        times = step_times(records, optimizer_seconds, name, chosen, ranks, micro_steps)
        by_sync = {"micro_step": [x[0] for x in times], "step": [x[1] for x in times]}
        if measured is not None:
            by_sync[sync] = measured[name]
        in_force = by_sync[sync]
        thread = None
        if records and records[0].get("thread_seconds") is not None:
            thread = [x[0] if sync == "micro_step" else x[1] for x in step_times(
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
    clock = verdict_clock(by_name["brs"], measured)
    key = CLOCK_KEYS[clock]
    paired, other_sync, wall = {}, {}, {}
    if "upstream" in by_name:
        paired["brs/upstream"] = _stats.paired(by_name["brs"][key], by_name["upstream"][key])
        # the wall clock's and the other sync model's views of the same runs
        wall["brs/upstream"] = _stats.paired(by_name["brs"]["step_seconds"],
                                             by_name["upstream"]["step_seconds"])
        other_sync["brs/upstream"] = _stats.paired(
            by_name["brs"][f"step_seconds_{_other(sync)}"],
            by_name["upstream"][f"step_seconds_{_other(sync)}"])
    unpaired = {}
    for name in strategies:
        if name not in ("brs", "upstream"):
            unpaired[f"brs/{name}"] = _stats.bootstrap_ratio(
                by_name["brs"][key], by_name[name][key], seed)
    error = _stats.prediction_error([r for r in records], seed)
    return {"strategies": by_name, "paired": paired, "unpaired": unpaired,
            f"paired_{_other(sync)}_sync": other_sync, "paired_wall_clock": wall,
            "verdict_clock": clock, "verdict_clock_why": CLOCK_WHY[clock],
            "prediction_error": error, "verdict": verdict(paired, unpaired, clock),
            "sync": sync, "timed_steps": chosen, "steps_per_epoch": len(epochs["brs"]),
            "micro_batches": [{k: v for k, v in r.items() if not k.startswith("_")}
                              for r in records],
            "first_run_seconds": {f"{s[0]}x{s[1]}": v for s, v in sorted(first.items())}}


#: The step seconds each verdict clock reads.
CLOCK_KEYS = {"thread_time": "step_thread_seconds", "step_clock": "step_seconds"}
CLOCK_WHY = {
    "thread_time": "the thread's CPU time (time.thread_time) of one process running torch on one "
                   "thread: another process preempting this one cannot inflate it, so on a shared "
                   "CPU repeated runs agree where the wall clock moves with the load (the wall "
                   "clock's comparison is reported beside it)",
    "step_clock": "the step clock (CUDA events on a GPU, the wall clock between barriers under "
                  "torchrun): what a synchronised job waits for, which a CPU clock of one thread "
                  "cannot see"}


def verdict_clock(brs, measured):
    """The clock the verdict reads: the thread's CPU time where one process timed every
    micro-batch on CPU (recorded per micro-batch), else the step clock."""
    return "thread_time" if brs["step_thread_seconds"] and measured is None else "step_clock"


#: Load average per CPU above which the output warns that other processes shared the machine.
LOADED_PER_CPU = 1.0
#: The 95% interval of the paired ratio is too wide for the run when high / low exceeds this
#: (about +-5% around the ratio): a difference of a few percent cannot be told from none.
WIDE_INTERVAL = 1.10
#: Below this many timed steps the sign test cannot reach p < 0.05 with fewer than 6 wins
#: of 6 (2 * 0.5^6 = 0.031), and the t interval rests on very few pairs.
FEW_STEPS = 8


def warnings_of(results):
    """The warnings the output and report.md print: a loaded machine, too few steps for the
    interval, a clock that the load disturbs."""
    found = []
    loads = [x for x in results.get("load_average", []) if x is not None]
    cpus = results.get("cpus") or 1
    if loads and max(loads) > LOADED_PER_CPU * cpus:
        clock = ("the verdict reads the thread's CPU time, which the load does not inflate, "
                 "but the wall-clock rows move with it" if results["verdict_clock"] ==
                 "thread_time" else "the verdict's clock moves with the load")
        found.append(f"the machine was loaded (load average up to {max(loads):.1f} on {cpus} "
                     f"CPUs): other processes shared it; {clock}")
    p = results["paired"].get("brs/upstream")
    steps = len(results["timed_steps"])
    if steps < FEW_STEPS:
        found.append(f"{steps} timed steps are few: raise --steps to {FEW_STEPS} or more")
    if p is not None and not math.isnan(p["ci95"][0]) and p["ci95"][1] / p["ci95"][0] > \
            WIDE_INTERVAL:
        found.append(f"the 95% interval {p['ci95'][0]:.3f}-{p['ci95'][1]:.3f} is wider than "
                     f"+-5% after {steps} steps: more --steps narrow it (about as the square "
                     "root of their number)")
    return found


def _other(sync):
    return "step" if sync == "micro_step" else "micro_step"


def _padded_per_step(epoch, chosen):
    return [sum(len(mb.indices) * mb.padded_length for rank in epoch[t] for mb in rank)
            for t in chosen]


def verdict(paired, unpaired, clock="step_clock"):
    """The one sentence: brs against upstream (paired) where it ran, else against random, by
    ``clock`` (a key of CLOCK_KEYS)."""
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
    by = "by the thread's CPU time" if clock == "thread_time" else "by the step clock"
    numbers = f"brs's step time {by} is {ratio:.3f}x {what} ({interval}; {detail})"
    if math.isnan(low) or low <= 1 <= high:
        return f"brs and {what[:-2]} are indistinguishable on this setup: {numbers}."
    if high < 1:
        return f"brs pays on this setup: {numbers}, {1 - ratio:.0%} less time per step."
    return f"brs does not pay on this setup: {numbers}, {ratio - 1:.0%} more time per step."


def header(config, model_name, runner, allocator, threads, group, clock):
    """The results' description of the run: device, model, job, clocks and processes."""
    device, torch = config.device, runner.torch
    if device.type == "cuda":
        name = f"{device} ({torch.cuda.get_device_name(device)})"
    else:
        import platform

        name = f"cpu ({platform.processor() or platform.machine()}, 1 thread while timing)"
    return {"device": name, "torch": torch.__version__, "model": model_name,
            "per_device_batch_size": config.per_device_batch_size,
            "grad_accum": config.grad_accum, "dp_size": config.dp_size,
            "pad_to_multiple_of": config.pad_to_multiple_of, "max_tokens": config.max_tokens,
            "memory_budget": config.budget, "seed": config.seed,
            "sampler_options": {k: (v if isinstance(v, (int, float, str, bool, type(None)))
                                    else repr(v)) for k, v in config.sampler_options.items()},
            "clock": "cuda events" if device.type == "cuda" else "time.perf_counter, 1 thread",
            "memory_method": runner.memory_method(), "allocator": allocator,
            "torch_threads": threads, "processes": group.describe(),
            "step_clock": clock.describe}
