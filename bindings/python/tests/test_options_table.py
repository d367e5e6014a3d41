"""The sampler takes every option from the library's table: keywords, defaults, read-back, state.

The library's list is read here with the raw brs_option_* calls, not through brs._options, so a
key the binding forgets (or reads wrong) fails a test.
"""

import ctypes
import inspect
import pickle
import pydoc

import pytest

from brs import BatchRebalanceSampler
from brs import _native as n
from brs.__main__ import _report_parser
from brs_testing import random_lengths

LENGTHS = random_lengths(240, seed=21, low=8, high=600)
# The one keyword whose name is not the library's (transformers' name for batch_size).
KEYWORD = {"batch_size": "per_device_batch_size"}


def _text(function, *args):
    out = ctypes.c_char_p()
    assert function(ctypes.byref(out), *args) == n.OK
    return out.value.decode()


def library_options():
    """[(key, name, is_double, default)] straight from the C table."""
    count = ctypes.c_size_t()
    assert n.lib.brs_option_count(ctypes.byref(count)) == n.OK
    rows = []
    for index in range(count.value):
        key, kind = ctypes.c_int32(), ctypes.c_int32()
        assert n.lib.brs_option_key(ctypes.byref(key), index) == n.OK
        assert n.lib.brs_option_type(ctypes.byref(kind), key) == n.OK
        is_double = kind.value == n.OPTION_DOUBLE
        default = ctypes.c_double() if is_double else ctypes.c_int64()
        query = n.lib.brs_option_default_double if is_double else n.lib.brs_option_default_int
        assert query(ctypes.byref(default), key) == n.OK
        rows.append((key.value, _text(n.lib.brs_option_name, key), is_double, default.value))
    return rows


def keyword(name):
    return KEYWORD.get(name, name)


def value_name(key, value):
    out = ctypes.c_char_p()
    status = n.lib.brs_option_value_name(ctypes.byref(out), key, value)
    return out.value.decode() if status == n.OK else None


def make(**kw):
    kw.setdefault("per_device_batch_size", 4)
    kw.setdefault("dp_size", 2)
    kw.setdefault("rank", 0)
    return BatchRebalanceSampler(LENGTHS, **kw)


def test_the_table_has_the_options_of_the_contract():
    names = {name for _, name, _, _ in library_options()}
    assert {"batch_size", "grad_accum", "dp_size", "rank", "seed", "shuffle", "drop_last",
            "max_tokens", "packed", "alpha", "intercept", "strategy", "sync"} <= names


@pytest.mark.parametrize("key, name, is_double, default", library_options())
def test_every_library_option_is_a_keyword_of_the_sampler(key, name, is_double, default):
    parameters = inspect.signature(BatchRebalanceSampler).parameters
    assert keyword(name) in parameters, f"libbrs option {name} has no keyword"
    assert parameters[keyword(name)].kind is inspect.Parameter.KEYWORD_ONLY
    assert name in BatchRebalanceSampler.__doc__ or keyword(name) in BatchRebalanceSampler.__doc__


def test_the_keywords_are_the_table_in_its_order_and_help_shows_them():
    # the constructor's signature is made from the table: its option keywords, in the C
    # table's order, each defaulting to None (the library's) but the required batch size
    parameters = inspect.signature(BatchRebalanceSampler).parameters
    words = [keyword(name) for _, name, _, _ in library_options()]
    assert list(parameters)[1:1 + len(words)] == words
    for word in words:
        expected = inspect.Parameter.empty if word == "per_device_batch_size" else None
        assert parameters[word].default is expected, word
    shown = pydoc.render_doc(BatchRebalanceSampler, renderer=pydoc.plaintext)
    assert f"{words[-1]}=None" in shown and "**kwargs" not in shown.split("Methods")[0]
    with pytest.raises(TypeError, match="no_such_option"):
        make(no_such_option=1)
    with pytest.raises(TypeError, match="per_device_batch_size"):
        BatchRebalanceSampler(LENGTHS)


@pytest.mark.parametrize("key, name, is_double, default", library_options())
def test_unset_options_read_back_the_library_default(key, name, is_double, default):
    if name in ("dp_size", "rank"):
        return  # set explicitly above: unset they come from the job
    s = make(per_device_batch_size=None) if name == "batch_size" else make()
    value = getattr(s, keyword(name))
    expected = default if is_double else value_name(key, default) or default
    assert value == expected and type(value) in (bool, int, float, str)


