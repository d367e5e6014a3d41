"""Type checks of the sampler's keyword arguments, with messages that say what to pass.

Only the types are checked here; value ranges are libbrs's business (its bounds are the truth),
except where Python has a value C cannot represent (a negative number for a uint64).
"""

import math
import numbers

INT64_MAX = 2**63 - 1


def integer(name, value, minimum=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int; got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}")
    if value > INT64_MAX:
        raise ValueError(f"{name} must be <= {INT64_MAX}; got {value}")
    return value


def optional_integer(name, value, minimum=None):
    return None if value is None else integer(name, value, minimum)


def flag(name, value):
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral) and int(value) in (0, 1):
        return bool(value)
    if type(value).__module__ == "numpy" and getattr(value, "dtype", None) == bool:
        return bool(value)  # numpy.bool_, e.g. from a config array
    raise TypeError(f"{name} must be True or False; got {value!r} ({type(value).__name__})")


def real(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number; got {value!r} ({type(value).__name__})")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, not NaN")
    if math.isinf(value):
        raise ValueError(f"{name} must be a finite number; got {value}")
    return value
