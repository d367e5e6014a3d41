"""brs.integrations.megatron gives each rank what megatron-core's HybridCPDataLoaderWrapper
gives it, checked against megatron-core 0.16.1 itself. Its data path needs CUDA (it moves the
lengths to the GPU to all-gather them), so the structure is checked against what its scheduler,
BalancedCPScheduler, returns on the same samples, and against how
hybrid_context_parallel_forward_backward reads it: every group has work on every rank, a
sub-sample's partners (its local_cp_size) are consecutive ranks of one group, every sample of the
step once, every rank's share within the cap; and no collective is needed (no process group)."""

import random

import pytest

import brs
from brs.integrations import megatron

pytest.importorskip("megatron.core.pipeline_parallel.hybrid_cp_schedule")

D, C, G, P, T = 2, 4, 4, 2, 4096


def lengths(n=400, seed=5):
    rng = random.Random(seed)
    return [min(16384, max(16, int(rng.lognormvariate(7.5, 1.1)))) for _ in range(n)]


def sampler(data, rank=0):
    return brs.BatchRebalanceSampler(data, per_device_batch_size=P, grad_accum=G, dp_size=D,
                                     rank=rank, cp_size=C, max_tokens_per_rank=T, packed=True,
                                     seed=3)


def partners(groups):
    """Each (group, sample)'s ranks, as hybrid_context_parallel_forward_backward counts its
    local_cp_size: the ranks of the group whose list holds the sample."""
    out = {}
    for g, group in enumerate(groups):
        for rank, ids in enumerate(group):
            assert len(ids) == len(set(ids)), "a rank runs a sub-sample twice in a group"
            for i in ids:
                out.setdefault((g, i), []).append(rank)
    return out


def check_structure(groups, step_lengths, ranks, cap):
    """What Megatron's runtime needs of sample_id_groups, for brs's and for its own."""
    assert groups and all(len(group) == ranks for group in groups)
    assert all(ids for group in groups for ids in group), "a rank with no sub-sample in a group"
    seen = partners(groups)
    assert sorted(i for _, i in seen) == sorted(step_lengths), "not every sample exactly once"
    for (_, i), members in seen.items():
        c = len(members)
        assert c & (c - 1) == 0 and members == list(range(members[0], members[0] + c))
        assert -(-step_lengths[i] // c) <= cap
    return seen


def test_megatrons_own_schedule_passes_the_check():
    """The check is Megatron's structure: its own scheduler's output meets it (called through
    brs/peers.py, the one place brs.trial calls it from)."""
    from brs import peers

    data = lengths()
    step = dict(enumerate(data[:D * G * P]))
    groups = peers.balanced_cp_groups(step, D * C, T)
    check_structure(groups, step, D * C, T)


def test_brs_plans_in_megatrons_structure():
    data = lengths()
    s = sampler(data)
    for step in range(s.steps_per_epoch):
        plan = s.plan(step)
        groups = megatron.sample_id_groups(plan)
        drawn = {i: data[i] for r in plan.micro_batches for mb in r for i in mb.indices}
        seen = check_structure(groups, drawn, D * C, T)
        degree = {i: len(mb.cp_ranks) for r in plan.micro_batches for mb in r for i in mb.indices}
        # the local_cp_size Megatron reads is the degree brs planned, on the plan's ranks
        assert all(len(members) == degree[i] for (_, i), members in seen.items())
        first = {i: mb.cp_ranks[0] for r in plan.micro_batches for mb in r for i in mb.indices}
        assert all(members[0] == first[i] for (_, i), members in seen.items())


def test_the_loader_gives_each_rank_its_samples_without_a_process_group():
    import torch.distributed as dist

    data = lengths()
    assert not dist.is_initialized()  # every rank builds its share alone: no all-gather
    loaders = [megatron.HybridCPLoader(sampler(data, rank), lambda i: {"tokens": [i] * data[i]},
                                       rank=rank)
               for rank in range(D * C)]
    for step in range(3):
        outputs = [next(loader) for loader in loaders]
        groups = outputs[0][1]
        assert all(o[1] == groups for o in outputs), "every rank must see the same groups"
        for rank, (samples, _) in enumerate(outputs):
            assert set(samples) == {i for group in groups for i in group[rank]}
            assert all(len(samples[i]["tokens"]) == data[i] for i in samples)


def test_a_sampler_without_context_parallelism_is_refused():
    s = brs.BatchRebalanceSampler(lengths(), per_device_batch_size=P, dp_size=1, rank=0)
    with pytest.raises(ValueError, match="cp_size"):
        megatron.HybridCPLoader(s, lambda i: {})
