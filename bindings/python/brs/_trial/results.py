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
