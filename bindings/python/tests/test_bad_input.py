"""Bad input to every public Python call: the exception type and a message that names the
argument and what to change. Each case is recorded for docs/errors.md (brs_testing.expect_error;
scripts/gen_errors_md.py regenerates the page)."""

import ctypes
import itertools
import json

import pytest

from brs import BatchRebalanceSampler, _native
from brs._errors import check_sampler
from brs_testing import expect_error, random_lengths

np = pytest.importorskip("numpy")

LENGTHS = random_lengths(120, seed=4, low=5, high=90)
CALL = "BatchRebalanceSampler(lengths, ...)"


def make(lengths=LENGTHS, **kw):
    kw.setdefault("per_device_batch_size", 4)
    kw.setdefault("dp_size", 1)
    return BatchRebalanceSampler(lengths, **kw)


class LyingLength(list):
    """Says it holds 3 lengths, yields forever."""

    def __len__(self):
        return 3

    def __iter__(self):
        return itertools.repeat(5)


OPTIONS = [  # (keyword, bad value, exception, what the message must say)
    ("per_device_batch_size", 2.0, TypeError, r"per_device_batch_size must be an int; got 2\.0"),
    ("per_device_batch_size", True, TypeError, r"per_device_batch_size must be an int; got True"),
    ("per_device_batch_size", 0, ValueError,
     r"per_device_batch_size \(the library's batch_size\): batch_size = 0 is out of range \[1, "),
    ("per_device_batch_size", -3, ValueError,
     r"per_device_batch_size \(the library's batch_size\): batch_size = -3 is out of range"),
    ("grad_accum", "2", TypeError, r"grad_accum must be an int; got '2' \(str\)"),
    ("grad_accum", 2**64, ValueError,
     r"grad_accum = 18446744073709551616 is out of range \[1, 16777216\]"),
    ("dp_size", 2**32, ValueError, r"dp_size.*4294967296.*out of range"),
    ("dp_size", np.bool_(True), TypeError, r"dp_size must be an int"),
    ("rank", -1, ValueError, r"rank = -1 is out of range \[0, "),
    ("rank", 1.0, TypeError, r"rank must be an int"),
    ("seed", -1, ValueError, r"seed = -1 is out of range \[0, 9223372036854775807\]"),
    ("seed", 2**64, ValueError,
     r"seed = 18446744073709551616 is out of range \[0, 9223372036854775807\]"),
    ("alpha", float("nan"), ValueError, r"alpha must be a number, not NaN"),
    ("alpha", float("inf"), ValueError, r"alpha = inf is out of range \[0, 1000\]"),
    ("alpha", -1.0, ValueError, r"alpha.*-1.*out of range"),
    ("alpha", "0.1", TypeError, r"alpha must be a number; got '0\.1'"),
    ("intercept", float("-inf"), ValueError, r"intercept = -inf is out of range \[0, "),
    ("intercept", [1.0], TypeError, r"intercept must be a number; got \[1\.0\]"),
    ("max_tokens", -1, ValueError, r"max_tokens = -1 is out of range \[0, "),
    ("max_tokens", 1.5, TypeError, r"max_tokens must be an int; got 1\.5"),
    ("max_tokens", 10, ValueError, r"max_tokens.*10"),
    ("shuffle", "yes", TypeError, r"shuffle must be True or False; got 'yes'"),
    ("drop_last", 2, ValueError, r"drop_last must be True or False \(or 0 or 1\); got 2"),
    ("packed", "no", TypeError, r"packed must be True or False; got 'no'"),
    ("strategy", "fastest", ValueError, r"strategy must be one of 'balanced', 'random'"),
    ("sync", 1.5, TypeError, r"sync must be one of 'micro_step', 'step'"),
]


@pytest.mark.parametrize("name, value, exception, match", OPTIONS,
                         ids=[f"{o[0]}={o[1]!r}" for o in OPTIONS])
def test_bad_option(name, value, exception, match):
    expect_error(CALL, f"{name}={value!r}", exception, match, make, **{name: value})


