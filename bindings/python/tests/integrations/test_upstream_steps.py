"""brs against upstream transformers' own `BatchRebalanceSampler._assign` on the same samples, with
several ranks and micro-steps, under both sync models (docs/algorithm.md, "Objective").

Upstream's plan is priced by its own cost model (bs*L + 0.001*bs*L^2, which is brs's at alpha
0.001 and no intercept) and its own deal of groups to (rank, micro-step). brs plans the same
samples twice: by default, where upstream may only be faster by using more peak memory, and with
max_tokens = upstream's peak, where it may not be faster at all.
"""

import zlib

import numpy as np
import pytest

from brs import BatchRebalanceSampler, peers

upstream_module = pytest.importorskip("transformers.trainer_pt_utils")
if not hasattr(upstream_module, "BatchRebalanceSampler"):
    pytest.skip("this transformers has no BatchRebalanceSampler", allow_module_level=True)
Upstream = upstream_module.BatchRebalanceSampler

# dp x grad_accum x per-device batch: K from 4 to 32, a few samples per micro-batch.
LAYOUTS = [(2, 2, 4), (4, 2, 4), (3, 3, 3), (8, 4, 2), (2, 4, 6)]
STEPS_PER_CASE = 40


def random_step(rng, distribution, n):
    if distribution == "lognormal":  # upstream's own benchmark distribution
        return np.clip(np.rint(np.exp(rng.normal(5.0, 1.0, n))), 16, 1024).astype(np.uint32)
    if distribution == "bimodal":
        short = rng.integers(8, 64, n)
        return np.where(rng.random(n) < 0.2, rng.integers(512, 4096, n), short).astype(np.uint32)
    return rng.integers(1, 2048, n).astype(np.uint32)


def upstream_times(lengths, dp, ga):
    """Upstream's plan of these samples: (micro-step sync time, step sync time, peak tokens)."""
    sampler = Upstream(lengths.tolist(), effective_batch_size=len(lengths), dp_size=dp,
                       grad_accum=ga, shuffle=False)
    plan = peers.assign(sampler, list(range(len(lengths))), lengths.tolist())

    def cost(group):
        return sampler._cost(len(group), max(int(lengths[i]) for i in group))

    micro = sum(max(cost(plan[r][m]) for r in range(dp)) for m in range(ga))
    step = max(sum(cost(plan[r][m]) for m in range(ga)) for r in range(dp))
    peak = max(len(g) * max(int(lengths[i]) for i in g) for rank in plan for g in rank)
    return micro, step, peak


def brs_plan(lengths, dp, ga, per_device, sync, max_tokens=None):
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=per_device, dp_size=dp,
                                    grad_accum=ga, rank=0, shuffle=False, sync=sync,
                                    alpha=0.001, intercept=0.0, max_tokens=max_tokens)
    return sampler.plan(0)


@pytest.mark.parametrize("sync", ["micro_step", "step"])
@pytest.mark.parametrize("distribution", ["lognormal", "bimodal", "uniform"])
def test_upstream_is_never_faster_at_no_more_memory(sync, distribution):
    rng = np.random.default_rng(zlib.crc32(f"{sync} {distribution}".encode()))
    faster, capped_slower = [], []
    for dp, ga, per_device in LAYOUTS:
        for step in range(STEPS_PER_CASE):
            lengths = random_step(rng, distribution, dp * ga * per_device)
            micro, whole, peak = upstream_times(lengths, dp, ga)
            theirs = micro if sync == "micro_step" else whole
            plan = brs_plan(lengths, dp, ga, per_device, sync)
            ours = plan.micro_sync_time if sync == "micro_step" else plan.step_sync_time
            if theirs < ours * (1 - 1e-9) and peak <= plan.max_padded_tokens:
                faster.append((dp, ga, step, ours / theirs))
            capped = brs_plan(lengths, dp, ga, per_device, sync, max_tokens=peak)
            assert capped.max_padded_tokens <= peak
            ours = capped.micro_sync_time if sync == "micro_step" else capped.step_sync_time
            if ours > theirs * (1 + 1e-9):
                capped_slower.append((dp, ga, step, ours / theirs))
            assert ours >= capped.time_lower_bound * (1 - 1e-9)
    assert not faster, f"upstream faster at no more peak memory (dp, ga, step, brs/upstream): {faster}"
    assert not capped_slower, f"brs slower at upstream's peak (dp, ga, step, ratio): {capped_slower}"
