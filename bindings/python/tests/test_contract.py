"""The sampler contract of docs/design.md section 2, checked over simulated ranks."""

import collections
import json
import sys

import pytest

from brs import BatchRebalanceSampler
from brs_testing import all_ranks, random_lengths, read_lengths, run_python

CONFIGS = [
    # (n, per_device_batch_size, grad_accum, dp_size, drop_last)
    (1000, 8, 2, 4, True),
    (1000, 8, 2, 4, False),  # 1000 % 64 = 40 >= K: a short last step, no top-up
    (999, 4, 1, 3, True),
    (70, 4, 4, 2, False),  # 70 % 32 = 6 < K = 8: topped up with 2 repeats
    (5, 3, 2, 2, False),  # N < K: the only step wraps around the order
]


def _make(lengths, p, g, dp, drop_last, **kw):
    return lambda rank: BatchRebalanceSampler(lengths, per_device_batch_size=p, grad_accum=g,
                                              dp_size=dp, rank=rank, drop_last=drop_last,
                                              seed=7, **kw)


def _expected_top_up(n, b, k):
    rest = n % b
    return k - rest if 0 < rest < k else 0


@pytest.mark.parametrize("n, p, g, dp, drop_last", CONFIGS)
def test_every_index_once_per_epoch_across_ranks(n, p, g, dp, drop_last):
    lengths = random_lengths(n, seed=n)
    samplers, streams = all_ranks(_make(lengths, p, g, dp, drop_last), dp)
    b, k = p * g * dp, g * dp
    counts = collections.Counter(i for stream in streams for mb in stream for i in mb)
    if drop_last:
        assert all(c == 1 for c in counts.values()), "an index appears twice in one epoch"
        assert len(counts) == (n // b) * b, "drop_last must drop exactly the incomplete tail"
    else:
        assert set(counts) == set(range(n)), "drop_last=False must not drop any sample"
        assert sum(counts.values()) - n == _expected_top_up(n, b, k)
        if n >= k:
            assert max(counts.values()) <= 2


@pytest.mark.parametrize("n, p, g, dp, drop_last", CONFIGS)
def test_equal_len_on_every_rank_and_no_empty_micro_batch(n, p, g, dp, drop_last):
    samplers, streams = all_ranks(_make(random_lengths(n, seed=1), p, g, dp, drop_last), dp)
    lens = {len(s) for s in samplers}
    assert lens == {len(stream) for stream in streams}
    assert len(lens) == 1
    assert len(samplers[0]) == samplers[0].steps_per_epoch * g
    assert all(mb for stream in streams for mb in stream)


def test_micro_batches_of_one_step_do_not_overlap_and_sum_to_the_step():
    lengths = random_lengths(640, seed=3)
    samplers, streams = all_ranks(_make(lengths, 8, 2, 4, True), 4)
    for step in range(samplers[0].steps_per_epoch):
        got = [i for stream in streams for mb in stream[step * 2:step * 2 + 2] for i in mb]
        assert len(got) == len(set(got)) == 64


def test_reshuffles_between_epochs_and_repeats_an_epoch():
    lengths = random_lengths(512, seed=4)
    s = BatchRebalanceSampler(lengths, per_device_batch_size=8, dp_size=1, rank=0)
    epoch0 = list(s)
    assert list(s) == epoch0, "iterating the same epoch twice must give the same stream"
    s.set_epoch(1)
    epoch1 = list(s)
    assert epoch1 != epoch0
    assert sorted(map(sorted, epoch0)) != sorted(map(sorted, epoch1)), "steps must be redrawn"
    assert sorted(i for mb in epoch0 for i in mb) == sorted(i for mb in epoch1 for i in mb)


def test_seed_changes_the_order_and_seed_epoch_do_not_alias():
    lengths = random_lengths(512, seed=5)

    def stream(seed, epoch):
        s = BatchRebalanceSampler(lengths, per_device_batch_size=8, seed=seed, dp_size=1)
        s.set_epoch(epoch)
        return list(s)

    assert stream(0, 0) != stream(1, 0)
    assert stream(0, 1) != stream(1, 0), "(seed 0, epoch 1) must differ from (seed 1, epoch 0)"


def test_no_shuffle_keeps_each_steps_samples_in_dataset_order():
    s = BatchRebalanceSampler(random_lengths(64, seed=6), per_device_batch_size=4, grad_accum=2,
                              dp_size=1, shuffle=False)
    first_step = sorted(i for mb in list(s)[:2] for i in mb)
    assert first_step == list(range(8))


@pytest.mark.parametrize("packed", [False, True])
def test_cap_is_never_exceeded(packed):
    lengths = read_lengths("fortunes.lengths", limit=2000)
    cap = 1200
    samplers, streams = all_ranks(_make(lengths, 8, 2, 2, True, max_tokens=cap, alpha=0.01,
                                        packed=packed), 2)
    for stream in streams:
        for mb in stream:
            tokens = sum(lengths[i] for i in mb) if packed else len(mb) * max(lengths[i] for i in mb)
            assert tokens <= cap
    plan = samplers[0].plan(0)
    assert plan.max_padded_tokens <= cap


def test_plan_matches_iteration_and_its_numbers_add_up():
    lengths = random_lengths(400, seed=8, high=2000)
    samplers, streams = all_ranks(_make(lengths, 6, 3, 2, True, intercept=5.0), 2)
    s = samplers[0]
    for step in (0, s.steps_per_epoch - 1):
        plan = s.plan(step)
        assert (plan.epoch, plan.step) == (0, step)
        for rank in range(2):
            for micro in range(3):
                mb = plan.micro_batches[rank][micro]
                assert mb.indices == streams[rank][step * 3 + micro]
                longest = max(lengths[i] for i in mb.indices)
                assert mb.num_samples == len(mb.indices)
                assert mb.padded_tokens == len(mb.indices) * longest
                assert mb.real_tokens == sum(lengths[i] for i in mb.indices)
                expected = 5.0 + mb.padded_tokens + 0.001 * mb.padded_tokens * longest
                assert mb.cost == pytest.approx(expected, rel=1e-9)
        every = [mb for rank in plan.micro_batches for mb in rank]
        assert plan.num_samples == sum(mb.num_samples for mb in every) == 36
        assert plan.total_real_tokens == sum(mb.real_tokens for mb in every)
        assert plan.total_padded_tokens == sum(mb.padded_tokens for mb in every)
        assert plan.max_padded_tokens == max(mb.padded_tokens for mb in every)
        assert plan.max_cost == pytest.approx(max(mb.cost for mb in every))
        assert plan.total_cost == pytest.approx(sum(mb.cost for mb in every))
        assert plan.lower_bound <= plan.max_cost
        assert plan.time_lower_bound <= min(plan.micro_sync_time, plan.step_sync_time)
        assert sum(plan.real_tokens_per_rank) == plan.total_real_tokens
        assert plan.num_samples_per_rank == [sum(mb.num_samples for mb in r)
                                             for r in plan.micro_batches]


def test_iteration_yields_fresh_lists():
    s = BatchRebalanceSampler(random_lengths(64, seed=9), per_device_batch_size=4, dp_size=1)
    first = list(s)
    first[0].append(-1)
    again = list(s)
    assert -1 not in again[0]
    assert all(type(mb) is list and all(type(i) is int for i in mb) for mb in again)


def test_torch_batch_sampler_attributes():
    s = BatchRebalanceSampler([3, 1, 2, 5], per_device_batch_size=2, dp_size=1, drop_last=False)
    assert s.batch_size is None
    assert s.drop_last is False
    assert not hasattr(s, "generator")
    assert (s.dp_size, s.rank, s.grad_accum, s.per_device_batch_size, s.seed) == (1, 0, 1, 2, 0)
    assert len(s.fingerprint) == 16 and int(s.fingerprint, 16) >= 0
    assert s.fingerprint == s.fingerprint.lower()


def test_fingerprint_ignores_rank_but_not_configuration():
    lengths = random_lengths(100, seed=10)
    base = dict(per_device_batch_size=4, dp_size=2)
    fp = BatchRebalanceSampler(lengths, rank=0, **base).fingerprint
    assert BatchRebalanceSampler(lengths, rank=1, **base).fingerprint == fp
    assert BatchRebalanceSampler(lengths, rank=0, seed=1, **base).fingerprint != fp
    assert BatchRebalanceSampler(lengths[:-1] + [lengths[-1] + 1], rank=0,
                                 **base).fingerprint != fp


def test_does_not_touch_global_random_generators():
    import random as stdlib_random

    state = stdlib_random.getstate()
    s = BatchRebalanceSampler(random_lengths(200, seed=11), per_device_batch_size=4, dp_size=1)
    list(s)
    s.plan(0)
    assert stdlib_random.getstate() == state
    if "numpy" in sys.modules:
        import numpy as np

        np_state = np.random.get_state()[1].copy()
        list(s)
        assert (np.random.get_state()[1] == np_state).all()


DETERMINISM_SCRIPT = """
import json, sys
from brs import BatchRebalanceSampler
lengths = [(i * 7919) % 613 + 1 for i in range(3000)]
s = BatchRebalanceSampler(lengths, per_device_batch_size=8, grad_accum=2, dp_size=4, rank=2,
                          seed=42, max_tokens=5000)
out = []
for epoch in (0, 3):
    s.set_epoch(epoch)
    out.append(list(s))
print(json.dumps({"fingerprint": s.fingerprint, "streams": out}))
"""


def test_determinism_across_two_processes():
    runs = [run_python(["-c", DETERMINISM_SCRIPT], PYTHONHASHSEED=str(seed)) for seed in (1, 2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (json.loads(r.stdout) for r in runs)
    assert first == second
    lengths = [(i * 7919) % 613 + 1 for i in range(3000)]
    here = BatchRebalanceSampler(lengths, per_device_batch_size=8, grad_accum=2, dp_size=4,
                                 rank=2, seed=42, max_tokens=5000)
    assert here.fingerprint == first["fingerprint"]
    assert list(here) == first["streams"][0]


def test_plan_pickles_and_compares_by_value():
    import pickle

    s = BatchRebalanceSampler(random_lengths(300, seed=12), per_device_batch_size=4,
                              grad_accum=2, dp_size=2, rank=0)
    plan = s.plan(1)
    clone = pickle.loads(pickle.dumps(plan))
    assert clone == plan == s.plan(1)
    assert clone != s.plan(2)
    assert clone.micro_batches[1][0].indices == list(s.plan(1).micro_batches[1][0].indices)