LENGTH_CASES = [  # (description, lengths, exception, what the message must say)
    ("a numpy masked array", np.ma.masked_array([5, 6, 7, 8], mask=[0, 1, 0, 0]), TypeError,
     r"masked array.*lengths\.filled"),
    ("an endless iterator", itertools.count(1), TypeError, r"len\(\).*list\(\.\.\.\)"),
    ("a generator", (n for n in (5, 6, 7)), TypeError, r"got generator"),
    ("a len() that lies", LyingLength(), ValueError, r"len\(\) == 3 but yields more"),
    ("a string", "5 6 7", TypeError, r"lengths must be a sequence of integers.*got str"),
    ("a dict", {0: 5, 1: 6}, TypeError, r"got dict"),
    ("None", None, TypeError, r"sequence of integers with a len\(\).*got NoneType$"),
    ("an empty list", [], ValueError, r"lengths is empty"),
    ("an empty numpy array", np.array([], dtype=np.uint32), ValueError, r"lengths is empty"),
    ("a zero length", [5, 0, 7], ValueError, r"lengths\[1\] is 0.*at least one token"),
    ("a negative length", [5, -2], ValueError, r"lengths\[1\] is -2"),
    ("a length of 2**32", [5, 2**32], ValueError, r"lengths\[1\] is 4294967296.*uint32"),
    ("a length of 2**64", [2**64], ValueError, r"lengths\[0\] is 18446744073709551616"),
    ("a float length", [5, 2.5], TypeError, r"lengths\[1\] is 2\.5 \(float\)"),
    ("a bool length", [5, True], TypeError, r"lengths\[1\] is True \(bool\)"),
    ("a NaN in a float array", np.array([5.0, np.nan]), TypeError, r"numpy array of float64"),
    ("an object array", np.array([5, "x"], dtype=object), TypeError, r"numpy array of object"),
    ("a 2-D array", np.ones((2, 3), dtype=np.uint32), ValueError, r"one-dimensional"),
    ("a zero in a borrowed uint32 array", np.array([5, 6, 0], dtype=np.uint32), ValueError,
     r"lengths\[2\]"),
]


@pytest.mark.parametrize("what, lengths, exception, match", LENGTH_CASES,
                         ids=[c[0] for c in LENGTH_CASES])
def test_bad_lengths(what, lengths, exception, match):
    expect_error(CALL, f"lengths = {what}", exception, match, make, lengths,
                 per_device_batch_size=1)


def test_too_few_samples_says_to_turn_drop_last_off():
    expect_error(CALL, "10 samples, a global batch of 16, drop_last=True", ValueError,
                 r"drop_last", make, LENGTHS[:10], per_device_batch_size=8, dp_size=2)


def test_a_borrowed_array_changed_after_construction_is_an_error_not_a_crash():
    a = np.full(100, 10, np.uint32)
    s = make(a, max_tokens=100)
    a[:] = 0
    expect_error("sampler.plan(step)", "the borrowed lengths array set to 0 afterwards",
                 ValueError, r"lengths\[\d+\] is 0.*changed.*keep it unchanged", s.plan, 0)
    a[:] = 2**32 - 1
    expect_error("sampler.plan(step)", "the borrowed lengths array set above max_tokens",
                 ValueError, r"max_tokens|lengths\[\d+\]", s.plan, 0)


CALLS = [  # (call, bad input, function of a sampler, exception, match)
    ("sampler.set_epoch(epoch)", "epoch=-1", lambda s: s.set_epoch(-1), ValueError,
     r"epoch must be >= 0; got -1"),
    ("sampler.set_epoch(epoch)", "epoch=1.0", lambda s: s.set_epoch(1.0), TypeError,
     r"epoch must be an int; got 1\.0"),
    ("sampler.set_epoch(epoch)", "epoch=2**64", lambda s: s.set_epoch(2**64), ValueError,
     r"epoch must be <= 9223372036854775807"),
    ("sampler.plan(step)", "step=-1", lambda s: s.plan(-1), ValueError, r"step must be >= 0"),
    ("sampler.plan(step)", "step='0'", lambda s: s.plan("0"), TypeError, r"step must be an int"),
    ("sampler.plan(step)", "step=steps_per_epoch", lambda s: s.plan(s.steps_per_epoch),
     ValueError, r"step"),
    ("sampler.plan(step, epoch)", "epoch=True", lambda s: s.plan(0, epoch=True), TypeError,
     r"epoch must be an int; got True"),
    ("sampler.state_dict(consumed)", "consumed=-1", lambda s: s.state_dict(consumed=-1),
     ValueError, r"consumed must be >= 0"),
    ("sampler.state_dict(consumed)", "consumed=len(sampler)+1",
     lambda s: s.state_dict(consumed=len(s) + 1), ValueError, r"consumed=\d+ exceeds the \d+"),
    ("sampler.state_dict(consumed)", "consumed=1.5", lambda s: s.state_dict(consumed=1.5),
     TypeError, r"consumed must be an int"),
]


@pytest.mark.parametrize("call, bad, function, exception, match", CALLS,
                         ids=[f"{c[0]}:{c[1]}" for c in CALLS])
def test_bad_call(call, bad, function, exception, match):
    expect_error(call, bad, exception, match, function, make(grad_accum=2))


