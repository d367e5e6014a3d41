"""pad_to_multiple_of, length_buckets and shapes(): the plan holds the tensors a padding collator
builds (their cost, the cap, the padded tokens), and the epoch's shapes are known before step 0."""

import pickle

import numpy as np
import pytest

from brs import BatchRebalanceSampler


def lognormal(n, seed):
    rng = np.random.default_rng(seed)
    return np.clip(np.round(rng.lognormal(5, 1, n)), 16, 1024).astype(np.uint32)


def round_up(length, multiple):
    return -(-length // multiple) * multiple


def padded_lengths(sampler, lengths, epoch=0):
    """(batch size, padded length, longest) of every micro-batch of this rank in the epoch."""
    out = []
    for step in range(sampler.steps_per_epoch):
        for mb in sampler.plan(step, epoch=epoch).micro_batches[sampler.rank]:
            assert mb.padded_tokens % mb.num_samples == 0
            longest = max(int(lengths[i]) for i in mb.indices)
            out.append((mb.num_samples, mb.padded_tokens // mb.num_samples, longest))
    return out


def test_a_collator_padding_to_64_never_breaks_the_cap():
    # the case that broke the cap: 4 of rank 0's 250 micro-batches were built above it
    lengths = lognormal(8000, 0)
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=8, dp_size=4, rank=0,
                                    grad_accum=2, max_tokens=4096, pad_to_multiple_of=64)
    micro_batches = padded_lengths(sampler, lengths)
    assert len(micro_batches) == 250
    for size, padded, longest in micro_batches:
        assert padded == round_up(longest, 64)
        assert size * padded <= 4096


def test_buckets_pad_to_the_smallest_that_holds_the_longest():
    lengths = lognormal(3000, 1)
    buckets = [64, 128, 256, 384, 512, 768, 1024]
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=8, dp_size=2, rank=1,
                                    grad_accum=2, length_buckets=buckets)
    assert sampler.length_buckets == buckets
    for _, padded, longest in padded_lengths(sampler, lengths):
        assert padded == min(b for b in buckets if b >= longest)


def test_auto_is_the_librarys_ladder_rounded_to_the_multiple():
    lengths = lognormal(2000, 2)
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=8, dp_size=2,
                                    length_buckets="auto", pad_to_multiple_of=64)
    ladder = sampler.length_buckets
    assert ladder == sorted(set(ladder)) and all(b % 64 == 0 for b in ladder)
    assert ladder[-1] >= lengths.max() and ladder[0] <= round_up(int(lengths.min()), 64)


def test_shapes_are_the_shapes_the_epoch_runs():
    lengths = lognormal(2500, 3)
    for options in ({}, {"pad_to_multiple_of": 32}, {"length_buckets": "auto"},
                    {"packed": True, "max_tokens": 4096, "pad_to_multiple_of": 128}):
        sampler = BatchRebalanceSampler(lengths, per_device_batch_size=6, dp_size=3, rank=2,
                                        grad_accum=2, **options)
        walked = set()
        for step in range(sampler.steps_per_epoch):
            for mb in sampler.plan(step, epoch=1).micro_batches[2]:
                length = mb.padded_tokens if options.get("packed") else \
                    mb.padded_tokens // mb.num_samples
                walked.add((mb.num_samples, length))
        assert sampler.shapes(epoch=1) == sorted(walked), options


def test_fewer_shapes_with_buckets():
    lengths = lognormal(8000, 4)
    plain = BatchRebalanceSampler(lengths, per_device_batch_size=8, dp_size=4, rank=0,
                                  grad_accum=2)
    bucketed = plain.with_options(length_buckets="auto", pad_to_multiple_of=64)
    assert len(bucketed.shapes()) < len(plain.shapes())


def test_options_survive_with_options_pickling_and_enter_the_fingerprint():
    lengths = lognormal(1000, 5)
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=4, dp_size=2,
                                    length_buckets=[256, 512, 1024], pad_to_multiple_of=8)
    clone = pickle.loads(pickle.dumps(sampler))
    assert clone.length_buckets == [256, 512, 1024] and clone.pad_to_multiple_of == 8
    assert clone.fingerprint == sampler.fingerprint
    plain = sampler.with_options(length_buckets=None, pad_to_multiple_of=None)
    assert plain.length_buckets == [] and plain.pad_to_multiple_of == 1
    assert len({plain.fingerprint, sampler.fingerprint,
                sampler.with_options(length_buckets=[512, 1024]).fingerprint}) == 3
    with pytest.raises(ValueError, match="fingerprint|configuration|length_buckets|options"):
        plain.load_state_dict(sampler.state_dict())


@pytest.mark.parametrize("buckets, error, words", [
    ([64, 128], ValueError, ["last length bucket 128", "add a bucket"]),
    ([128, 64, 2048], ValueError, ["strictly increasing"]),
    ("ladder", ValueError, ['"auto"']),
    (5, TypeError, ["length_buckets"]),
    ([64, "x"], TypeError, ["length_buckets"]),
])
def test_bad_buckets_say_what_to_change(buckets, error, words):
    lengths = [100, 1000, 50, 30]
    with pytest.raises(error) as caught:
        BatchRebalanceSampler(lengths, per_device_batch_size=2, dp_size=2,
                              length_buckets=buckets)
    for word in words:
        assert word in str(caught.value)


def test_a_padded_sample_above_the_cap_names_its_padded_length():
    with pytest.raises(ValueError, match="padded to 320"):
        BatchRebalanceSampler([300, 20, 40, 60], per_device_batch_size=2, dp_size=2,
                              max_tokens=310, pad_to_multiple_of=64)
