"""Each sampler's epoch as plan[step][rank][micro] -> dataset indices, for a dp x grad_accum job.

The peers are the installed transformers' own classes, driven the way the Trainer drives them;
brs is the Python package. Only torch and transformers are needed (accelerate's batch dealing,
batch i to rank i % dp, is two lines and is written out here so the script runs where
accelerate is missing).
"""

import torch
from torch.utils.data import BatchSampler

import brs


class Infeasible(Exception):
    """A sampler could not plan a step (e.g. a max_tokens cap K micro-batches cannot meet)."""


def _deal(batches, dp, ga):
    """Rank r gets batches r, r+dp, ... (accelerate's BatchSamplerShard); micro m of step t is
    that rank's batch t*ga + m. Only steps every rank completes are kept."""
    per_rank = [batches[r::dp] for r in range(dp)]
    steps = min(len(b) for b in per_rank) // ga
    return [[[per_rank[r][t * ga + m] for m in range(ga)] for r in range(dp)]
            for t in range(steps)]


def group_by_length(lengths, dp, ga, batch, seed):
    """transformers' LengthGroupedSampler(batch*ga), DataLoader batches of `batch`."""
    from transformers.trainer_pt_utils import LengthGroupedSampler

    sampler = LengthGroupedSampler(batch * ga, lengths=lengths,
                                   generator=torch.Generator().manual_seed(seed))
    return _deal(list(BatchSampler(list(sampler), batch, drop_last=True)), dp, ga)


def fixed_random(lengths, dp, ga, batch, seed):
    """A seeded permutation cut into fixed batches of `batch` (DistributedSampler's shape)."""
    order = torch.randperm(len(lengths), generator=torch.Generator().manual_seed(seed)).tolist()
    return _deal(list(BatchSampler(order, batch, drop_last=True)), dp, ga)


def upstream(lengths, dp, ga, batch, seed):
    """transformers' BatchRebalanceSampler (train_sampling_strategy='batch_rebalance').

    Iterating rank 0 splits each step for all ranks; brs.peers.recorded_epoch records that
    split and the step's samples (which brs then plans too). None if this transformers has no
    such sampler.
    """
    from brs import peers

    if peers.batch_rebalance_class()[0] is None:
        return None, None
    sampler = peers.batch_rebalance(lengths, effective_batch_size=batch * ga * dp, dp_size=dp,
                                    grad_accum=ga, seed=seed)
    return peers.recorded_epoch(sampler)


def brs_plan(lengths, dp, ga, batch, step_samples, *, cost_model=None, sync=None):
    """brs planning exactly the samples of `step_samples` (one list per step), in order.

    It is given the lengths of those samples concatenated, shuffle off, so its step t holds
    step_samples[t]; indices are mapped back to the dataset.
    """
    order = [i for step in step_samples for i in step]
    sampler = brs.BatchRebalanceSampler([lengths[i] for i in order], per_device_batch_size=batch,
                                        grad_accum=ga, dp_size=dp, rank=0, shuffle=False,
                                        cost_model=cost_model, sync=sync)
    plan = []
    for t in range(sampler.steps_per_epoch):
        try:
            p = sampler.plan(t)
        except (ValueError, brs.BrsError) as exc:
            raise Infeasible(f"step {t}: {exc}") from None
        plan.append([[[order[i] for i in mb.indices] for mb in rank] for rank in p.micro_batches])
    return plan


def chosen_steps(plan, lengths, count):
    """The step holding the epoch's longest sample, then the first other steps: `count` steps
    that every sampler is measured on (the peak memory needs the longest sample)."""
    longest = max(range(len(plan)), key=lambda t: max(lengths[i] for rank in plan[t]
                                                      for mb in rank for i in mb))
    rest = [t for t in range(len(plan)) if t != longest]
    return [longest] + rest[:max(0, count - 1)]


def all_plans(lengths, dp, ga, batch, seed, calibrated):
    """{sampler name: plan or the reason it has none}."""
    plans = {"group_by_length": group_by_length(lengths, dp, ga, batch, seed),
             "random": fixed_random(lengths, dp, ga, batch, seed)}
    up_plan, samples = upstream(lengths, dp, ga, batch, seed)
    if up_plan is None:
        plans["upstream"] = "this transformers has no BatchRebalanceSampler"
        perm = torch.randperm(len(lengths), generator=torch.Generator().manual_seed(seed))
        b = batch * ga * dp
        samples = [perm[i:i + b].tolist() for i in range(0, len(lengths) - b + 1, b)]
    else:
        plans["upstream"] = up_plan
    plans["brs"] = brs_plan(lengths, dp, ga, batch, samples, cost_model=brs.CostModel.fixed())
    try:
        plans["brs_calibrated"] = brs_plan(lengths, dp, ga, batch, samples,
                                           cost_model=calibrated)
    except Infeasible as exc:
        plans["brs_calibrated"] = f"infeasible: {exc}"
    return plans
