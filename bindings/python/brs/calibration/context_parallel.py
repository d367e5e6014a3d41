"""The cost of context parallelism fitted on a timed CP group: alpha, intercept, cp_comm_cost
and cp_latency of docs/algorithm.md ("Context parallelism") from micro-batches timed at every
degree with a CP attention (by default brs.integrations.context_parallel's reference decoder).

Run on every rank of a group of C processes (torchrun --nproc_per_node=C; gloo on CPU, nccl on
CUDA): a micro-batch of one sequence of length L at degree c runs forward and backward on ranks
0 .. c - 1, the others wait; its time is the slowest rank's. Every (L, c) is timed once per
round, rounds interleaved (a burst of load elsewhere lands on every micro-batch, not on one),
and keeps its fastest round. The seconds are fitted as

    s * (intercept + (L + alpha L^2) / c + cp_comm_cost (c - 1) / c L + cp_latency (c - 1))

(non-negative least squares of relative errors on the five products, s the seconds of one
unit) on part of the micro-batches (split()), and the fitted model is judged on the rest: the
CP micro-batches it did not fit on, whose median relative error the cost model records
(timing["cp_held_out_median_error"], with the micro-batches of each part). The model kept is
that one, so the error recorded is the error of the file written.
"""

import math
import statistics
import time

from ..cost_model import CostModel

REPEATS = 3
# The reference decoder's width: wide enough that its linear work per token, the unit, is
# timed well above the clock's noise on a CPU.
DIM = 512


def terms(length, degree):
    """The products the seconds are fitted on: (1, L / c, L^2 / c, (c - 1) L / c, c - 1)."""
    return (1.0, length / degree, length * length / degree, (degree - 1) * length / degree,
            float(degree - 1))


def degrees_of(cp_size):
    return [1 << k for k in range(cp_size.bit_length()) if 1 << k <= cp_size]


def micro_batch(length, degree, rank):
    """Rank ``rank``'s part of a lone sequence of ``length`` at ``degree`` on ranks 0 ..
    degree - 1, as the library plans it (its head-tail token ranges)."""
    from .. import sampler as _sampler

    s = _sampler.BatchRebalanceSampler([length], per_device_batch_size=1, grad_accum=1,
                                       dp_size=1, rank=0, packed=True, cp_size=degree,
                                       cp_degrees=degree, max_tokens_per_rank=length)
    return s.plan(0).micro_batches[rank][0]


