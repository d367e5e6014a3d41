"""Vision-language samples (encoder_loads=): each micro-batch's images are the sum of its
samples', its cost is text plus images, max_encoder_tokens caps its patches, every rank agrees,
a step without images plans as without loads, and bad input raises a clear error."""

import pickle
import random

import pytest

import brs


def _dataset(n=512, seed=0):
    rng = random.Random(seed)
    lengths = [rng.randint(16, 600) for _ in range(n)]
    sizes = [256, 1024, 1536, 4096]
    loads = [[rng.choice(sizes) for _ in range(rng.choice([0, 0, 1, 1, 2, 4]))] for _ in range(n)]
    return lengths, loads


def _sampler(lengths, loads, rank=0, **options):
    options = {"per_device_batch_size": 4, "grad_accum": 2, "dp_size": 2, "seed": 3, **options}
    return brs.BatchRebalanceSampler(lengths, rank=rank, encoder_loads=loads, **options)


def _patches(entry):
    return entry if isinstance(entry, int) else sum(entry)


def test_micro_batches_carry_their_images_and_the_cap_holds():
    lengths, loads = _dataset()
    sampler = _sampler(lengths, loads, max_encoder_tokens=20000)
    for step in range(sampler.steps_per_epoch):
        plan = sampler.plan(step)
        for rank in plan.micro_batches:
            for mb in rank:
                assert mb.encoder_tokens == sum(_patches(loads[i]) for i in mb.indices)
                assert mb.images == sum(len(loads[i]) for i in mb.indices)
                assert mb.encoder_tokens <= 20000
                assert mb.cost >= mb.encoder_cost
        assert plan.max_encoder_tokens <= 20000
        assert plan.total_encoder_tokens == sum(
            mb.encoder_tokens for rank in plan.micro_batches for mb in rank)


def test_ranks_agree_and_cover_the_epoch_once():
    lengths, loads = _dataset(seed=1)
    seen = []
    for rank in range(2):
        for batch in _sampler(lengths, loads, rank=rank):
            seen.extend(batch)
    assert sorted(seen) == list(range(len(lengths)))


def test_images_change_the_plan_and_lower_its_time():
    lengths, loads = _dataset(seed=2)
    with_images = _sampler(lengths, loads)
    text_only = _sampler(lengths, None)
    differ = 0
    for step in range(with_images.steps_per_epoch):
        ours = with_images.plan(step)
        theirs = text_only.plan(step)
        differ += ours.micro_batches != theirs.micro_batches
        # the text split priced with images is one of the two-part planner's starts
        assert ours.encoder_cost > 0
    assert differ > 0


def test_steps_without_images_plan_as_without_loads():
    lengths, _ = _dataset(seed=3)
    empty = [[] for _ in lengths]
    a, b = _sampler(lengths, empty), _sampler(lengths, None)
    assert a.fingerprint == b.fingerprint
    for step in range(a.steps_per_epoch):
        assert a.plan(step).micro_batches == b.plan(step).micro_batches


def test_pickle_and_with_options_keep_the_images():
    lengths, loads = _dataset(seed=4)
    sampler = _sampler(lengths, loads)
    clone = pickle.loads(pickle.dumps(sampler))
    assert clone.fingerprint == sampler.fingerprint
    assert clone.plan(1).micro_batches == sampler.plan(1).micro_batches
    other = sampler.with_options(encoder_alpha=0.01)
    assert other.fingerprint != sampler.fingerprint
    assert sampler.with_options(encoder_loads=None).fingerprint != sampler.fingerprint
    assert sampler.was_given("encoder_loads")


def test_plan_batch_takes_images():
    lengths, loads = _dataset(n=64, seed=5)
    plan = brs.plan_batch(lengths, dp_size=4, grad_accum=2, encoder_loads=loads,
                          max_encoder_tokens=40000)
    flat = sorted(i for rank in plan for micro in rank for i in micro)
    assert flat == list(range(64))
    for rank in plan:
        for micro in rank:
            assert sum(_patches(loads[i]) for i in micro) <= 40000
    with pytest.raises(ValueError, match="the batch of 64 samples: no split into 8 micro-batches "
                                         "within max_encoder_tokens 16384"):
        brs.plan_batch(lengths, dp_size=4, grad_accum=2, encoder_loads=loads,
                       max_encoder_tokens=16384)


def test_stream_takes_an_encoder_load_callable():
    lengths, loads = _dataset(n=128, seed=6)
    items = [{"n": length, "images": images} for length, images in zip(lengths, loads)]
    stream = brs.RebalancedStream(items, length=lambda x: x["n"],
                                  encoder_load=lambda x: x["images"], per_device_batch_size=4,
                                  dp_size=1, rank=0, grad_accum=2, window_steps=2,
                                  max_encoder_tokens=20000)
    seen = []
    for batch in stream:
        assert sum(_patches(item["images"]) for item in batch) <= 20000
        seen.extend(id(item) for item in batch)
    assert len(seen) == len(set(seen)) == 128


@pytest.mark.parametrize("loads, error, phrase", [
    ("abc", TypeError, "one entry per sample"),
    ([[1]] * 3, ValueError, "has 3 entries but there are"),
    ([[0]] + [[]] * 511, ValueError, "an image has 1 to"),
    ([["x"]] + [[]] * 511, TypeError, "must be an int"),
    ([1.5] + [[]] * 511, TypeError, "list of image patch counts"),
])
def test_bad_loads_say_what_to_change(loads, error, phrase):
    lengths, _ = _dataset()
    with pytest.raises(error, match=phrase):
        _sampler(lengths, loads)


def test_a_sample_above_the_encoder_cap_names_it():
    lengths, _ = _dataset()
    loads = [[256]] * len(lengths)
    loads[7] = [4096, 4096]
    with pytest.raises(ValueError, match="sample 7 has 8192 image patches"):
        _sampler(lengths, loads, max_encoder_tokens=5000)


def test_check_epochs_plans_every_step_under_the_encoder_cap():
    lengths, _ = _dataset(seed=8)
    loads = [[4096]] * len(lengths)  # 4 samples a micro-batch: 16384 patches each
    sampler = _sampler(lengths, loads, max_encoder_tokens=4096)  # each sample alone fits
    with pytest.raises(ValueError, match="max_encoder_tokens 4096 cannot plan all 2 epochs of "
                                         "this run: step 0 of epoch 0"):
        sampler.check_epochs(2)
    assert _sampler(lengths, loads, max_encoder_tokens=16384).check_epochs(2) is None
