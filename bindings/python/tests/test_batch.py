"""brs.plan_batch: one step of lengths known only now (RL rollouts), planned by the library.

The plan must be the one the epoch sampler gives for the single step of an epoch of exactly
those lengths with shuffle off, hold every position once within max_tokens, be the same in
another process, and refuse with a ValueError that names what would do.
"""

import math
import os
import random
import re
import subprocess
import sys

import pytest

import brs
from brs import BatchRebalanceSampler, CostModel, plan_batch


def _random_batch(rng, k):
    n = rng.randint(k, 40)
    return [max(1, int(rng.lognormvariate(4, 1))) for _ in range(n)]


def _one_step_epoch(lengths, dp_size, grad_accum, **options):
    k = dp_size * grad_accum
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=math.ceil(len(lengths) / k),
                                    dp_size=dp_size, rank=0, grad_accum=grad_accum,
                                    shuffle=False, drop_last=False, **options)
    assert sampler.steps_per_epoch == 1
    return [[mb.indices for mb in rank] for rank in sampler.plan(0).micro_batches]


@pytest.mark.parametrize("packed", [False, True])
def test_equals_the_one_step_epoch_and_covers_every_position(packed):
    rng = random.Random(7 + packed)
    for _ in range(60):
        dp_size, grad_accum = rng.randint(1, 4), rng.randint(1, 3)
        lengths = _random_batch(rng, dp_size * grad_accum)
        options = {"packed": packed, "sync": rng.choice(["micro_step", "step"])}
        if rng.random() < 0.5:
            options["max_tokens"] = max(lengths) * rng.randint(1, 6)
        try:
            expected = _one_step_epoch(lengths, dp_size, grad_accum, **options)
        except ValueError:
            with pytest.raises(ValueError, match="max_tokens"):
                plan_batch(lengths, dp_size=dp_size, grad_accum=grad_accum, **options)
            continue
        plan = plan_batch(lengths, dp_size=dp_size, grad_accum=grad_accum, **options)
        assert plan == expected
        assert len(plan) == dp_size and all(len(rank) == grad_accum for rank in plan)
        positions = sorted(i for rank in plan for mb in rank for i in mb)
        assert positions == list(range(len(lengths)))
        cap = options.get("max_tokens")
        for mb in (mb for rank in plan for mb in rank):
            assert mb, "an empty micro-batch"
            tokens = (sum(lengths[i] for i in mb) if packed
                      else len(mb) * max(lengths[i] for i in mb))
            assert cap is None or tokens <= cap


def test_cost_model_plans_as_its_alpha_says():
    rng = random.Random(3)
    lengths = _random_batch(rng, 8)
    model = CostModel(0.05, 3.0)
    assert (plan_batch(lengths, dp_size=4, grad_accum=2, cost_model=model)
            == _one_step_epoch(lengths, 4, 2, alpha=0.05, intercept=3.0))


def test_deterministic_across_processes():
    lengths = _random_batch(random.Random(11), 6)
    code = ("import brs, sys; print(brs.plan_batch(%r, dp_size=3, grad_accum=2, "
            "max_tokens=%d))" % (lengths, 4 * max(lengths)))
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=dict(os.environ, PYTHONHASHSEED=str(seed))).stdout
            for seed in (1, 2)}
    assert runs == {repr(plan_batch(lengths, dp_size=3, grad_accum=2,
                                    max_tokens=4 * max(lengths))) + "\n"}


