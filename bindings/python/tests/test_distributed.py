"""Rank / world detection: explicit > accelerate > torch.distributed > RANK/WORLD_SIZE > 1/0."""

import sys
import types

import pytest

from brs import BatchRebalanceSampler, distributed
from brs_testing import random_lengths, run_python

pytestmark = pytest.mark.distributed  # scripts/soak-distributed runs these

LENGTHS = random_lengths(256, seed=3)


@pytest.fixture
def clean_env(job_env):
    return job_env


def _fake_accelerate(monkeypatch, shared_state, processes=4, index=3):
    class PartialState:
        _shared_state = shared_state
        num_processes = processes
        process_index = index

    module = types.ModuleType("accelerate.state")
    module.PartialState = PartialState
    monkeypatch.setitem(sys.modules, "accelerate.state", module)


def test_default_is_a_single_process(clean_env):
    assert distributed.detect()[:2] == (1, 0)
    s = BatchRebalanceSampler(LENGTHS, per_device_batch_size=4)
    assert (s.dp_size, s.rank) == (1, 0)


def test_environment_is_read(clean_env):
    clean_env.setenv("RANK", "2")
    clean_env.setenv("WORLD_SIZE", "4")
    s = BatchRebalanceSampler(LENGTHS, per_device_batch_size=4)
    assert (s.dp_size, s.rank) == (4, 2)


def test_explicit_arguments_win(clean_env):
    clean_env.setenv("RANK", "2")
    clean_env.setenv("WORLD_SIZE", "4")
    s = BatchRebalanceSampler(LENGTHS, per_device_batch_size=4, dp_size=2, rank=1)
    assert (s.dp_size, s.rank) == (2, 1)
    s = BatchRebalanceSampler(LENGTHS, per_device_batch_size=4, dp_size=8)
    assert (s.dp_size, s.rank) == (8, 2), "an explicit dp_size keeps the detected rank"


def test_bad_environment_says_what_to_fix(clean_env):
    clean_env.setenv("RANK", "x")
    clean_env.setenv("WORLD_SIZE", "4")
    with pytest.raises(ValueError, match="RANK"):
        BatchRebalanceSampler(LENGTHS, per_device_batch_size=4)


def test_initialised_accelerate_wins_over_the_environment(clean_env):
    clean_env.setenv("RANK", "0")
    clean_env.setenv("WORLD_SIZE", "2")
    _fake_accelerate(clean_env, {"initialised": True})
    assert distributed.detect() == (4, 3, "accelerate PartialState")


def test_uninitialised_accelerate_is_skipped(clean_env):
    clean_env.setenv("RANK", "1")
    clean_env.setenv("WORLD_SIZE", "2")
    _fake_accelerate(clean_env, {})
    assert distributed.detect()[:2] == (2, 1)


def test_detection_waits_for_the_first_iteration(clean_env):
    s = BatchRebalanceSampler(LENGTHS, per_device_batch_size=4, grad_accum=2)
    assert s.dp_size == 1
    clean_env.setenv("RANK", "1")  # as if the process group came up after construction
    clean_env.setenv("WORLD_SIZE", "2")
    first = next(iter(s))
    assert (s.dp_size, s.rank) == (2, 1)
    assert first == s.plan(0).micro_batches[1][0].indices
    clean_env.setenv("WORLD_SIZE", "4")
    assert s.dp_size == 2, "fixed from the first iteration on"
    assert len(s) == s.steps_per_epoch * 2


TORCH_WINS = """
import os, tempfile, torch.distributed as dist
from brs import distributed
os.environ.update(RANK="1", WORLD_SIZE="2")
store = tempfile.mktemp()
dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
try:
    print(distributed.detect())
finally:
    dist.destroy_process_group()
"""


def test_initialised_torch_distributed_wins_over_the_environment():
    pytest.importorskip("torch")
    done = run_python(["-c", TORCH_WINS])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 0, 'torch.distributed')"
