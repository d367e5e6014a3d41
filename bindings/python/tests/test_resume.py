"""Exact resume: a fresh process yields exactly the rest of the interrupted stream."""

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("torchdata")

from brs import BatchRebalanceSampler  # noqa: E402
from brs_testing import TESTS, random_lengths, run_python  # noqa: E402

import resume_worker  # noqa: E402

pytestmark = pytest.mark.distributed  # scripts/soak-distributed runs these


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("resume")
    for run in ("first", "second"):
        done = run_python([str(TESTS / "resume_worker.py"), run, str(out)], timeout=300)
        assert done.returncode == 0, (f"{run} run failed with exit code {done.returncode}:\n"
                                      f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    return out


def _uninterrupted():
    sampler = resume_worker.make_sampler()
    stream = []
    for epoch in range(resume_worker.EPOCHS):
        sampler.set_epoch(epoch)
        stream.extend(sampler)
    return stream


@pytest.mark.parametrize("case", resume_worker.CASES)
def test_resumed_stream_is_exactly_the_rest(runs, case):
    before = json.loads((runs / f"{case}.first.json").read_text())
    after = json.loads((runs / f"{case}.second.json").read_text())
    full = _uninterrupted()
    epoch0 = len(full) // resume_worker.EPOCHS
    expected_cut = epoch0 + 5 if case.endswith("mid") else epoch0
    assert len(before) == expected_cut
    assert before + after == full


def test_state_dict_is_the_next_micro_batch_and_resumes_in_o1():
    lengths = random_lengths(300, seed=5)
    make = lambda: BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=3,  # noqa
                                         dp_size=2, rank=0, seed=2)
    sampler = make()
    sampler.set_epoch(3)
    it = iter(sampler)
    head = [next(it) for _ in range(7)]
    state = sampler.state_dict()
    assert (state["epoch"], state["step"], state["micro"], state["version"]) == (3, 2, 1, 1)
    assert state["fingerprint"] == sampler.fingerprint
    resumed = make()
    resumed.load_state_dict(state)
    resumed.set_epoch(3)  # the same epoch keeps the loaded position
    assert list(resumed) == list(it)
    assert len(list(resumed)) == len(sampler), "the next iteration starts the epoch again"
    assert head


def test_end_of_epoch_state_and_set_epoch_discards_a_stale_position():
    sampler = BatchRebalanceSampler(random_lengths(100, seed=6), per_device_batch_size=4,
                                    dp_size=1)
    list(sampler)
    end = sampler.state_dict()
    assert (end["step"], end["micro"]) == (sampler.steps_per_epoch, 0)
    sampler.load_state_dict(end)
    assert list(sampler) == []
    assert list(sampler) == [], "a loaded end of epoch holds until set_epoch moves on"
    sampler.set_epoch(0)
    assert list(sampler) == []
    sampler.load_state_dict({**end, "step": 1})
    sampler.set_epoch(1)
    assert len(list(sampler)) == len(sampler)


def test_load_state_dict_rejects_another_configuration_and_bad_positions():
    lengths = random_lengths(100, seed=7)
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=4, dp_size=1)
    state = sampler.state_dict()
    other = BatchRebalanceSampler(lengths, per_device_batch_size=4, dp_size=1, seed=1)
    with pytest.raises(ValueError, match="fingerprint"):
        other.load_state_dict(state)
    with pytest.raises(ValueError, match="outside"):
        sampler.load_state_dict({**state, "step": sampler.steps_per_epoch + 1})
    with pytest.raises(ValueError, match="version"):
        sampler.load_state_dict({**state, "version": 2})
    with pytest.raises(ValueError, match="lacks"):
        sampler.load_state_dict({"epoch": 0})
    with pytest.raises(ValueError, match="consumed"):
        sampler.state_dict(consumed=len(sampler) + 1)
