"""Where a step's time goes (Plan.step_time, useful_time, padding_time, waiting_time): the
library's split, read back on the plans users get, against its definition from the micro-batches'
own costs (include/brs.h, BRS_PLAN_STEP_TIME)."""

import pytest

from brs import BatchRebalanceSampler
from brs.plan import time_shares
from brs_testing import read_lengths


def _sampler(**options):
    return BatchRebalanceSampler(read_lengths("gsm8k_train.lengths"), per_device_batch_size=4,
                                 grad_accum=2, dp_size=4, rank=0, seed=5, **options)


def _waiting(plan, sync):
    """The slowest rank's time minus each rank's, summed over ranks (per micro-step under
    micro_step sync)."""
    costs = [[mb.cost for mb in rank] for rank in plan.micro_batches]
    if sync == "step":
        times = [sum(rank) for rank in costs]
        return sum(max(times) - t for t in times)
    return sum(max(rank[m] for rank in costs) - rank[m]
               for m in range(len(costs[0])) for rank in costs)


@pytest.mark.parametrize("strategy", ["balanced", "random", "length_grouped"])
@pytest.mark.parametrize("sync", ["micro_step", "step"])
def test_the_ranks_time_is_useful_plus_padding_plus_waiting(strategy, sync):
    sampler = _sampler(strategy=strategy, sync=sync, pad_to_multiple_of=8)
    for step in range(3):
        plan = sampler.plan(step)
        ranks = len(plan.micro_batches)
        expected = plan.step_sync_time if sync == "step" else plan.micro_sync_time
        assert plan.step_time == pytest.approx(expected)
        assert plan.useful_time + plan.padding_time + plan.waiting_time == pytest.approx(
            ranks * plan.step_time)
        assert plan.waiting_time == pytest.approx(_waiting(plan, sync), abs=1e-6)
        assert plan.padding_time > 0  # rounded to 8, every strategy pads
        assert sum(time_shares(plan)) == pytest.approx(1)


def test_brs_waits_less_than_random_batches():
    balanced, random = _sampler().plan(0), _sampler(strategy="random").plan(0)
    assert time_shares(balanced)[2] < time_shares(random)[2]
    assert balanced.step_time < random.step_time
