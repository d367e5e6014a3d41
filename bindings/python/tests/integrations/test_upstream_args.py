"""``BatchRebalanceSampler.from_upstream_args`` against transformers' own BatchRebalanceSampler
built from the same arguments: the same steps of the same sizes, the same ``len()``, the same
counts and flags under upstream's names, and upstream's defaults.

Only the split of a step into micro-batches is brs's own (test_upstream_steps.py compares it);
with shuffle off both read the dataset in order, so each step holds the very same samples.
"""

import inspect

import pytest

from brs import BatchRebalanceSampler
from brs_testing import random_lengths

upstream_module = pytest.importorskip("transformers.trainer_pt_utils")
if not hasattr(upstream_module, "BatchRebalanceSampler"):
    pytest.skip("this transformers has no BatchRebalanceSampler", allow_module_level=True)
Upstream = upstream_module.BatchRebalanceSampler

# Upstream's attributes that brs answers with the same meaning.
ATTRIBUTES = ("num_global_batches", "num_full_batches", "remainder", "has_tail",
              "effective_batch_size", "dp_size", "grad_accum", "rank", "seed", "shuffle",
              "drop_last", "epoch")

# (samples, effective_batch_size, dp_size, grad_accum, drop_last): full steps only, a dropped
# tail, a kept tail of at least K samples, one below K (topped up), a dataset below one step.
CASES = [(48, 8, 2, 2, True), (43, 8, 2, 2, True), (43, 12, 2, 2, False), (41, 8, 2, 2, False),
         (45, 12, 1, 3, False), (5, 8, 2, 2, False), (70, 16, 4, 2, False)]


def both(n, effective, dp_size, grad_accum, drop_last, rank, **common):
    lengths = random_lengths(n, seed=n * 31 + effective, high=900)
    arguments = dict(effective_batch_size=effective, dp_size=dp_size, grad_accum=grad_accum,
                     drop_last=drop_last, rank=rank, **common)
    return (Upstream(lengths, **arguments),
            BatchRebalanceSampler.from_upstream_args(lengths, **arguments))


def upstream_steps(n, effective, dp_size, grad_accum, drop_last, **common):
    """Each step's samples over all ranks (sorted), from upstream's per-rank streams."""
    streams = [list(both(n, effective, dp_size, grad_accum, drop_last, rank, **common)[0])
               for rank in range(dp_size)]
    steps = len(streams[0]) // grad_accum
    return [sorted(i for stream in streams for batch in stream[t * grad_accum:(t + 1) * grad_accum]
                   for i in batch) for t in range(steps)]


def brs_steps(sampler):
    return [sorted(i for rank in sampler.plan(t).micro_batches for mb in rank for i in mb.indices)
            for t in range(sampler.num_global_batches)]


@pytest.mark.parametrize("case", CASES, ids=lambda case: "n{}-B{}-dp{}-ga{}-drop{}".format(*case))
def test_same_len_counts_and_flags_on_every_rank(case):
    for rank in range(case[2]):
        upstream, ours = both(*case, rank=rank, seed=3)
        for epoch in (0, 2):
            upstream.set_epoch(epoch)
            ours.set_epoch(epoch)
            assert len(ours) == len(upstream)
            assert sum(1 for _ in ours) == sum(1 for _ in upstream)
            for name in ATTRIBUTES:
                assert getattr(ours, name) == getattr(upstream, name), (rank, epoch, name)


@pytest.mark.parametrize("case", CASES, ids=lambda case: "n{}-B{}-dp{}-ga{}-drop{}".format(*case))
def test_each_step_holds_as_many_samples_as_upstream_and_in_order_the_same(case):
    shuffled = brs_steps(both(*case, rank=0, seed=3)[1])
    assert [len(step) for step in shuffled] == [len(step) for step in upstream_steps(*case,
                                                                                    seed=3)]
    in_order = brs_steps(both(*case, rank=0, shuffle=False)[1])
    assert in_order == upstream_steps(*case, shuffle=False)


def test_defaults_are_upstreams(job_env):
    lengths = random_lengths(40, seed=1)
    upstream = Upstream(lengths, effective_batch_size=8, dp_size=2, grad_accum=2)
    ours = BatchRebalanceSampler.from_upstream_args(lengths, 8, 2, 2)
    ours_signature = inspect.signature(BatchRebalanceSampler.from_upstream_args).parameters
    defaulted = [name for name, parameter in inspect.signature(Upstream).parameters.items()
                 if parameter.default is not inspect.Parameter.empty]
    assert set(defaulted) <= set(ours_signature)
    for name in defaulted:
        assert getattr(ours, name) == getattr(upstream, name), name
    # Upstream's fixed cost model: bs*L + QUADRATIC_COST_COEF*bs*L^2, no per-micro-batch term.
    assert ours.alpha == Upstream.QUADRATIC_COST_COEF
    assert upstream._cost(3, 0) == 0 and ours.intercept == 0
    assert ours.max_tokens == 0  # no cap, as upstream has none


def test_a_dropped_tail_with_no_full_step_is_an_error_not_an_empty_epoch():
    lengths = random_lengths(5, seed=2)
    assert len(Upstream(lengths, effective_batch_size=8, dp_size=2, grad_accum=2)) == 0
    with pytest.raises(ValueError, match="fewer than one global batch of 8.*drop_last"):
        BatchRebalanceSampler.from_upstream_args(lengths, 8, 2, 2, rank=0)
