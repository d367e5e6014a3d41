"""lengths as list, tuple, range, numpy array and torch tensor; zero-copy where documented."""

import array
import subprocess
import sys

import pytest

from brs import BatchRebalanceSampler
from brs_testing import child_env, random_lengths

np = pytest.importorskip("numpy")

LENGTHS = random_lengths(300, seed=2, high=900)


def stream(lengths, **kw):
    return list(BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=2, dp_size=2,
                                      rank=1, **kw))


@pytest.mark.parametrize("convert", [
    tuple, lambda v: array.array("I", v), lambda v: np.array(v, dtype=np.uint32),
    lambda v: np.array(v, dtype=np.int64), lambda v: np.array(v, dtype=np.int16),
    lambda v: np.array(v, dtype=np.uint64), lambda v: [np.int32(x) for x in v],
    lambda v: np.repeat(np.array(v, dtype=np.uint32), 2)[::2],  # not contiguous: copied
])
def test_every_input_type_plans_like_a_list(convert):
    assert stream(convert(LENGTHS)) == stream(LENGTHS)


def test_range_input():
    assert stream(range(1, 301)) == stream(list(range(1, 301)))


def test_contiguous_uint32_numpy_is_borrowed_without_a_copy():
    a = np.array(LENGTHS, dtype=np.uint32)
    s = BatchRebalanceSampler(a, per_device_batch_size=4, dp_size=1)
    assert s.lengths is a
    assert np.shares_memory(s.lengths, a)


def test_borrowed_array_is_read_in_place_by_the_planner():
    # The documented borrow semantics: the planner reads the caller's memory, so a change made
    # after construction shows in the plans (and the fingerprint, computed once, does not see it).
    a = np.array(LENGTHS, dtype=np.uint32)
    s = BatchRebalanceSampler(a, per_device_batch_size=4, dp_size=1, shuffle=False)
    before, fingerprint = s.plan(0), s.fingerprint
    a[:4] = [800, 1, 1, 1]
    after = s.plan(0)
    assert after.total_real_tokens != before.total_real_tokens
    assert after.total_real_tokens == int(a[:4].sum())
    assert s.fingerprint == fingerprint


@pytest.mark.parametrize("dtype", [np.int64, np.uint16, np.int32])
def test_other_integer_dtypes_are_copied(dtype):
    a = np.array(LENGTHS, dtype=dtype)
    s = BatchRebalanceSampler(a, per_device_batch_size=4, dp_size=1)
    assert s.lengths.dtype == np.uint32
    assert not np.shares_memory(s.lengths, a)
    before = s.plan(0)
    a[:] = 1  # the sampler holds its own copy
    assert s.plan(0) == before


def test_int64_values_out_of_range_name_the_index():
    with pytest.raises(ValueError, match=r"lengths\[2\] is 4294967296"):
        BatchRebalanceSampler(np.array([1, 2, 2**32, 4], dtype=np.int64), per_device_batch_size=1)
    with pytest.raises(ValueError, match=r"lengths\[1\] is -5"):
        BatchRebalanceSampler(np.array([1, -5, 0], dtype=np.int64), per_device_batch_size=1)
    with pytest.raises(ValueError, match=r"lengths\[0\] is 4294967296"):
        BatchRebalanceSampler([2**32], per_device_batch_size=1)


def test_numpy_floats_bools_and_2d_are_rejected():
    with pytest.raises(TypeError, match="float64"):
        BatchRebalanceSampler(np.array([1.0, 2.0]), per_device_batch_size=1)
    with pytest.raises(TypeError, match="bool"):
        BatchRebalanceSampler(np.array([True, True]), per_device_batch_size=1)
    with pytest.raises(ValueError, match="one-dimensional"):
        BatchRebalanceSampler(np.ones((2, 2), dtype=np.uint32), per_device_batch_size=1)


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    assert stream(torch.tensor(LENGTHS)) == stream(LENGTHS)
    assert stream(torch.tensor(LENGTHS, dtype=torch.int32)) == stream(LENGTHS)
    with pytest.raises(TypeError, match="float"):
        BatchRebalanceSampler(torch.tensor([1.0, 2.0]), per_device_batch_size=1)
    with pytest.raises(ValueError, match=r"lengths\[1\]"):
        BatchRebalanceSampler(torch.tensor([3, 0, 2]), per_device_batch_size=1)


def test_uint32_torch_tensor_is_borrowed():
    torch = pytest.importorskip("torch")
    t = torch.tensor(LENGTHS, dtype=torch.uint32)
    s = BatchRebalanceSampler(t, per_device_batch_size=4, dp_size=1)
    assert np.shares_memory(s.lengths, t.numpy())


def test_package_imports_without_torch_or_numpy():
    # torch and numpy made unimportable: where torch is installed the sampler subclasses its
    # Sampler, and the package must still work on a machine without either.
    code = ("import sys\n"
            "sys.modules.update(torch=None, numpy=None)\n"
            "import brs\n"
            "s = brs.BatchRebalanceSampler([3, 1, 2, 7], per_device_batch_size=2)\n"
            "assert list(s)\n"
            "bad = [m for m in ('torch', 'numpy', 'accelerate', 'matplotlib')\n"
            "       if sys.modules.get(m) is not None]\n"
            "assert not bad, bad\n")
    result = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
