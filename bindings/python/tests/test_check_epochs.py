"""BatchRebalanceSampler.check_epochs: every epoch of a run checked against max_tokens before its
first step. The case is upstream's example: seeds whose epoch 0 plans but a later epoch not."""

import pytest

from brs import BatchRebalanceSampler

# 40 short samples and 8 long ones; 12 samples a step over 4 micro-batches under max_tokens 4000:
# a step drawing 5 of the long ones needs 5 micro-batches (3000 tokens each), or a cap of 6000.
LENGTHS = [100] * 40 + [3000] * 8
LATE_FAILING_SEEDS = (1, 2, 3, 5)


def sampler(seed, **options):
    settings = dict(per_device_batch_size=3, dp_size=2, rank=0, grad_accum=2, max_tokens=4000,
                    seed=seed)
    settings.update(options)
    return BatchRebalanceSampler(LENGTHS, **settings)


@pytest.mark.parametrize("seed", LATE_FAILING_SEEDS)
def test_a_later_epoch_is_refused_up_front_with_the_run_cap(seed):
    checked = sampler(seed)  # epoch 0 plans: construction accepts it
    with pytest.raises(ValueError) as refused:
        checked.check_epochs(4)
    message = str(refused.value)
    assert "raise max_tokens to 6000" in message.lower()
    assert "needs 6000" in message  # the failing epoch's own cap
    assert "per epoch:" in message
    assert checked.epoch == 0  # the check moves nothing


@pytest.mark.parametrize("seed", LATE_FAILING_SEEDS)
def test_the_named_cap_plans_the_whole_run(seed):
    assert sampler(seed, max_tokens=6000).check_epochs(4) == 6000
    raised = sampler(seed, max_tokens=6000)
    for epoch in range(4):
        raised.set_epoch(epoch)
        for step in range(raised.steps_per_epoch):
            assert raised.plan(step).max_padded_tokens <= 6000


def test_more_micro_batches_are_named_too():
    with pytest.raises(ValueError, match=r"grad_accum to 3 so that dp_size x grad_accum >= \d"):
        sampler(2).check_epochs(4)


def test_epochs_that_plan_pass_and_no_cap_checks_nothing():
    assert sampler(2).check_epochs(3) == 3000  # epochs 0 .. 2 plan under 4000
    assert sampler(2, max_tokens=None).check_epochs(4) is None


def test_packed_mode_plans_every_step_of_every_epoch():
    assert sampler(1, packed=True, max_tokens=6100).check_epochs(4) is None
    with pytest.raises(ValueError, match=r"\(packed\) cannot plan all 4 epochs"):
        sampler(1, packed=True).check_epochs(4)


@pytest.mark.parametrize("epochs", [0, -1])
def test_bad_epoch_counts(epochs):
    with pytest.raises(ValueError, match="epochs must be >= 1"):
        sampler(2).check_epochs(epochs)
    with pytest.raises(TypeError, match="epochs must be an int"):
        sampler(2).check_epochs(2.0)
