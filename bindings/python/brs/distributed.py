"""Where this process stands in the job (rank, world size), and the one cross-rank check.

libbrs never communicates: every rank computes the same plan and takes its own part. That makes
two things this module's business: finding dp_size and rank without the user spelling them out,
and detecting, once, that the ranks would NOT compute the same plan (different lengths, seed or
options), which would otherwise train silently on overlapping or missing samples.

torch and accelerate are never imported here; they are only consulted if the program already
imported them, so the package works (and imports quickly) without either.
"""

import os
import sys


def topology(dp_size=None, rank=None):
    """(dp_size, rank): the explicit values where given, else the job's (detect())."""
    world, detected, source = detect()
    dp_size = world if dp_size is None else dp_size
    if rank is None:
        rank = detected
    else:
        source = "the rank argument"
    if rank >= dp_size:
        raise ValueError(f"rank {rank} (from {source}) must be below dp_size {dp_size}: "
                         "pass rank= and dp_size= explicitly for this data-parallel group")
    return dp_size, rank


def detect():
    """(world_size, rank, source): accelerate > torch.distributed > RANK/WORLD_SIZE > 1/0."""
    for probe in (_from_accelerate, _from_torch, _from_env):
        found = probe()
        if found is not None:
            return found
    return 1, 0, "default (single process)"


def _from_accelerate():
    state_module = sys.modules.get("accelerate.state")
    if state_module is None:
        return None
    partial = getattr(state_module, "PartialState", None)
    # PartialState is a Borg: an empty shared dict means nobody initialised it, and calling
    # PartialState() ourselves would initialise the process group as a side effect.
    if partial is None or not getattr(partial, "_shared_state", None):
        return None
    state = partial()
    return int(state.num_processes), int(state.process_index), "accelerate PartialState"


def _torch_dist():
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist


def _from_torch():
    dist = _torch_dist()
    if dist is None:
        return None
    return dist.get_world_size(), dist.get_rank(), "torch.distributed"


def _from_env():
    rank, world = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
    if rank is None or world is None:
        return None
    try:
        return int(world), int(rank), "RANK/WORLD_SIZE environment"
    except ValueError:
        raise ValueError(f"RANK={rank!r} and WORLD_SIZE={world!r} must be integers; fix the "
                         "launcher's environment or pass dp_size= and rank= explicitly") from None


def check_same_plan(fingerprint, what, dp_size):
    """Raise RuntimeError on every rank if the ranks' plan fingerprints differ.

    A collective over the default process group, so it only runs when that group is exactly the
    data-parallel group (world size == dp_size > 1): with pipeline stages that do not load data,
    a collective over the whole world would hang. ``what`` describes the fingerprint's inputs.
    """
    dist = _torch_dist()
    if dist is None or dist.get_world_size() < 2 or dist.get_world_size() != dp_size:
        return
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, fingerprint)
    reference = gathered[0]
    differing = [r for r, fp in enumerate(gathered) if fp != reference]
    if differing:
        listing = ", ".join(f"rank {r}: {fp}" for r, fp in enumerate(gathered))
        raise RuntimeError(
            f"brs: the ranks would plan different batches: rank(s) {differing} differ from rank 0 "
            f"(fingerprints {listing}). Every rank must build BatchRebalanceSampler from the same "
            f"{what}; otherwise samples are trained twice or never.")


def cp_process_groups(cp_size, *, dp_size=None, degrees=None, backend=None):
    """Every context-parallel process group a run with ``cp_size`` can use, built once, up front.

    With cp_size > 1 a micro-batch of degree c runs on the c consecutive global ranks starting at
    a multiple of c within one block of cp_size (brs.MicroBatch.cp_ranks), so the groups are known
    before training: for every degree c in ``degrees`` (default: the powers of two 2 .. cp_size;
    give the degrees cp_degrees allows) and every aligned block of c ranks of the dp_size x cp_size
    world (dp_size default: the world size / cp_size). Returns ``{cp_ranks: ProcessGroup}``;
    degree 1 needs no group and is not in it (``groups.get(mb.cp_ranks)`` is None there).
    Every rank must call it, in the same order relative to other new_group calls (torch's rule).
    """
    dist = _torch_dist()
    if dist is None:
        raise RuntimeError("cp_process_groups needs torch.distributed initialised "
                           "(init_process_group) first")
    world = dist.get_world_size()
    if dp_size is None:
        if world % cp_size:
            raise ValueError(f"the world of {world} ranks is not a multiple of cp_size "
                             f"{cp_size}: pass dp_size=")
        dp_size = world // cp_size
    allowed = sorted(set(degrees)) if degrees is not None else None
    groups = {}
    degree = 2
    while degree <= cp_size:
        if allowed is None or degree in allowed:
            for first in range(0, dp_size * cp_size, degree):
                ranks = tuple(range(first, first + degree))
                groups[ranks] = dist.new_group(list(ranks), backend=backend)
        degree *= 2
    return groups
