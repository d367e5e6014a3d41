"""Ours against upstream train_sampling_strategy="batch_rebalance", same data, same settings.

Both samplers are built by their Trainer from the same TrainingArguments over the real gsm8k
lengths (7473 samples; per_device_train_batch_size 8 with gradient accumulation 8, i.e. 8
micro-batches of 64 samples per step, and 4 with 32, i.e. 32 micro-batches of 128 samples).
The two shuffle differently, so upstream's planner is run on OUR steps' samples (its
``_assign``): the comparison is plan against plan on identical input.
Run with ``-s`` to see the numbers.
"""

import dataclasses

import numpy as np
import pytest
from transformers import Trainer, TrainingArguments

from _support import REPO, TokenDataset, pad_collate, tiny_gpt2
from brs import CostModel
from brs.integrations.accelerate import find_rebalance_sampler
from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions

SETTINGS = [(8, 8), (4, 32)]  # (per_device_train_batch_size, gradient_accumulation_steps)

upstream_module = pytest.importorskip("transformers.trainer_pt_utils")
if not hasattr(upstream_module, "BatchRebalanceSampler"):
    pytest.skip("this transformers has no BatchRebalanceSampler (train_sampling_strategy="
                "'batch_rebalance'): nothing to compare against", allow_module_level=True)


@pytest.fixture(scope="module")
def dataset():
    lengths = np.loadtxt(REPO / "data" / "gsm8k_train.lengths", dtype=np.int64)
    return TokenDataset(lengths)


def arguments(tmp_path, strategy, per_device, grad_accum):
    return TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=per_device,
                             gradient_accumulation_steps=grad_accum, report_to="none",
                             use_cpu=True, seed=42, remove_unused_columns=False,
                             disable_tqdm=True, train_sampling_strategy=strategy)


def upstream(tmp_path, dataset, setting):
    trainer = Trainer(model=tiny_gpt2(), args=arguments(tmp_path, "batch_rebalance", *setting),
                      train_dataset=dataset, data_collator=pad_collate)
    sampler = trainer._get_train_sampler()
    assert isinstance(sampler, upstream_module.BatchRebalanceSampler)
    return sampler


def ours(tmp_path, dataset, setting, options=None):
    # Upstream's cost model (its fixed alpha), not the model's analytic one: both sides are
    # compared under the same costs.
    options = dataclasses.replace(options or RebalanceOptions(), alpha=CostModel.fixed().alpha)
    trainer = BatchRebalanceTrainer(model=tiny_gpt2(),
                                    args=arguments(tmp_path, "random", *setting),
                                    train_dataset=dataset, data_collator=pad_collate,
                                    rebalance_options=options)
    return find_rebalance_sampler(trainer.get_train_dataloader())


def upstream_plan(sampler, indices):
    """Upstream's micro-batches (index lists) for one step's samples."""
    lengths = [sampler.lengths[i] for i in indices]
    return [group for rank in sampler._assign(indices, lengths) for group in rank]


def cost_and_tokens(sampler, groups):
    """Upstream's own cost model (bs*L + 0.001*bs*L^2) and padded tokens of its worst group."""
    longest = [max(sampler.lengths[i] for i in group) for group in groups]
    return (max(sampler._cost(len(g), top) for g, top in zip(groups, longest)),
            max(len(g) * top for g, top in zip(groups, longest)))


def step_samples(plan):
    return [i for rank in plan.micro_batches for micro_batch in rank for i in micro_batch.indices]


def min_token_cap(lengths, groups):
    """Smallest cap on padded tokens (bs*L) that ``groups`` micro-batches can meet (oracle).

    Contiguous groups of the length-sorted samples suffice (docs/design.md section 3); for a cap T,
    filling each group greedily, longest first, needs the fewest groups.
    """
    ordered = sorted(lengths, reverse=True)

    def groups_needed(cap):
        count, start = 0, 0
        while start < len(ordered):
            start += cap // ordered[start]
            count += 1
        return count

    candidates = sorted({top * size for i, top in enumerate(ordered)
                         for size in range(1, len(ordered) - i + 1)})
    feasible = [cap for cap in candidates if cap >= ordered[0]]
    low, high = 0, len(feasible) - 1
    while low < high:
        middle = (low + high) // 2
        if groups_needed(feasible[middle]) <= groups:
            high = middle
        else:
            low = middle + 1
    return feasible[low]


@pytest.mark.parametrize("setting", SETTINGS)
def test_upstream_is_never_faster_at_no_more_memory(tmp_path, dataset, setting):
    """One process (dp 1): each micro-step is one micro-batch, so the synchronised step time of
    both sync models is the step's total cost, what the planner minimises first (docs/algorithm.md,
    exact for dp 1). Upstream may only be faster by using more memory (a larger peak bs*L)."""
    theirs_sampler = upstream(tmp_path, dataset, setting)
    sampler = ours(tmp_path, dataset, setting)
    beaten = []
    for step in range(sampler.steps_per_epoch):
        plan = sampler.plan(step)
        groups = upstream_plan(theirs_sampler, step_samples(plan))
        longest = [max(theirs_sampler.lengths[i] for i in group) for group in groups]
        theirs_time = sum(theirs_sampler._cost(len(g), top) for g, top in zip(groups, longest))
        theirs_peak = max(len(g) * top for g, top in zip(groups, longest))
        if plan.micro_sync_time > theirs_time * (1 + 1e-9) and theirs_peak <= plan.max_padded_tokens:
            beaten.append((step, plan.micro_sync_time, theirs_time))
        assert plan.micro_sync_time >= plan.time_lower_bound * (1 - 1e-9), step
    assert not beaten, f"upstream faster at no more peak memory: {beaten}"


def test_ours_respects_max_tokens_where_upstream_exceeds_it(tmp_path, dataset):
    # 4 x 32: with the epoch order of this seed upstream's peak only reaches the tightest cap
    # at 8 x 8, while at 4 x 32 it exceeds it on some steps, which this test needs.
    setting = SETTINGS[1]
    theirs_sampler = upstream(tmp_path, dataset, setting)
    uncapped = ours(tmp_path, dataset, setting)
    steps = [step_samples(uncapped.plan(step)) for step in range(uncapped.steps_per_epoch)]
    # The tightest cap every step can meet: any lower one, and some step has no plan.
    cap = max(min_token_cap([theirs_sampler.lengths[i] for i in step], setting[1])
              for step in steps)
    capped = ours(tmp_path, dataset, setting, RebalanceOptions(max_tokens=cap))
    mine = np.array([capped.plan(step).max_padded_tokens for step in range(len(steps))])
    theirs = np.array([cost_and_tokens(theirs_sampler, upstream_plan(theirs_sampler, step))[1]
                       for step in steps])
    print(f"\nmax padded tokens per micro-batch, cap max_tokens={cap}:\n"
          f"  ours (capped): worst {mine.max()}, steps above the cap: {(mine > cap).sum()}\n"
          f"  upstream (no hard cap): worst {theirs.max()}, steps above the cap: "
          f"{(theirs > cap).sum()} of {len(steps)}")
    assert [sorted(step_samples(capped.plan(t))) for t in range(len(steps))] == \
        [sorted(step) for step in steps]  # the cap changes the split, not the step's samples
    assert (mine <= cap).all()
    assert (theirs > cap).any()
