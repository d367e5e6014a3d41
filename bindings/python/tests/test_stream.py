"""brs.RebalancedStream: windows of a stream, planned and shared out like epoch steps.

Over all ranks every item appears once per pass (the top-up of a short last step only adds
repeats), every rank yields the same number of micro-batches, a resume inside a window yields
exactly what the uninterrupted run would have, and another process yields the same.
"""

import collections
import os
import random
import subprocess
import sys

import pytest

from brs import RebalancedStream

ITEMS = [{"id": i, "n": 1 + (i * 7919) % 97 + (300 if i % 13 == 0 else 0)} for i in range(203)]


def _length(item):
    return item["n"]


def _streams(items, dp_size=2, **options):
    options = {"per_device_batch_size": 3, "grad_accum": 2, "window_steps": 4, **options}
    return [RebalancedStream(items, length=_length, dp_size=dp_size, rank=rank, **options)
            for rank in range(dp_size)]


def _ids(batches):
    return [[item["id"] for item in batch] for batch in batches]


@pytest.mark.parametrize("count", [203, 192, 24 * 3 + 5, 1])
def test_every_item_once_and_equal_counts(count):
    items = ITEMS[:count]
    runs = [_ids(stream) for stream in _streams(items)]
    assert len({len(run) for run in runs}) == 1, "ranks yield different micro-step counts"
    seen = collections.Counter(i for run in runs for batch in run for i in batch)
    assert set(seen) == set(range(count))
    # repeats come only from topping a short last step up to dp_size x grad_accum = 4 items
    repeats = sum(seen.values()) - count
    assert repeats == (4 - count % 12 if 0 < count % 12 < 4 else 0)
    assert all(batch for run in runs for batch in run), "an empty micro-batch"


def test_drop_last_drops_exactly_the_partial_step():
    runs = [_ids(stream) for stream in _streams(ITEMS, drop_last=True)]
    seen = [i for run in runs for batch in run for i in batch]
    assert len(seen) == len(set(seen)) == len(ITEMS) // 12 * 12
    assert len({len(run) for run in runs}) == 1


def test_items_shuffled_within_their_window_only():
    runs = [_ids(stream) for stream in _streams(ITEMS)]
    window = 4 * 12
    for rank_run in runs:
        # micro-batches of window w (4 steps x 2 micro-steps each) hold items of window w
        for position, batch in enumerate(rank_run):
            assert {i // window for i in batch} == {position // 8}
    first = sorted(i for run in runs for batch in run[:2] for i in batch)
    assert first != list(range(12)), "the first step is the stream's first items, unshuffled"
    other_seed = [_ids(stream) for stream in _streams(ITEMS, seed=1)]
    assert other_seed != runs


def test_cap_respected():
    for stream in _streams(ITEMS, max_tokens=1200):
        for batch in stream:
            assert len(batch) * max(map(_length, batch)) <= 1200


@pytest.mark.parametrize("taken", [1, 5, 8, 9, 30])
def test_resume_mid_window_equals_uninterrupted(taken):
    for rank, stream in enumerate(_streams(ITEMS)):
        full = _ids(stream)
        iterator = iter(stream)
        head = _ids(next(iterator) for _ in range(taken))
        state = stream.state_dict()
        resumed = _streams(ITEMS)[rank]
        resumed.load_state_dict(state)
        assert head + _ids(resumed) == full
        # the pass ended: the next one starts from the beginning again
        assert _ids(resumed) == full


def test_load_state_dict_refuses_other_options():
    stream, = _streams(ITEMS, dp_size=1)
    other, = _streams(ITEMS, dp_size=1, window_steps=2)
    with pytest.raises(ValueError, match="window_steps"):
        other.load_state_dict(stream.state_dict())


def test_deterministic_across_processes():
    code = ("import brs\n"
            "items = [1 + (i * 37) % 211 for i in range(150)]\n"
            "s = brs.RebalancedStream(items, length=int, per_device_batch_size=2, dp_size=3, "
            "rank=1, grad_accum=2, window_steps=3, seed=5)\n"
            "print(list(s))\n")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env=dict(os.environ, PYTHONHASHSEED=str(seed))).stdout
               for seed in (0, 1)}
    assert len(outputs) == 1
    items = [1 + (i * 37) % 211 for i in range(150)]
    here = RebalancedStream(items, length=int, per_device_batch_size=2, dp_size=3, rank=1,
                            grad_accum=2, window_steps=3, seed=5)
    assert outputs == {repr(list(here)) + "\n"}


def test_reads_a_generator_once_per_window():
    reads = []

    def generate():
        for item in ITEMS:
            reads.append(item["id"])
            yield item

    class Replayable:
        def __iter__(self):
            return generate()

    stream = RebalancedStream(Replayable(), length=_length, per_device_batch_size=3, dp_size=2,
                              rank=0, grad_accum=2, window_steps=4)
    iterator = iter(stream)
    next(iterator)
    assert len(reads) == 48, "the first micro-batch needs the first window, no more"


def test_bad_arguments():
    with pytest.raises(TypeError, match="length"):
        RebalancedStream(ITEMS, length=3, per_device_batch_size=2, dp_size=1, rank=0)
    with pytest.raises(ValueError, match="rank"):
        RebalancedStream(ITEMS, length=_length, per_device_batch_size=2, dp_size=2, rank=2)
    with pytest.raises(ValueError, match="window_steps"):
        RebalancedStream(ITEMS, length=_length, per_device_batch_size=2, dp_size=1, rank=0,
                         window_steps=0)
    stream = RebalancedStream(ITEMS, length=lambda item: 0, per_device_batch_size=2, dp_size=1,
                              rank=0)
    with pytest.raises(ValueError, match="0"):
        next(iter(stream))


def test_topology_from_the_job_read_at_first_iteration(job_env, monkeypatch):
    options = dict(length=_length, per_device_batch_size=3, grad_accum=2, window_steps=4)
    stream = RebalancedStream(ITEMS, **options)  # before the job is there
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    explicit = RebalancedStream(ITEMS, dp_size=2, rank=1, **options)
    assert _ids(stream) == _ids(explicit)
    assert (stream.dp_size, stream.rank) == (2, 1)
