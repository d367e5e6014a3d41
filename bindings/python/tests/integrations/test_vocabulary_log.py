"""max_shapes that tells: the integrations log the chosen vocabulary once at INFO (count, shapes,
modelled step time against unbounded), and the metrics give the step time over the unbounded
plan's bound beside the bound within the vocabulary."""

import logging

import pytest

from brs import BatchRebalanceSampler
from brs.integrations import _loader, _metrics, _vocabulary_log
from brs_testing import read_lengths


def _sampler(**options):
    return BatchRebalanceSampler(read_lengths("gsm8k_train.lengths"), per_device_batch_size=4,
                                 grad_accum=2, dp_size=4, rank=0, pad_to_multiple_of=64,
                                 **options)


def test_the_vocabulary_is_logged_once_with_its_cost(caplog):
    sampler = _sampler(max_shapes=8)
    with caplog.at_level(logging.INFO, logger="brs"):
        _loader.pad_to_plan(sampler, None, "the Trainer")
        _loader.pad_to_plan(sampler, None, "the Trainer")
    said = [r.getMessage() for r in caplog.records if "trains on" in r.getMessage()]
    assert len(said) == 1, said
    shapes = sampler.shape_vocabulary()
    assert f"trains on {len(shapes)} shapes (max_shapes=8" in said[0]
    assert ", ".join(f"{b}x{length}" for b, length in shapes) in said[0]
    _, ratio = _vocabulary_log.describe(sampler)
    assert f"modelled step time {ratio:.3f}x the unbounded plan's" in said[0]
    # the ratio is the plans' own: the same steps without the vocabulary
    unbounded = sampler.with_options(max_shapes=0)
    steps = range(0, sampler.steps_per_epoch, max(1, sampler.steps_per_epoch // 7))[:8]
    assert ratio >= 1 - 1e-9 or sum(sampler.plan(t).step_time for t in steps) < sum(
        unbounded.plan(t).step_time for t in steps)


def test_no_vocabulary_no_line(caplog):
    with caplog.at_level(logging.INFO, logger="brs"):
        _loader.pad_to_plan(_sampler(), None, "the Trainer")
    assert not [r for r in caplog.records if "trains on" in r.getMessage()]


def test_the_metrics_price_the_vocabulary_against_the_unbounded_bound():
    sampler = _sampler(max_shapes=4)
    unbounded = sampler.with_options(max_shapes=0)
    for step in range(3):
        metrics = _metrics.step_metrics(sampler, step, 0)
        plan, free = sampler.plan(step), unbounded.plan(step)
        assert metrics[_metrics.TIME_OVER_UNBOUNDED] == pytest.approx(
            plan.micro_sync_time / free.time_lower_bound)
        # the bound within the vocabulary flatters it; the unbounded one does not
        assert metrics[_metrics.TIME_OVER_UNBOUNDED] >= metrics[_metrics.TIME_OVER_BOUND] - 1e-9
    assert _metrics.TIME_OVER_UNBOUNDED not in _metrics.step_metrics(unbounded, 0, 0)
    window = _metrics.MetricsWindow()
    for step in range(3):
        window.record(sampler.plan(step), "micro_sync_time",
                      _metrics.unbounded_bound(sampler, step, 0))
    assert _metrics.TIME_OVER_UNBOUNDED in window.flush()