def _state(**changes):
    state = make(grad_accum=2).state_dict()
    state.update(changes)
    return state


STATES = [  # (bad input, state, exception, match)
    ("a list instead of the dict", [0, 0, 0], TypeError, r"state must be the dict"),
    ("a JSON string of the dict", json.dumps({"epoch": 0}), TypeError, r"got str"),
    ("a StatefulDataLoader's dict (other keys)", {"_sampler_iter_yielded": 3}, ValueError,
     r"state lacks \['epoch', 'fingerprint', 'micro', 'step', 'version'\]"),
    ("no 'micro' key", {k: v for k, v in _state().items() if k != "micro"}, ValueError,
     r"state lacks \['micro'\]"),
    ("another sampler's fingerprint", _state(fingerprint="0123456789abcdef"), ValueError,
     r"fingerprint 0123456789abcdef.*resume with the same"),
    ("the fingerprint as an int", _state(fingerprint=7), ValueError, r"fingerprint 7"),
    ("version 2", _state(version=2), ValueError, r"state version 2 is not supported"),
    ("version '1' (a string)", _state(version="1"), ValueError, r"state version '1'"),
    ("epoch 'x'", _state(epoch="x"), TypeError, r"state\['epoch'\] must be an int; got 'x'"),
    ("step True", _state(step=True), TypeError, r"state\['step'\] must be an int; got True"),
    ("step -1", _state(step=-1), ValueError, r"state\['step'\] must be >= 0"),
    ("step past the epoch", _state(step=10**6), ValueError, r"step 1000000.*outside an epoch"),
    ("micro = grad_accum", _state(micro=2), ValueError, r"micro 2 lies outside"),
]


@pytest.mark.parametrize("bad, state, exception, match", STATES, ids=[s[0] for s in STATES])
def test_bad_state_dict(bad, state, exception, match):
    sampler = make(grad_accum=2)
    position = sampler.state_dict()
    expect_error("sampler.load_state_dict(state)", bad, exception, match,
                 sampler.load_state_dict, state)
    assert sampler.state_dict() == position, "a refused state must change nothing"


def _sampler_handle():
    handle = _native.SamplerPtr()
    assert _native.lib.brs_sampler_new(ctypes.byref(handle)) == _native.OK
    return handle


def test_no_message_outlives_its_call():
    """After a failed setter, later failing calls (const ones included) carry their own text."""
    handle = _sampler_handle()
    try:
        first = expect_error("brs_sampler_set_int(RANK, -5)", "rank = -5", ValueError, r"rank",
                             check_sampler,
                             _native.lib.brs_sampler_set_int(handle, _native.OPT_RANK, -5),
                             handle)
        out = ctypes.c_uint64()
        second = expect_error("brs_sampler_fingerprint", "no lengths set yet", Exception,
                              r"lengths", check_sampler,
                              _native.lib.brs_sampler_fingerprint(ctypes.byref(out), handle),
                              handle)
        value = ctypes.c_int64()
        third = expect_error("brs_sampler_get_int(999)", "unknown option key 999", Exception,
                             r"999", check_sampler,
                             _native.lib.brs_sampler_get_int(ctypes.byref(value), handle, 999),
                             handle)
    finally:
        _native.lib.brs_sampler_free(handle)
    assert "rank" in str(first)
    assert "rank" not in str(second) and "-5" not in str(second), str(second)
    assert "rank" not in str(third) and "lengths" not in str(third), str(third)


def test_read_lengths_files_pair_is_refused_in_one_short_line(tmp_path):
    import brs

    path = tmp_path / "train.lengths"
    path.write_text("".join(f"{5 + i % 50}\n" for i in range(5000)))
    pair = brs.read_lengths_file(str(path))
    with pytest.raises(TypeError) as refused:
        brs.BatchRebalanceSampler(pair, per_device_batch_size=4, dp_size=1, rank=0)
    message = str(refused.value)
    assert "read_lengths_file" in message and "encoder_loads=images" in message
    assert len(message) < 300 and "\n" not in message
    lengths, images = pair  # what the message says to do plans
    assert brs.BatchRebalanceSampler(lengths, encoder_loads=images, per_device_batch_size=4,
                                     dp_size=1, rank=0).steps_per_epoch > 0


def test_a_bad_length_is_shown_short():
    import brs

    with pytest.raises(TypeError) as refused:
        brs.BatchRebalanceSampler([5, list(range(10000)), 7], per_device_batch_size=1, dp_size=1,
                                  rank=0)
    assert len(str(refused.value)) < 200 and "lengths[1]" in str(refused.value)
