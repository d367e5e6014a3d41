"""RebalancedStream takes every option of the library's table, as the sampler does.

The table is walked here with the raw brs_option_* calls, so an option added to the library is
set and read back with no edit; each reaches the library (its value read back, and the
fingerprint of the stream's windows moving with it).
"""

import ctypes
import inspect

import pytest

from brs import BatchRebalanceSampler, CostModel, RebalancedStream
from brs import _native as n

ITEMS = list(range(1, 400))
# The one keyword whose name is not the library's (transformers' name for batch_size).
KEYWORD = {"batch_size": "per_device_batch_size"}
INT64_MAX = 2**63 - 1


def _ok(status):
    assert status == n.OK


class Row:
    """One option of the C table."""

    def __init__(self, index):
        key, kind, name = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_char_p()
        _ok(n.lib.brs_option_key(ctypes.byref(key), index))
        _ok(n.lib.brs_option_name(ctypes.byref(name), key))
        _ok(n.lib.brs_option_type(ctypes.byref(kind), key))
        self.name, self.is_double = name.value.decode(), kind.value == n.OPTION_DOUBLE
        c_type, suffix = (ctypes.c_double, "double") if self.is_double else (ctypes.c_int64, "int")
        default, lower, upper = c_type(), c_type(), c_type()
        _ok(getattr(n.lib, f"brs_option_default_{suffix}")(ctypes.byref(default), key))
        _ok(getattr(n.lib, f"brs_option_bounds_{suffix}")(ctypes.byref(lower),
                                                          ctypes.byref(upper), key))
        self.default, self.lower, self.upper = default.value, lower.value, upper.value
        self.keyword = KEYWORD.get(self.name, self.name)
        self.value_names = self._value_names(key)

    def _value_names(self, key):
        out = ctypes.c_char_p()
        if self.is_double or n.lib.brs_option_value_name(ctypes.byref(out), key,
                                                          self.lower) != n.OK:
            return ()
        names = []
        for value in range(self.lower, self.upper + 1):
            _ok(n.lib.brs_option_value_name(ctypes.byref(out), key, value))
            names.append(out.value.decode())
        return tuple(names)

    def other_value(self):
        """A value within the bounds other than the default: the next one up. An integer of
        0 .. INT64_MAX (a count without bound: a cap whose 0 means none, the seed) takes 2**20
        instead, since a cap of 1 token is one that no sample meets."""
        if self.is_double:
            return self.default + 0.5 if self.default + 0.5 <= self.upper else self.lower
        if (self.lower, self.upper) == (0, INT64_MAX):
            return 2**20
        return self.default + 1 if self.default < self.upper else self.lower

    def spelled(self, value):
        """A stored number as Python reads it back: a named value's name, a switch's bool."""
        if self.value_names:
            return self.value_names[value - self.lower]
        if not self.is_double and (self.lower, self.upper) == (0, 1):
            return bool(value)
        return value


def library_options():
    count = ctypes.c_size_t()
    _ok(n.lib.brs_option_count(ctypes.byref(count)))
    return [Row(index) for index in range(count.value)]


def stream(**options):
    return RebalancedStream(ITEMS, length=int, **{"per_device_batch_size": 2, **options})


def test_every_option_of_the_table_is_set_by_its_name_and_read_back():
    rows = library_options()
    assert len(rows) >= 14
    for row in rows:
        assert row.other_value() != row.default, f"{row.name}: no other value in its bounds"
    the_stream = stream(**{row.keyword: row.other_value() for row in rows})
    for row in rows:
        expected = row.spelled(row.other_value())
        assert getattr(the_stream, row.keyword) == pytest.approx(expected, abs=1e-6), row.name


@pytest.mark.parametrize("row", library_options(), ids=lambda row: row.name)
def test_each_option_reaches_the_library(row):
    """Each option set alone to another value than its default moves the fingerprint of the
    stream's windows: it is set on the handles that plan them. The rank aside: ranks of one job
    share a fingerprint."""
    base = {"dp_size": 2, "rank": 0, row.keyword: row.default}
    changed = stream(**{**base, row.keyword: row.other_value()})
    if row.name == "rank":
        assert (changed.fingerprint, changed.rank) == (stream(**base).fingerprint, 1)
    else:
        assert changed.fingerprint != stream(**base).fingerprint


def test_options_left_unset_are_the_library_defaults():
    the_stream = stream(per_device_batch_size=8, dp_size=1, rank=0)
    for row in library_options():
        if row.name in ("dp_size", "rank", "batch_size"):
            continue  # given here
        # drop_last is the stream's one default of its own
        expected = False if row.name == "drop_last" else row.spelled(row.default)
        assert getattr(the_stream, row.keyword) == pytest.approx(expected), row.name


def test_named_values_cost_model_and_unset_values():
    the_stream = stream(strategy="random", sync="step", shuffle=False)
    assert (the_stream.strategy, the_stream.sync, the_stream.shuffle) == ("random", "step", False)
    assert stream(sync="auto").sync == stream().sync  # "auto": nobody chose; the default holds
    model = CostModel(0.002, 7.0, max_tokens=4096)
    the_stream = stream(cost_model=model, intercept=3.0)
    assert (the_stream.alpha, the_stream.intercept, the_stream.max_tokens) == (0.002, 3.0, 4096)


def test_the_stream_takes_every_keyword_of_the_sampler():
    """None is "not given" for each of them: accepted, whatever the keyword."""
    # items and length() instead of lengths; encoder_load(item) instead of encoder_loads
    # progress: the sampler's display while a whole run's vocabulary is chosen (brs/_elapsed.py);
    # a stream plans window by window and has no such wait
    instead = {"lengths": None, "per_device_batch_size": None, "encoder_loads": "encoder_load",
               "progress": None}
    for word in inspect.signature(BatchRebalanceSampler).parameters:
        if word not in instead:
            stream(**{word: None})
        elif instead[word]:
            stream(**{instead[word]: None})


def test_wrong_keywords_and_values_are_refused():
    with pytest.raises(TypeError, match="batch_size"):
        stream(batch_size=4)  # Python's keyword is per_device_batch_size
    with pytest.raises(TypeError, match="no_such_option"):
        stream(no_such_option=1)
    with pytest.raises(ValueError, match="sync"):
        stream(sync="never")
    with pytest.raises(ValueError, match="alpha"):
        stream(alpha=-1.0)
    with pytest.raises(ValueError, match="dp_size"):
        stream(dp_size=0, rank=0)
    with pytest.raises(ValueError, match="length_buckets"):
        stream(length_buckets="auto")
    with pytest.raises(ValueError, match="a stream plans window by window"):
        stream(max_shapes="auto")
    with pytest.raises(ValueError, match="a stream plans window by window"):
        stream(run_steps=100)


def test_length_buckets_pad_the_windows_micro_batches():
    padded = stream(dp_size=1, rank=0, length_buckets=[512, 1024])
    assert padded.fingerprint != stream(dp_size=1, rank=0).fingerprint
    assert list(padded)  # every window plans with them
