"""BatchRebalanceSampler as torch code sees it: a torch.utils.data.Sampler when torch is there,
the same sampler without torch, the ``.sampler`` that frameworks call ``set_epoch`` on, and the
arguments of ``from_upstream_args`` (its agreement with upstream:
integrations/test_upstream_args.py).
"""

import gc
import json
import weakref

import pytest

from brs import BatchRebalanceSampler
from brs_testing import random_lengths, run_python

LENGTHS = random_lengths(60, seed=5, high=300)


def _sampler(**kw):
    return BatchRebalanceSampler(LENGTHS, **{"per_device_batch_size": 3, "grad_accum": 2,
                                            "dp_size": 2, "rank": 0, "seed": 9, **kw})


def test_is_a_torch_sampler_where_torch_is_installed():
    torch = pytest.importorskip("torch")
    assert isinstance(_sampler(), torch.utils.data.Sampler)


# A child process in which `import torch` fails, as it does where torch is not installed.
WITHOUT_TORCH = """
import json, sys
sys.modules["torch"] = None
import brs
lengths = [int(v) for v in sys.argv[1].split(",")]
sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=3, grad_accum=2, dp_size=1,
                                    rank=0, seed=9)
sampler.sampler.set_epoch(1)
print(json.dumps({"bases": [c.__name__ for c in type(sampler).__mro__],
                  "epoch": sampler.epoch, "batches": list(sampler),
                  "torch_loaded": sys.modules["torch"] is not None}))
"""


def test_imports_and_plans_without_torch():
    lengths = LENGTHS[:24]
    done = run_python(["-c", WITHOUT_TORCH, ",".join(map(str, lengths))])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["bases"] == ["BatchRebalanceSampler", "object"]
    assert not result["torch_loaded"]
    expected = BatchRebalanceSampler(lengths, per_device_batch_size=3, grad_accum=2, dp_size=1,
                                     rank=0, seed=9)
    expected.set_epoch(1)
    assert result["epoch"] == 1
    assert result["batches"] == list(expected)
    assert sorted(i for batch in result["batches"] for i in batch) == list(range(len(lengths)))


def test_set_epoch_through_dot_sampler_reshuffles():
    sampler = _sampler()
    epoch0 = list(sampler)
    sampler.sampler.set_epoch(1)  # what Lightning calls: dataloader.batch_sampler.sampler
    assert (sampler.epoch, sampler.sampler.epoch) == (1, 1)
    epoch1 = list(sampler)
    assert epoch1 != epoch0
    reference = _sampler()
    reference.set_epoch(1)
    assert epoch1 == list(reference)


def test_dot_sampler_ends_a_walk_down_sampler_links_and_makes_no_cycle():
    sampler = _sampler()
    assert not hasattr(sampler.sampler, "sampler")
    forwarder = sampler.sampler
    alive = weakref.ref(sampler)
    gc.disable()
    try:
        del sampler
        assert alive() is not None, "the forwarder keeps its sampler alive while it is used"
        del forwarder
        assert alive() is None, "freed by its reference count, not by the cycle collector"
    finally:
        gc.enable()


# -- from_upstream_args: arguments ------------------------------------------------------------

def test_from_upstream_args_splits_the_global_batch_over_ranks_and_micro_steps():
    sampler = BatchRebalanceSampler.from_upstream_args(LENGTHS, 12, 2, 3, rank=1)
    assert (sampler.per_device_batch_size, sampler.dp_size, sampler.grad_accum,
            sampler.rank) == (2, 2, 3, 1)
    assert sampler.effective_batch_size == 12


@pytest.mark.parametrize("effective, dp_size, grad_accum, works", [
    (10, 2, 2, "effective_batch_size=8 or 12"),
    (3, 2, 2, "effective_batch_size=4,"),
    (7, 1, 3, "effective_batch_size=6 or 9"),
])
def test_an_indivisible_global_batch_says_what_to_pass(effective, dp_size, grad_accum, works):
    with pytest.raises(ValueError, match=(
            rf"effective_batch_size={effective} is not a multiple of dp_size x grad_accum = "
            rf"{dp_size} x {grad_accum} = {dp_size * grad_accum}: .*pass {works}")):
        BatchRebalanceSampler.from_upstream_args(LENGTHS, effective, dp_size, grad_accum, rank=0)


@pytest.mark.parametrize("name, value, error", [
    ("effective_batch_size", 8.0, TypeError),
    ("effective_batch_size", 0, ValueError),
    ("dp_size", "2", TypeError),
    ("grad_accum", 0, ValueError),
])
def test_bad_upstream_arguments_name_the_argument(name, value, error):
    arguments = {"effective_batch_size": 8, "dp_size": 2, "grad_accum": 2, name: value}
    with pytest.raises(error, match=name):
        BatchRebalanceSampler.from_upstream_args(LENGTHS, rank=0, **arguments)


def test_from_upstream_args_passes_brs_options_on():
    sampler = BatchRebalanceSampler.from_upstream_args(LENGTHS, 8, 2, 2, rank=0, sync="step",
                                                       max_tokens=4000, alpha=0.01)
    assert (sampler.sync, sampler.max_tokens, sampler.alpha) == ("step", 4000, 0.01)
