"""Context parallelism in the Python layer: each global rank's micro-batches read from a plan.

With ``cp_size`` C > 1 the world is dp_size x C ranks, global rank r = dp index x C + cp index
(DeviceMesh order ("dp", "cp")). libbrs plans every rank's part (brs_plan_cp_*): at each micro-step
rank r runs one micro-batch with a degree c (its group ``cp_ranks``: c consecutive global ranks
starting at a multiple of c within one block of C), or a placeholder (``indices == []``,
``cp_ranks == (r,)``) that the loss counts exclude. ``token_ranges`` are the (index, start, end)
slices of its samples rank r computes: over the group's ranks they cover each sample's
``[0, length)`` exactly once (the head-tail split of docs/algorithm.md, "Context parallelism").
"""

import ctypes

from . import _native as n, distributed
from ._errors import check_plan
from .plan import MicroBatch


def active(options):
    """Whether a sampler's options (name -> native value, as given) plan with context
    parallelism: cp_size > 1 or max_tokens_per_rank set."""
    return options.get("cp_size", 1) > 1 or options.get("max_tokens_per_rank", 0) > 0


def topology(dp_size, rank, cp_size):
    """(dp_size, global rank): the explicit values where given, else the job's. Without context
    parallelism, brs.distributed.topology; with it the job's world is dp_size x cp_size ranks and
    ``rank`` is the global rank."""
    if cp_size <= 1:
        return distributed.topology(dp_size, rank)
    world, detected, source = distributed.detect()
    if dp_size is None:
        if world % cp_size:
            raise ValueError(f"the world of {world} ranks (from {source}) is not a multiple of "
                             f"cp_size {cp_size}: pass dp_size= and rank= explicitly")
        dp_size = world // cp_size
    if rank is None:
        rank = detected
    else:
        source = "the rank argument"
    if rank >= dp_size * cp_size:
        raise ValueError(f"global rank {rank} (from {source}) must be below dp_size {dp_size} x "
                         f"cp_size {cp_size}: pass rank= and dp_size= explicitly")
    return dp_size, rank


class ContextParallelBatch(list):
    """The dataset indices of one rank's micro-batch (a list, as a DataLoader's batch sampler
    yields), with the context-parallel fields of brs.MicroBatch as attributes: ``indices``,
    ``cp_ranks``, ``token_ranges``, ``padded_tokens``, ``real_tokens``, ``num_samples``,
    ``cost``; ``is_placeholder`` when the rank has nothing at this micro-step."""

    __slots__ = ("cp_ranks", "token_ranges", "padded_tokens", "real_tokens", "cost")

    @property
    def indices(self):
        return list(self)

    @property
    def num_samples(self):
        return len(self)

    @property
    def is_placeholder(self):
        return len(self) == 0


def micro_batch(handle, rank, micro):
    """(indices, cp_ranks, token_ranges, padded_tokens, real_tokens, cost) of global rank
    ``rank`` at micro-step ``micro`` of a computed plan handle."""
    indices, count = ctypes.POINTER(ctypes.c_uint64)(), ctypes.c_size_t()
    first, degree = ctypes.c_uint64(), ctypes.c_uint64()
    check_plan(n.lib.brs_plan_cp_micro_batch(ctypes.byref(indices), ctypes.byref(count),
                                             ctypes.byref(first), ctypes.byref(degree), handle,
                                             rank, micro), handle)
    chosen = indices[:count.value]
    padded, real, cost = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_double()
    check_plan(n.lib.brs_plan_cp_micro_batch_stats(ctypes.byref(padded), ctypes.byref(real),
                                                   ctypes.byref(cost), handle, rank, micro),
               handle)
    found = ctypes.c_size_t()
    check_plan(n.lib.brs_plan_cp_token_ranges(None, ctypes.byref(found), handle, rank, micro, 0),
               handle)
    flat = (ctypes.c_uint64 * (3 * found.value or 1))()
    check_plan(n.lib.brs_plan_cp_token_ranges(flat, ctypes.byref(found), handle, rank, micro,
                                              found.value), handle)
    ranges = [(flat[3 * q], flat[3 * q + 1], flat[3 * q + 2]) for q in range(found.value)]
    ranks = tuple(range(first.value, first.value + degree.value))
    return chosen, ranks, ranges, padded.value, real.value, cost.value


def snapshot_micro_batch(handle, rank, micro):
    """brs.MicroBatch of global rank ``rank`` at micro-step ``micro`` (Plan.micro_batches)."""
    indices, ranks, ranges, padded, real, cost = micro_batch(handle, rank, micro)
    return MicroBatch(indices, padded, real, len(indices), cost, 0, 0, 0.0, padded, ranks, ranges)


def batch(handle, rank, micro):
    """The ContextParallelBatch global rank ``rank`` yields at micro-step ``micro``."""
    indices, ranks, ranges, padded, real, cost = micro_batch(handle, rank, micro)
    out = ContextParallelBatch(indices)
    out.cp_ranks, out.token_ranges = ranks, ranges
    out.padded_tokens, out.real_tokens, out.cost = padded, real, cost
    return out


def world_size(handle):
    """dp_size x cp_size of a computed plan handle."""
    values = []
    for key in (n.PLAN_DP_SIZE, n.PLAN_CP_SIZE):
        out = ctypes.c_int64()
        check_plan(n.lib.brs_plan_get_int(ctypes.byref(out), handle, key), handle)
        values.append(out.value)
    return values[0] * values[1]
