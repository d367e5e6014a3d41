"""The committed golden vectors (tests/vectors/*.json, format in its README.md), reproduced;
and those of tests/vectors/shapes (max_shapes, sync), with their shape vocabulary."""

import json

import pytest

from brs import BatchRebalanceSampler
from brs_testing import VECTORS

FILES = sorted(VECTORS.glob("*.json")) if VECTORS.is_dir() else []
SHAPE_FILES = sorted((VECTORS / "shapes").glob("*.json"))


def _sampler(vector):
    o = vector["options"]
    # max_shapes and sync are in the options of the shapes/ vectors only (sync only when set)
    shapes = {key: o[key] for key in ("max_shapes", "sync") if key in o}
    return BatchRebalanceSampler(
        vector["lengths"], per_device_batch_size=o["batch_size"], grad_accum=o["grad_accum"],
        dp_size=o["dp_size"], rank=0, seed=o["seed"], shuffle=bool(o["shuffle"]),
        drop_last=bool(o["drop_last"]), alpha=o["alpha"], intercept=o["intercept"],
        max_tokens=o["max_tokens"] or None, packed=bool(o["packed"]),
        pad_to_multiple_of=o.get("pad_to_multiple_of"), length_buckets=o.get("length_buckets"),
        **shapes)


def _check_plans(sampler, vector):
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


@pytest.mark.skipif(not FILES, reason="no golden vectors committed yet")
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_vector(path):
    vector = json.loads(path.read_text())
    _check_plans(_sampler(vector), vector)


@pytest.mark.skipif(not SHAPE_FILES, reason="no shape vectors in tests/vectors/shapes")
@pytest.mark.parametrize("path", SHAPE_FILES, ids=[p.stem for p in SHAPE_FILES])
def test_shape_vector(path):
    vector = json.loads(path.read_text())
    sampler = _sampler(vector)
    assert sampler.max_shapes == vector["options"]["max_shapes"]
    vocabulary = [tuple(pair) for pair in vector["vocabulary"]]
    assert sampler.shape_vocabulary() == vocabulary
    _check_plans(sampler, vector)
    for expected in vector["plans"]:  # every micro-batch has a shape of the vocabulary
        for rank in expected["micro_batches"]:
            for mb in rank:
                size = len(mb["indices"])
                assert (size, mb["padded_tokens"] // size) in vocabulary