def time_one(model, length, degree, groups, torch, dist):
    """Seconds of one forward and backward of a sequence of ``length`` at ``degree``: the
    slowest rank's, the same number on every rank."""
    from .. import context_parallel as cp

    rank = dist.get_rank()
    tokens = torch.randint(0, model.head.out_features, (length,))
    dist.barrier()
    elapsed = 0.0
    if rank < degree:
        shard = cp.shard(micro_batch(length, degree, rank), lambda i: tokens)
        # the wall clock, not calibration/timing.py's thread time: a rank waiting on its
        # group's collectives is off the CPU, and that wait is the cost being fitted
        start = time.perf_counter()
        model.zero_grad(set_to_none=True)
        model.loss_sum(shard, groups).backward()
        elapsed = time.perf_counter() - start
    slowest = torch.tensor([elapsed], dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return float(slowest)


def fit(rows):
    """(s, intercept, alpha, cp_comm_cost, cp_latency) from rows of (length, degree, seconds):
    non-negative least squares of relative errors (fit.nnls, the calibration's solver) on
    terms()."""
    from .fit import nnls

    x = nnls([terms(length, c) for length, c, _ in rows], [t for _, _, t in rows],
             weights=[1.0 / t for _, _, t in rows])
    s = float(x[1])
    if s <= 0:
        raise RuntimeError("the timings do not grow with the tokens: time longer sequences")
    return (s, float(x[0]) / s, float(x[2]) / s, float(x[3]) / s, float(x[4]) / s)


def predict(fitted, length, degree):
    s, intercept, alpha, comm, latency = fitted
    return s * sum(w * t for w, t in zip((intercept, 1.0, alpha, comm, latency),
                                         terms(length, degree)))


def quantiles(data, count=10):
    """``count`` distinct lengths spread over the dataset's (5th to 95th percentile)."""
    ordered = sorted(int(x) for x in data)
    picks = {ordered[min(len(ordered) - 1, int(len(ordered) * (0.05 + 0.9 * k / (count - 1))))]
             for k in range(count)}
    return sorted(picks)


def module_of(model):
    """The CP module to time: brs's reference decoder for None or "reference", else a module
    with loss_sum(shard, groups)."""
    if model is None or (isinstance(model, str) and model == "reference"):
        return None
    if not hasattr(model, "loss_sum"):
        raise ValueError("with cp_size, model must be a module with loss_sum(shard, groups) "
                         "(brs.integrations.context_parallel.TinyDecoder's interface) or "
                         "\"reference\" for brs's reference decoder")
    return model


def split(lengths, degrees):
    """(fitted on, held out): the (length, degree) micro-batches the fit sees and those it is
    judged on. Every degree-1 micro-batch is fitted on (it is no CP micro-batch); at the k-th
    CP degree the length of rank i is held out where i + k is odd, a checkerboard, so every
    length and every CP degree is in both parts and no held-out micro-batch is fitted on."""
    lengths = sorted(lengths)
    held_out = [(length, c) for k, c in enumerate(degrees) if c > 1
                for i, length in enumerate(lengths) if (i + k) % 2 == 1]
    fitted_on = [(length, c) for c in degrees for length in lengths
                 if (length, c) not in held_out]
    return fitted_on, held_out


def fit_held_out(seconds, lengths, degrees):
    """(fitted, record) from ``seconds`` {(length, degree): seconds}: fit() on split()'s first
    part and the record of its relative errors on the second (timing's cp_* keys)."""
    fitted_on, held_out = split(lengths, degrees)
    fitted = fit([(length, c, seconds[length, c]) for length, c in fitted_on])
    errors = [abs(predict(fitted, length, c) - seconds[length, c]) / seconds[length, c]
              for length, c in held_out]
    record = {"cp_fitted_on": [list(key) for key in fitted_on],
              "cp_held_out": [list(key) for key in held_out],
              "cp_held_out_errors": errors,
              "cp_held_out_median_error": statistics.median(errors)}
    return fitted, record


def time_grid(model, lengths, degrees, repeats, groups, torch, dist):
    """{(length, degree): the fastest of ``repeats`` interleaved rounds}, after a warm round."""
    grid = [(length, c) for c in degrees for length in lengths]
    best = {key: math.inf for key in grid}
    for round_ in range(repeats + 1):
        for length, c in grid:
            elapsed = time_one(model, length, c, groups, torch, dist)
            if round_:  # round 0 warms every micro-batch up
                best[length, c] = min(best[length, c], elapsed)
    return best


def calibrate(lengths, cp_size, *, model=None, repeats=REPEATS, seed=0):
    """A CostModel with alpha, intercept, cp_comm_cost and cp_latency fitted on this group of
    ``cp_size`` processes (torch.distributed initialised, world size cp_size): every degree up
    to cp_size, each length of ``lengths`` (4 or more distinct ones, the sequences timed;
    longer than any max_tokens_per_rank needs, so that every degree is worth timing),
    ``repeats`` interleaved warm rounds each keeping the fastest. ``model``: a module with
    ``loss_sum(shard, groups)`` and a ``head`` Linear (default a brs TinyDecoder)."""
    import torch
    import torch.distributed as dist

    from .. import distributed
    from .. import context_parallel as cp
    from .record import load_average

    if not dist.is_initialized() or dist.get_world_size() != cp_size:
        raise ValueError(f"calibrating context parallelism needs a group of cp_size {cp_size} "
                         "processes: run under torchrun --nproc_per_node=cp_size")
    lengths = sorted({int(length) for length in lengths})
    if len(lengths) < 4:
        raise ValueError(f"give at least 4 distinct lengths to time (got {len(lengths)})")
    torch.manual_seed(seed)
    model = cp.TinyDecoder(dim=DIM, max_len=max(lengths)) if model is None else model
    groups = distributed.cp_process_groups(cp_size)
    degrees = degrees_of(cp_size)
    load_before = load_average()
    seconds = time_grid(model, lengths, degrees, repeats, groups, torch, dist)
    (s, intercept, alpha, comm, latency), record = fit_held_out(seconds, lengths, degrees)
    timing = {"cp_size": cp_size, "degrees": degrees, "repeats": repeats,
              "estimator": "min", "interleaved": True, "backend": dist.get_backend(),
              "load_average": [load_before, load_average()], **record}
    return CostModel(alpha, intercept, source="calibrated", model=type(model).__name__,
                     device="cpu", seconds_per_unit=s, timing=timing,
                     timings=[{"length": length, "degree": c, "seconds": t}
                              for (length, c), t in seconds.items()],
                     cp_comm_cost=comm, cp_latency=latency)
