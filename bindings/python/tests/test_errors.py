"""Bad input raises ValueError / TypeError with a message that says what to change."""

import re

import pytest

import brs
from brs import BatchRebalanceSampler, BrsError
from brs import _errors, _native
from brs_testing import random_lengths

LENGTHS = random_lengths(200, seed=1, low=10, high=500)


def make(lengths=LENGTHS, **kw):
    kw.setdefault("per_device_batch_size", 8)
    kw.setdefault("dp_size", 1)
    return BatchRebalanceSampler(lengths, **kw)


def test_fewer_samples_than_micro_batches():
    with pytest.raises(ValueError, match=r"drop_last") as info:
        make(LENGTHS[:10], dp_size=4, grad_accum=2)
    assert "10" in str(info.value)


@pytest.mark.parametrize("lengths, index", [([5, 0, 3], 1), ([5, 4, -3], 2)])
def test_zero_or_negative_length_names_the_index(lengths, index):
    with pytest.raises(ValueError, match=rf"lengths\[{index}\]"):
        make(lengths, per_device_batch_size=1)


def test_zero_length_in_a_borrowed_numpy_array_names_the_index():
    np = pytest.importorskip("numpy")
    a = np.array([4, 5, 6, 0, 2], dtype=np.uint32)
    with pytest.raises(ValueError, match=r"\b3\b"):
        make(a, per_device_batch_size=1)


@pytest.mark.parametrize("bad", [[1, 2.5, 3], [1, "2", 3], [1, None]])
def test_non_integer_length(bad):
    with pytest.raises(TypeError, match=r"lengths\[1\]"):
        make(bad, per_device_batch_size=1)


def test_non_sequence_lengths():
    with pytest.raises(TypeError, match="sequence"):
        make("123", per_device_batch_size=1)
    with pytest.raises(ValueError, match="empty"):
        make([], per_device_batch_size=1)


@pytest.mark.parametrize("name", ["per_device_batch_size", "grad_accum", "dp_size"])
def test_counts_below_one(name):
    with pytest.raises(ValueError, match=name):
        make(**{name: 0})


@pytest.mark.parametrize("name, value", [("per_device_batch_size", 2.0), ("grad_accum", "2"),
                                         ("seed", 1.5), ("shuffle", "yes"), ("alpha", "0.1"),
                                         ("dp_size", True)])
def test_wrong_argument_types(name, value):
    with pytest.raises(TypeError, match=name):
        make(**{name: value})


def test_rank_out_of_range():
    with pytest.raises(ValueError, match=r"rank 2.*dp_size 2"):
        make(dp_size=2, rank=2)
    with pytest.raises(ValueError, match="rank"):
        make(dp_size=2, rank=-1)


def test_rank_from_the_environment_out_of_range(job_env):
    monkeypatch = job_env
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    with pytest.raises(ValueError, match=r"rank 3 \(from RANK/WORLD_SIZE"):
        BatchRebalanceSampler(LENGTHS, per_device_batch_size=2, dp_size=2)


def test_max_tokens_below_the_longest_sample():
    with pytest.raises(ValueError, match="max_tokens") as info:
        make([10, 700, 20, 30], per_device_batch_size=1, max_tokens=500)
    assert "700" in str(info.value)
    with pytest.raises(ValueError, match="max_tokens"):
        make(max_tokens=-1)
    # 0 is the library's "no cap" (its default), not an error
    assert make(max_tokens=0).fingerprint == make().fingerprint


def test_unsatisfiable_cap_reports_the_minimum_micro_batch_count():
    lengths = [100] * 64
    # 16 x 100 needs 4 groups: refused at construction, before any step is planned
    with pytest.raises(ValueError, match="max_tokens") as info:
        make(lengths, per_device_batch_size=16, max_tokens=400)
    assert re.search(r"\b4\b micro-batches", str(info.value))
    assert re.search(r"\b1600\b", str(info.value))  # one micro-batch of 16 x 100


def test_alpha_out_of_bounds_and_nan():
    with pytest.raises(ValueError, match="alpha|out of range"):
        make(alpha=-1.0)
    with pytest.raises(ValueError, match="NaN"):
        make(alpha=float("nan"))


def test_plan_step_out_of_range():
    s = make()
    with pytest.raises(ValueError):
        s.plan(s.steps_per_epoch)
    with pytest.raises(ValueError, match="step"):
        s.plan(-1)
    with pytest.raises(ValueError, match="epoch"):
        s.set_epoch(-1)


def test_library_failures_that_are_not_argument_errors_are_brs_errors():
    exc = _errors.error_for(_native.ERR_STATE, "no plan computed")
    assert isinstance(exc, BrsError) and isinstance(exc, RuntimeError)
    assert exc.status == _native.ERR_STATE
    assert "no plan computed" in str(exc) and _errors.strerror(_native.ERR_STATE) in str(exc)
    assert isinstance(_errors.error_for(_native.ERR_NO_MEMORY), MemoryError)
    value_error = _errors.error_for(_native.ERR_OUT_OF_RANGE, "detail")
    assert isinstance(value_error, ValueError) and value_error.status == _native.ERR_OUT_OF_RANGE


def test_brs_error_is_exported():
    assert brs.BrsError is BrsError
