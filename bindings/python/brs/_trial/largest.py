"""The largest per-device batch size each strategy can run.

At a per-device batch size p a strategy's epoch is planned in full and its worst micro-batch
(the most padded tokens; and, where another shape has more bs*L^2 or a longer padded length,
that one too: attention's scores grow with L^2) is run once, untimed, with gradients and
AdamW's state allocated: p fits when no such micro-step runs out of memory (CUDA) or peaks
above memory_budget; the peak recorded is the highest of them. From
the trial's own P, p is doubled while it fits (up to the largest p with one step in the epoch),
then bisected between the last size that fit and the first that did not. A P that does not fit
is bisected down to 1; a strategy whose worst micro-batch does not fit at 1 is an error.
"""

from . import plans as _plans
from ..calibration.timing import OutOfMemory


class DoesNotFit(ValueError):
    pass


def probe(planner, name, size, runner, budget):
    """One probe of ``name`` at per-device batch ``size``: a dict with per_device_batch_size,
    fits, peak_bytes, the worst micro-batch's shape and why it did not fit."""
    from .._errors import BrsError

    record = {"per_device_batch_size": size, "fits": False, "peak_bytes": None}
    try:
        candidates = _plans.worst_candidates(planner.at(size).epoch(name))
    except (ValueError, BrsError) as exc:  # e.g. max_tokens no plan of a step can meet
        record["why"] = f"no plan: {exc}"
        return record
    record["worst_micro_batch"] = list(candidates[0].shape)
    record["measured_micro_batches"] = [list(mb.shape) for mb in candidates]
    peak = None
    for mb in candidates:
        try:
            value = runner.peak_bytes(mb)
        except OutOfMemory as exc:
            record["worst_micro_batch"] = list(mb.shape)
            record["why"] = f"out of memory: {' '.join(str(exc).split())[:200]}"
            return record
        if value is not None and (peak is None or value > peak):
            peak, record["worst_micro_batch"] = value, list(mb.shape)
    record["peak_bytes"] = peak
    if budget is not None and peak is not None and peak > budget:
        record["why"] = f"peak {peak} bytes > memory_budget {budget}"
        return record
    if peak is None and budget is not None:
        record["why"] = "peak memory not measurable here (no profiler memory events)"
        return record
    record["fits"] = True
    return record


def search(planner, name, start, limit, runner, budget, on_probe=None):
    """(largest fitting per-device batch size, probes). DoesNotFit when 1 does not fit."""
    probes = []

    def fits(size):
        record = probe(planner, name, size, runner, budget)
        probes.append(record)
        if on_probe:
            on_probe(name, record)
        return record["fits"]

    start = max(1, min(start, limit))
    if fits(start):
        good, bad = start, None
        while good < limit:
            size = min(2 * good, limit)
            if fits(size):
                good = size
            else:
                bad = size
                break
        if bad is None:
            return good, probes
    else:
        bad = start
        if start == 1 or not fits(1):
            last = probes[-1]
            raise DoesNotFit(f"{name}'s largest micro-batch does not fit even at "
                             f"per_device_batch_size 1: batch size x length "
                             f"{last.get('worst_micro_batch')}, {last.get('why')}; raise "
                             "memory_budget or use a smaller model")
        good = 1
    while bad - good > 1:
        middle = (good + bad) // 2
        if fits(middle):
            good = middle
        else:
            bad = middle
    return good, probes
