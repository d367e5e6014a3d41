"""A max_tokens that some step of an epoch cannot meet is refused before the first micro-batch:
at construction for the first epoch, at set_epoch for a later one, with a ValueError naming a
max_tokens that plans the whole epoch."""

import re

import pytest

import brs

# transformers' own test data for its BatchRebalanceSampler: 40 short samples and 8 long ones.
UPSTREAM = [100] * 40 + [3000] * 8
SHAPE = dict(per_device_batch_size=3, dp_size=2, rank=0, grad_accum=2)


def sampler(max_tokens, seed=0, lengths=UPSTREAM, **options):
    return brs.BatchRebalanceSampler(lengths, **{**SHAPE, **options}, max_tokens=max_tokens,
                                     seed=seed)


def named_cap(message):
    """The max_tokens the message says plans every step."""
    found = re.search(r"max_tokens to (\d+)|max_tokens (\d+) plans every step", message)
    assert found, message
    return int(found.group(1) or found.group(2))


def every_micro_batch(s):
    return list(s)


def test_upstream_data_is_refused_at_construction():
    with pytest.raises(ValueError) as caught:
        sampler(4000)
    message = str(caught.value)
    assert "micro-batches" in message
    needed = int(re.search(r"needs at least (\d+) micro-batches", message).group(1))
    assert needed > SHAPE["dp_size"] * SHAPE["grad_accum"]
    cap = named_cap(message)
    assert cap > 4000
    s = sampler(cap)  # the named cap plans the whole epoch
    assert len(every_micro_batch(s)) == len(s)
    with pytest.raises(ValueError):
        sampler(cap - 1)


@pytest.mark.parametrize("seed", range(40))
def test_no_seed_fails_in_the_middle_of_an_epoch(seed):
    """Either the constructor refuses the cap, or every micro-batch of the epoch is yielded."""
    try:
        s = sampler(4000, seed=seed)
    except ValueError as refused:
        s = sampler(named_cap(str(refused)), seed=seed)
    assert len(every_micro_batch(s)) == len(s)


def test_a_sample_above_the_cap_names_a_cap_that_plans_the_epoch():
    """Not merely the longest sample: a cap that the whole epoch can keep."""
    with pytest.raises(ValueError) as caught:
        sampler(2000)
    cap = named_cap(str(caught.value))
    assert cap >= max(UPSTREAM)
    assert len(every_micro_batch(sampler(cap))) == len(sampler(cap))


def test_set_epoch_refuses_an_epoch_the_cap_cannot_plan():
    lengths = [1 + (i * 7919) % 997 for i in range(240)]  # many distinct lengths, many caps
    with pytest.raises(ValueError) as caught:
        sampler(1, lengths=lengths)  # every sample is above it: the message names epoch 0's cap
    cap = named_cap(str(caught.value))
    s = sampler(cap, lengths=lengths)
    for epoch in range(1, 50):
        try:
            s.set_epoch(epoch)
        except ValueError as error:
            refused = str(error)
            break
    else:
        pytest.fail(f"max_tokens {cap} plans epochs 0..49: no epoch to refuse")
    assert "micro-batches" in refused
    assert s.epoch == epoch - 1  # a refused epoch is not selected
    assert len(every_micro_batch(s)) == len(s)
    later = sampler(named_cap(refused), lengths=lengths)
    later.set_epoch(epoch)
    assert len(every_micro_batch(later)) == len(later)


def test_without_a_cap_or_in_packed_mode_construction_is_unchanged():
    assert len(every_micro_batch(sampler(None))) == len(sampler(None))
    # packed mode's cap is bin packing: only planning a step settles it, so no check refuses it
    packed = sampler(4000, packed=True)
    assert len(every_micro_batch(packed)) == len(packed)