def test_errors_name_what_would_do():
    with pytest.raises(ValueError, match=r"at least 4 samples"):
        plan_batch([5, 6], dp_size=2, grad_accum=2)
    with pytest.raises(ValueError, match="empty"):
        plan_batch([], dp_size=2)
    with pytest.raises(ValueError, match=r"the longest sample, lengths\[1\], has 50 tokens.*"
                                         r"raise max_tokens to 150 \(the least that plans the "
                                         r"whole batch"):
        plan_batch([3, 50, 4], dp_size=1, max_tokens=40)
    # 100 | 90 | 80 | 10 9 8 7 6 within 100 tokens takes 4 micro-batches; 2 need 300 tokens
    with pytest.raises(ValueError, match=r"at least 4 micro-batches.*max_tokens to 300"):
        plan_batch([100, 90, 80, 10, 9, 8, 7, 6], dp_size=2, max_tokens=100)
    assert plan_batch([100, 90, 80, 10, 9, 8, 7, 6], dp_size=2, max_tokens=300)
    with pytest.raises(ValueError, match="dp_size"):
        plan_batch([1, 2, 3], dp_size=0)
    with pytest.raises(TypeError):
        plan_batch([1, 2, 3], dp_size=1, packed="yes")


def test_exported():
    assert brs.plan_batch is plan_batch and "plan_batch" in brs.__all__


# -- grad_accum="auto": the least micro-steps that meet the cap ---------------------------------

def _rollouts(n, seed):
    import random

    draw = random.Random(seed)
    return [draw.randint(16, 2000) for _ in range(n)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("packed", [False, True])
def test_auto_takes_the_least_grad_accum_that_meets_the_cap(seed, packed):
    lengths, dp_size, cap = _rollouts(96, seed), 4, 4096
    plan = brs.plan_batch(lengths, dp_size=dp_size, grad_accum="auto", max_tokens=cap,
                          packed=packed)
    g = plan.grad_accum
    assert plan.dp_size == dp_size and all(len(rank) == g for rank in plan)
    assert sorted(i for rank in plan for mb in rank for i in mb) == list(range(len(lengths)))
    for rank in plan:
        for mb in rank:
            assert mb, "no empty micro-batch"
            tokens = sum(lengths[i] for i in mb) if packed else len(mb) * max(
                lengths[i] for i in mb)
            assert tokens <= cap
    # it is the plan of that grad_accum, and one micro-step fewer does not meet the cap
    assert plan == brs.plan_batch(lengths, dp_size=dp_size, grad_accum=g, max_tokens=cap,
                                  packed=packed)
    if g > 1:
        with pytest.raises(ValueError, match="max_tokens"):
            brs.plan_batch(lengths, dp_size=dp_size, grad_accum=g - 1, max_tokens=cap,
                           packed=packed)


def test_a_sample_over_the_cap_names_the_longest_and_the_least_cap():
    lengths = _rollouts(64, 9)
    lengths[5], lengths[40] = 2600, 3100  # the first over 2048 is not the longest
    with pytest.raises(ValueError) as refused:
        brs.plan_batch(lengths, dp_size=4, grad_accum="auto", max_tokens=2048)
    message = str(refused.value)
    assert "lengths[40], has 3100 tokens" in message and "lengths[5]" not in message
    least = int(re.search(r"max_tokens to (\d+) \(the least that plans the whole batch",
                          message).group(1))
    plan = brs.plan_batch(lengths, dp_size=4, grad_accum="auto", max_tokens=least)
    with pytest.raises(ValueError):
        brs.plan_batch(lengths, dp_size=4, grad_accum="auto", max_tokens=least - 1)
    # with a grad_accum given, the least cap for that many micro-batches
    with pytest.raises(ValueError) as fixed:
        brs.plan_batch(lengths, dp_size=4, grad_accum=2, max_tokens=2048)
    least = int(re.search(r"max_tokens to (\d+) \(the least", str(fixed.value)).group(1))
    brs.plan_batch(lengths, dp_size=4, grad_accum=2, max_tokens=least)
    with pytest.raises(ValueError):
        brs.plan_batch(lengths, dp_size=4, grad_accum=2, max_tokens=least - 1)


def test_auto_needs_a_cap_and_takes_only_auto():
    with pytest.raises(ValueError, match="needs max_tokens"):
        brs.plan_batch(_rollouts(16, 1), dp_size=2, grad_accum="auto")
    with pytest.raises(ValueError, match='"auto"'):
        brs.plan_batch(_rollouts(16, 1), dp_size=2, grad_accum="most", max_tokens=4096)
