"""The committed golden vectors (tests/vectors/*.json, format in its README.md), reproduced."""

import json

import pytest

from brs import BatchRebalanceSampler
from brs_testing import VECTORS

FILES = sorted(VECTORS.glob("*.json")) if VECTORS.is_dir() else []


def _sampler(vector):
    o = vector["options"]
    return BatchRebalanceSampler(
        vector["lengths"], per_device_batch_size=o["batch_size"], grad_accum=o["grad_accum"],
        dp_size=o["dp_size"], rank=0, seed=o["seed"], shuffle=bool(o["shuffle"]),
        drop_last=bool(o["drop_last"]), alpha=o["alpha"], intercept=o["intercept"],
        max_tokens=o["max_tokens"] or None, packed=bool(o["packed"]),
        pad_to_multiple_of=o.get("pad_to_multiple_of"), length_buckets=o.get("length_buckets"))


@pytest.mark.skipif(not FILES, reason="no golden vectors committed yet")
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_vector(path):
    vector = json.loads(path.read_text())
    sampler = _sampler(vector)
    assert sampler.fingerprint == vector["fingerprint"]
    assert sampler.steps_per_epoch == vector["steps_per_epoch"]
    for expected in vector["plans"]:
        plan = sampler.plan(expected["step"], epoch=expected["epoch"])
        assert plan.max_cost == expected["max_cost"]  # exact: the file holds %.17g doubles
        assert plan.lower_bound == expected["lower_bound"]
        got = [[{"indices": mb.indices, "padded_tokens": mb.padded_tokens,
                 "real_tokens": mb.real_tokens, "cost": mb.cost} for mb in rank]
               for rank in plan.micro_batches]
        assert got == expected["micro_batches"]
