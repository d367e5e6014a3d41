"""A packed cap that cannot be met names a max_tokens that plans, found by planning: for a batch
(plan_batch) and for a step of an epoch, also through the whole-run check (check_epochs)."""

import re

import pytest

import brs

UPSTREAM_EXAMPLE = [100] * 40 + [3000] * 8  # per-device batch 3, dp 2, grad_accum 2


def named_cap(message):
    found = re.search(r"raise max_tokens to (\d+)", message)
    assert found, message
    return int(found.group(1))


@pytest.mark.parametrize("lengths", [UPSTREAM_EXAMPLE, [3000] * 8 + [100] * 40,
                                     [512, 700, 1300, 90, 2048, 33, 800, 1500] * 3])
def test_plan_batch_names_a_packed_cap_that_plans(lengths):
    with pytest.raises(ValueError) as refused:
        brs.plan_batch(lengths, dp_size=2, grad_accum=2, max_tokens=max(lengths), packed=True)
    cap = named_cap(str(refused.value))
    assert "found by planning" in str(refused.value)
    brs.plan_batch(lengths, dp_size=2, grad_accum=2, max_tokens=cap, packed=True)
    # no more than the padded bound, which any packing meets
    padded = re.search(r"raise max_tokens to (\d+)", str(pytest.raises(
        ValueError, brs.plan_batch, lengths, dp_size=2, grad_accum=2, max_tokens=max(lengths)
    ).value))
    assert cap <= int(padded.group(1))


def test_a_packed_step_names_its_cap_and_the_run_check_reports_it():
    sampler = brs.BatchRebalanceSampler(UPSTREAM_EXAMPLE, per_device_batch_size=3, dp_size=2,
                                        grad_accum=2, max_tokens=4000, packed=True, seed=1)
    with pytest.raises(ValueError) as refused:
        sampler.check_epochs(4)
    message = str(refused.value)
    step, epoch = map(int, re.search(r"step (\d+) of epoch (\d+)", message).groups())
    cap = named_cap(message)
    passing = sampler.with_options(max_tokens=cap)
    passing.plan(step, epoch=epoch)