@pytest.mark.parametrize("key, name, is_double, default", library_options())
def test_every_option_but_the_rank_is_in_the_state(key, name, is_double, default):
    state = make().state_dict()
    if name == "rank":
        assert name not in state["options"]
    else:
        assert name in state["options"]


def test_attributes_are_the_values_the_library_stores():
    # alpha is resolved to 1e-6 by the library, and the resolved value is what reads back
    s = make(alpha=0.0012345678, intercept=2.5, max_tokens=5000, shuffle=0, strategy="random",
             sync="step")
    assert s.alpha == 0.001235 and s.intercept == 2.5 and s.max_tokens == 5000
    assert s.shuffle is False and s.strategy == "random" and s.sync == "step"
    assert s.fingerprint == make(alpha=0.001235, intercept=2.5, max_tokens=5000, shuffle=False,
                                 strategy="random", sync="step").fingerprint


def test_sync_auto_is_the_library_default_in_the_plain_sampler():
    assert make(sync="auto").fingerprint == make().fingerprint
    assert make(sync="auto").sync == make().sync
    assert make(sync="step").fingerprint != make().fingerprint


def test_named_values_are_checked_against_the_library_names():
    with pytest.raises(ValueError, match=r"strategy.*'balanced'.*'random'.*'length_grouped'"):
        make(strategy="fastest")
    with pytest.raises(TypeError, match="sync"):
        make(sync=1.5)


def test_a_bound_error_names_the_keyword_and_the_library_option():
    with pytest.raises(ValueError, match=r"per_device_batch_size \(the library's batch_size\)"):
        make(per_device_batch_size=0)
    with pytest.raises(ValueError, match="seed"):
        make(seed=-1)


def test_state_names_the_options_that_differ():
    saved = make(strategy="length_grouped", alpha=0.01).state_dict()
    with pytest.raises(ValueError, match=r"strategy='length_grouped'.*strategy='balanced'"):
        make(alpha=0.01).load_state_dict(saved)
    make(strategy="length_grouped", alpha=0.01, rank=1).load_state_dict(saved)  # rank aside


def test_a_state_without_options_is_checked_by_its_fingerprint():
    s = make()
    state = s.state_dict()
    del state["options"]
    s.load_state_dict(state)
    with pytest.raises(ValueError, match="fingerprint"):
        make(seed=3).load_state_dict(state)


def test_baseline_strategies_plan_fixed_size_batches_and_cover_the_epoch():
    s = make(per_device_batch_size=4, grad_accum=3, strategy="random")
    balanced = make(per_device_batch_size=4, grad_accum=3)
    plan = s.plan(0)
    assert all(mb.num_samples == 4 for rank in plan.micro_batches for mb in rank)
    assert sorted(i for rank in plan.micro_batches for mb in rank for i in mb.indices) == sorted(
        i for rank in balanced.plan(0).micro_batches for mb in rank for i in mb.indices)
    grouped = make(strategy="length_grouped")
    seen = [i for step in range(grouped.steps_per_epoch)
            for rank in grouped.plan(step).micro_batches for mb in rank for i in mb.indices]
    assert len(seen) == len(set(seen)) == grouped.steps_per_epoch * 8


def test_with_options_changes_only_what_it_is_given():
    s = make(alpha=0.01, seed=4)
    s.set_epoch(2)
    other = s.with_options(strategy="random", seed=None)
    assert (other.strategy, other.seed, other.alpha, other.epoch) == ("random", 0, 0.01, 2)
    assert s.strategy == "balanced"
    with pytest.raises(TypeError, match="with_options"):
        s.with_options(colour="red")


def test_pickled_sampler_keeps_its_options():
    s = make(strategy="length_grouped", sync="step", max_tokens=4000)
    clone = pickle.loads(pickle.dumps(s))
    assert clone.fingerprint == s.fingerprint and list(clone) == list(s)
    assert clone.state_dict()["options"] == s.state_dict()["options"]


@pytest.mark.parametrize("key, name, is_double, default", library_options())
def test_every_library_option_is_a_flag_of_the_report(key, name, is_double, default):
    flags = {flag for action in _report_parser()._actions for flag in action.option_strings}
    # a report compares every strategy and rank, as `brs compare`, which refuses both flags too
    assert ("--" + name.replace("_", "-") in flags) == (name not in ("strategy", "rank"))
