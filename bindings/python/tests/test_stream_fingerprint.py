"""The stream fingerprint: what a resume on another number of ranks compares (brs/_elastic.py)."""

import pytest

from brs import BatchRebalanceSampler
from brs_testing import random_lengths

LENGTHS = random_lengths(200, seed=11)


def sampler(dp_size, per_device=2, grad_accum=None, seed=5, **options):
    """Global batch 16 unless grad_accum says otherwise."""
    grad_accum = grad_accum or 16 // (per_device * dp_size)
    return BatchRebalanceSampler(LENGTHS, per_device_batch_size=per_device, grad_accum=grad_accum,
                                 dp_size=dp_size, rank=0, seed=seed, **options)


def test_the_split_is_left_out_and_the_stream_is_in():
    reference = sampler(2)
    assert len(reference.stream_fingerprint) == 16
    int(reference.stream_fingerprint, 16)
    for same in (sampler(1), sampler(4), sampler(2, per_device=4), sampler(2, sync="step")):
        assert same.stream_fingerprint == reference.stream_fingerprint
    assert sampler(1).fingerprint != reference.fingerprint
    for other in (sampler(2, seed=6), sampler(2, shuffle=False), sampler(2, drop_last=False)):
        assert other.stream_fingerprint != reference.stream_fingerprint


def test_state_dict_records_it():
    reference = sampler(2)
    assert reference.state_dict()["stream_fingerprint"] == reference.stream_fingerprint


def test_a_state_without_it_resumes_only_with_the_same_split():
    state = sampler(2).state_dict(consumed=4)
    del state["stream_fingerprint"]
    same_split = sampler(2)
    same_split.load_state_dict(state)
    assert list(same_split)[0] == same_split.plan(1).micro_batches[0][0].indices
    with pytest.raises(ValueError, match="fingerprint"):
        sampler(1).load_state_dict(state)
