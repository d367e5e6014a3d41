"""The library's option table, read once through the brs_option_* queries.

libbrs holds the one list of options (libbrs/api/options.c): names, types, bounds, defaults, help
and the names of enum-like values. The sampler's keywords, attributes and state, and the flags of
``python -m brs report``, are all made from ``TABLE``; nothing here restates a default or a range.

Python spells an option's value in its own idiom, derived from the table entry alone (the C CLI
makes the same three cases into flags, cli/args.c):
  - an integer option with named values takes the name (``strategy="random"``) or its number;
  - an unnamed integer option with bounds [0, 1] is a switch: ``True`` / ``False``;
  - any other option takes an int or a float.
Only the type is checked here; bounds are checked by the library when the value is set, so its
message (with the option's one name) is the one the user reads.
"""

import ctypes
import math
import numbers
from typing import NamedTuple, Tuple

from . import _native as n
from ._errors import check

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


class Option(NamedTuple):
    """One row of the library's table."""

    key: int
    name: str  # the one name in every layer, e.g. "batch_size"
    is_double: bool
    lower: float  # int for an integer option
    upper: float
    default: float  # as the library stores it: int, or float for a double option
    help: str  # one line
    value_names: Tuple[str, ...]  # names of lower .. upper; empty when values are plain numbers

    @property
    def is_switch(self):
        return not self.is_double and not self.value_names and (self.lower, self.upper) == (0, 1)

    @property
    def default_value(self):
        """The library's default as Python spells it (see from_native)."""
        return self.from_native(self.default)

    @property
    def flag(self):
        return "--" + self.name.replace("_", "-")

    def to_native(self, value, argument):
        """The value to store for ``value`` (passed as ``argument``); TypeError for a wrong type."""
        if self.is_double:
            return _real(value, argument)
        if self.is_switch:
            return _switch(value, argument)
        if self.value_names and isinstance(value, str):
            return self._value_of(value, argument)
        return _integer(value, argument, self._what(), (self.lower, self.upper))

    def from_native(self, raw):
        """The Python value of a stored one: bool for a switch, the name of a named value."""
        if self.is_switch:
            return bool(raw)
        if self.value_names and self.lower <= raw <= self.upper:
            return self.value_names[raw - self.lower]
        return raw

    def _value_of(self, value, argument):
        found = ctypes.c_int64()
        try:
            name = value.encode()
        except UnicodeEncodeError:  # a lone surrogate names no value
            name = None
        if name is not None and b"\0" not in name and \
                n.lib.brs_option_value_find(ctypes.byref(found), self.key, name) == n.OK:
            return found.value
        raise ValueError(f"{argument} must be one of {', '.join(map(repr, self.value_names))}; "
                         f"got {value!r}")

    def _what(self):
        if self.value_names:
            return "one of " + ", ".join(map(repr, self.value_names)) + " (or its number)"
        return "an int"


def _integer(value, argument, what, bounds):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{argument} must be {what}; got {value!r} ({type(value).__name__})")
    value = int(value)
    if not INT64_MIN <= value <= INT64_MAX:  # cannot reach the library: say its bounds here
        raise ValueError(f"{argument} = {value} is out of range [{bounds[0]}, {bounds[1]}]")
    return value


def _switch(value, argument):
    if isinstance(value, bool) or type(value).__module__ == "numpy" and \
            getattr(value, "dtype", None) == bool:
        return int(bool(value))  # numpy.bool_, e.g. from a config array
    if isinstance(value, numbers.Integral):
        if value in (0, 1):
            return int(value)
        raise ValueError(f"{argument} must be True or False (or 0 or 1); got {value!r}")
    raise TypeError(f"{argument} must be True or False; got {value!r} ({type(value).__name__})")


def _real(value, argument):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{argument} must be a number; got {value!r} ({type(value).__name__})")
    value = float(value)
    if math.isnan(value):  # the library rejects it too, but its message cannot say "NaN"
        raise ValueError(f"{argument} must be a number, not NaN")
    return value


def _text(getter, *args):
    out = ctypes.c_char_p()
    check(getter(ctypes.byref(out), *args))
    return out.value.decode()


def _value_names(key, lower, upper):
    """The names of an enum-like option's values; () when its values have none."""
    out = ctypes.c_char_p()
    if n.lib.brs_option_value_name(ctypes.byref(out), key, lower) != n.OK:
        return ()
    return tuple(_text(n.lib.brs_option_value_name, key, value)
                 for value in range(lower, upper + 1))


def _describe(key):
    kind = ctypes.c_int32()
    check(n.lib.brs_option_type(ctypes.byref(kind), key))
    is_double = kind.value == n.OPTION_DOUBLE
    c_type = ctypes.c_double if is_double else ctypes.c_int64
    lower, upper, default = c_type(), c_type(), c_type()
    bounds = n.lib.brs_option_bounds_double if is_double else n.lib.brs_option_bounds_int
    check(bounds(ctypes.byref(lower), ctypes.byref(upper), key))
    fallback = n.lib.brs_option_default_double if is_double else n.lib.brs_option_default_int
    check(fallback(ctypes.byref(default), key))
    names = () if is_double else _value_names(key, lower.value, upper.value)
    return Option(key, _text(n.lib.brs_option_name, key), is_double, lower.value, upper.value,
                  default.value, _text(n.lib.brs_option_help, key), names)


def _read():
    count = ctypes.c_size_t()
    check(n.lib.brs_option_count(ctypes.byref(count)))
    rows = []
    for index in range(count.value):
        key = ctypes.c_int32()
        check(n.lib.brs_option_key(ctypes.byref(key), index))
        rows.append(_describe(key.value))
    return tuple(rows)


#: Every option of the loaded library, in its order.
TABLE = _read()
BY_NAME = {option.name: option for option in TABLE}


# -- Python's keywords for the options (the sampler, plan_batch, python -m brs) ---------------


def _keywords():
    """{name: keyword} where the library's keyword (brs_option_keyword) differs from the name:
    transformers calls the average micro-batch size per_device_batch_size."""
    keywords = {}
    for option in TABLE:
        spelled = _text(n.lib.brs_option_keyword, option.key)
        if spelled != option.name:
            keywords[option.name] = spelled
    return keywords


def _scopes():
    """{name: scope} of every option (brs_option_scope: OPTION_SCOPE_RANK, _SPLIT or _RUN)."""
    scopes = {}
    for option in TABLE:
        found = ctypes.c_int32()
        check(n.lib.brs_option_scope(ctypes.byref(found), option.key))
        scopes[option.name] = found.value
    return scopes


# Where Python's keyword differs from the library's name. Every other keyword is the library's
# option name.
_KEYWORDS = _keywords()
_SCOPES = _scopes()
# Values that mean "unset" for one option: "auto" asks the integrations to choose the sync model
# from the job (docs/python.md); a plain sampler has no job to read, so it takes the library's.
_UNSET_VALUES = {"sync": "auto"}


def keyword(option):
    """The Python keyword of ``option`` (an Option of TABLE)."""
    return _KEYWORDS.get(option.name, option.name)


def scope(option):
    """Who shares the value of ``option`` (an Option of TABLE): n.OPTION_SCOPE_RANK (this
    process's own), n.OPTION_SCOPE_SPLIT or n.OPTION_SCOPE_RUN (every rank's)."""
    return _SCOPES[option.name]


def is_shared(option):
    """True when every rank of a job shares the value of ``option`` (its scope is not RANK)."""
    return scope(option) != n.OPTION_SCOPE_RANK


BY_KEYWORD = {keyword(option): option for option in TABLE}


def native_value(name, value):
    """The C value of keyword argument ``name``, or None when it is unset (the library's
    default)."""
    option = BY_KEYWORD[name]
    if value is None or (option.name in _UNSET_VALUES and value == _UNSET_VALUES[option.name]):
        return None
    return option.to_native(value, name)


def given_options(arguments):
    """{option name: C value} of the options among ``arguments`` (keyword -> value) that are set.

    Keywords that are not options (e.g. ``self``) are ignored, and an option of the library
    without a keyword here keeps the library's default.
    """
    given = {}
    for name in BY_KEYWORD.keys() & arguments.keys():
        value = native_value(name, arguments[name])
        if value is not None:
            given[BY_KEYWORD[name].name] = value
    return given
