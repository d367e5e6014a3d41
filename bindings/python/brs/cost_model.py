"""brs.CostModel: the three numbers of the planner's cost model, with where they came from.

libbrs prices a micro-batch of bs samples padded to length L as ``intercept + bs*L +
alpha*bs*L^2`` (docs/algorithm.md). A CostModel carries alpha and intercept in those units, the
cap ``max_tokens`` on bs*L, and the evidence behind them (fit quality, raw timings). It comes
from ``brs.calibrate`` (timed on the user's model), from ``CostModel.from_config`` (counted
FLOPs, no timing) or from the library's fixed default. The JSON file it saves is the one format
``brs plan --cost-model``, ``BatchRebalanceSampler(cost_model=...)`` and
``RebalanceOptions(cost_model=...)`` read; docs/calibration.md describes it.
"""

import json
import math
import numbers
import os
import sys
import tempfile

from . import _args, _options

FORMAT = "brs-cost-model"
VERSION = 1
SOURCES = ("calibrated", "analytic", "fixed")
# The limits of docs/formats.md, the C reader's (cli/input.c, cli/json.c).
MAX_FILE_SIZE = 16 << 20
MAX_DEPTH = 64
MAX_MEMBERS = 1024
# The library's defaults for alpha and intercept (BRS_OPT_ALPHA / BRS_OPT_INTERCEPT), from its
# option table: a CostModel("fixed") plans like no cost model.
FIXED_ALPHA = _options.BY_NAME["alpha"].default
FIXED_INTERCEPT = _options.BY_NAME["intercept"].default


# -- the terms of a micro-batch's cost --------------------------------------------------------

#: What each of cost_terms is, in its order.
COST_TERMS = ("1", "bs*L", "bs*L^2")


def cost_terms(batch_size, length):
    """The terms of the cost of a micro-batch of ``batch_size`` samples padded to ``length``
    tokens, in COST_TERMS order: ``(1, bs*L, bs*L^2)``.

    The planner's cost is these terms weighed by CostModel.coefficients, ``(intercept, 1,
    alpha)``; a calibration fits seconds as the terms weighed by per-term seconds (brs.calibrate
    on a grid, online calibration from sums of products of the terms), which from_seconds turns
    into a model. Every Python use of the formula reads it here, the benchmarks' included.
    Scalars or numpy arrays, which broadcast: each term has the type and shape of ``bs*L``.

    A part the formula does not have yet (an encoder's per-micro-batch sum of image patch
    loads, their sum of squares and the image count) is its input here, its terms appended to
    the tuple and to COST_TERMS, its coefficients in CostModel.coefficients and from_seconds;
    the fits follow the number of terms.
    """
    tokens = batch_size * length
    return (tokens * 0 + 1, tokens, tokens * length)


def combine(coefficients, terms):
    """The sum of each coefficient times its term: a cost, or seconds, of cost_terms."""
    coefficients, terms = tuple(coefficients), tuple(terms)
    if len(coefficients) != len(terms):
        raise ValueError(f"{len(coefficients)} coefficients for {len(terms)} cost terms")
    total = 0
    for coefficient, term in zip(coefficients, terms):
        total = total + coefficient * term
    return total


def from_seconds(coefficients):
    """(alpha, intercept, seconds_per_unit) of a fit of seconds as ``combine(coefficients,
    cost_terms(...))``: the model whose coefficients times seconds_per_unit are the fitted
    ones. The fit must have a positive bs*L coefficient (the unit of a cost)."""
    per_micro_batch, per_token, per_token_length = coefficients
    return per_token_length / per_token, per_micro_batch / per_token, per_token


class CostModel:
    """alpha, intercept (brs units), max_tokens (int or None) and the fit's quality.

    ``seconds_per_unit`` (calibrated models only) converts a cost back to seconds: the fitted
    time of one padded token's linear work; ``predict`` uses it. ``timing`` says how the
    timings were taken (clock, estimator, rounds, the machine's load average).
    ``first_shape_seconds`` is what the first run of a new (batch size, padded length) costs
    beyond its warm runs (the median over the calibrated shapes; 0 where not measured): a
    one-time price per distinct shape that the per-micro-batch model leaves out.
    """

    __slots__ = ("alpha", "intercept", "max_tokens", "r2", "worst_residual", "source", "model",
                 "device", "seconds_per_unit", "memory", "timings", "timing",
                 "first_shape_seconds")

    def __init__(self, alpha, intercept=0.0, max_tokens=None, *, r2=None, worst_residual=None,
                 source="fixed", model="", device="", seconds_per_unit=None, memory=None,
                 timings=None, timing=None, first_shape_seconds=0.0):
        self.alpha = _non_negative("alpha", alpha)
        self.intercept = _non_negative("intercept", intercept)
        self.max_tokens = _args.optional_integer("max_tokens", max_tokens, 1)
        self.r2 = None if r2 is None else _args.real("r2", r2)
        self.worst_residual = (None if worst_residual is None
                               else _args.real("worst_residual", worst_residual))
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}; got {source!r}")
        self.source = source
        self.model = str(model)
        self.device = str(device)
        self.seconds_per_unit = (None if seconds_per_unit is None
                                 else _positive("seconds_per_unit", seconds_per_unit))
        self.memory = dict(memory) if memory else {}
        self.timings = list(timings) if timings else []
        self.timing = dict(timing) if timing else {}  # how the timings were taken
        self.first_shape_seconds = _non_negative("first_shape_seconds", first_shape_seconds)

    # -- the cost of a micro-batch ---------------------------------------------------------

    @property
    def coefficients(self):
        """The weight of each of cost_terms in the cost: ``(intercept, 1, alpha)``."""
        return (self.intercept, 1.0, self.alpha)

    def cost(self, batch_size, length):
        """intercept + bs*L + alpha*bs*L^2, the library's units."""
        return combine(self.coefficients, cost_terms(batch_size, length))

    def predict(self, batch_size, length):
        """Seconds of a micro-batch of ``batch_size`` samples padded to ``length`` tokens:
        seconds_per_unit * cost(batch_size, length).

        Scalars give a float; numpy arrays (or lists) broadcast and give an array. ValueError
        when the model has no seconds_per_unit (only calibrated models know their time) or a
        batch size or length is below 1.
        """
        if self.seconds_per_unit is None:
            raise ValueError(f"predict: this {self.source} cost model has no seconds_per_unit, "
                             "so it prices micro-batches in brs units, not seconds; calibrate "
                             "one (brs.calibrate or python -m brs calibrate) to predict time")
        if _is_scalar(batch_size) and _is_scalar(length):
            _at_least_one("batch_size", batch_size)
            _at_least_one("length", length)
            return self.seconds_per_unit * self.cost(float(batch_size), float(length))
        import numpy as np

        bs, size = (_positive_array(n, v, np) for n, v in (("batch_size", batch_size),
                                                            ("length", length)))
        try:
            bs, size = np.broadcast_arrays(bs, size)
        except ValueError:
            raise ValueError(f"predict: batch_size of shape {bs.shape} and length of shape "
                             f"{size.shape} do not broadcast together") from None
        return self.seconds_per_unit * self.cost(bs, size)

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def fixed(cls):
        """The library's default model (upstream transformers' constant alpha)."""
        return cls(FIXED_ALPHA, FIXED_INTERCEPT, source="fixed", model="default")

    @classmethod
    def from_config(cls, config, *, causal=True):
        """alpha from a transformers config by counting FLOPs, nothing timed.

        alpha = attention FLOPs per token per unit of length / linear FLOPs per token. Linear:
        q/k/v/o projections (k and v with the KV heads), the MLP (three matrices for SwiGLU,
        two otherwise; top-k experts plus shared experts and the router for MoE) in every
        layer, and the LM head. Attention: QK^T and AV, 2 * heads * head_dim per key per layer,
        halved with ``causal`` because SDPA's and flash's causal kernels skip the masked half
        (eager attention computes all of it: pass causal=False). The intercept is 0: launch and
        optimizer overheads are not FLOPs; calibrate to measure them.
        """
        # Imported on use: brs.calibration imports this module (it makes CostModels), so a
        # top-level import would be circular.
        from .calibration.flops import analytic_terms

        terms = analytic_terms(config, causal=causal)
        alpha = terms["attention_per_token_per_length"] / terms["linear_per_token"]
        name = getattr(config, "model_type", None) or type(config).__name__
        return cls(alpha, 0.0, None, source="analytic", model=str(name),
                   memory={"activation_bytes_per_token": terms["activation_bytes_per_token"],
                           "flops": {k: v for k, v in terms.items()
                                     if k != "activation_bytes_per_token"}})

    @classmethod
    def coerce(cls, value, name="cost_model"):
        """A CostModel as given, or loaded from a path; TypeError for anything else."""
        if isinstance(value, CostModel):
            return value
        if isinstance(value, (str, os.PathLike)):
            return cls.load(value)
        raise TypeError(f"{name} must be a brs.CostModel or the path of its JSON file; got "
                        f"{type(value).__name__}")

    # -- JSON --------------------------------------------------------------------------------

    def to_dict(self):
        return {"format": FORMAT, "version": VERSION, "alpha": self.alpha,
                "intercept": self.intercept, "max_tokens": self.max_tokens, "r2": self.r2,
                "worst_residual": self.worst_residual, "source": self.source,
                "model": self.model, "device": self.device,
                "seconds_per_unit": self.seconds_per_unit,
                "first_shape_seconds": self.first_shape_seconds, "memory": self.memory,
                "timings": self.timings, "timing": self.timing}

    @classmethod
    def from_dict(cls, data, where="cost model"):
        """A CostModel from a file's object, by the rules of docs/formats.md (the C command's
        cli/input.c checks the same, in the same order)."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
        try:
            _check_header(data)
            alpha, intercept = (_cost_term(data, key) for key in ("alpha", "intercept"))
            max_tokens = _max_tokens(data.get("max_tokens"))
            seconds_per_unit = _seconds_per_unit(data.get("seconds_per_unit"))
            first_shape = _first_shape_seconds(data.get("first_shape_seconds"))
            record = _record(data)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc} (see docs/formats.md)") from None
        return cls(alpha, intercept, max_tokens, seconds_per_unit=seconds_per_unit,
                   first_shape_seconds=first_shape, **record)

    def save(self, path):
        """Write the JSON atomically: a temporary file beside ``path``, then a rename."""
        path = os.fspath(path)
        text = json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n"
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".brs-cost-", suffix=".json", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path):
        path = os.fspath(path)
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE_SIZE + 1)
        except OSError as exc:
            raise ValueError(f"cannot read cost model '{path}': {exc.strerror}") from None
        where = f"cost model '{path}'"
        if len(data) > MAX_FILE_SIZE:
            raise ValueError(f"{where} is larger than {MAX_FILE_SIZE} bytes: this is not a "
                             "cost-model file")
        try:
            return cls.from_dict(_parse_json(data), where=where)
        except _NotJSON as exc:
            raise ValueError(f"{where} is not a valid JSON cost-model file: {exc} (see "
                             "docs/formats.md)") from None

    def __eq__(self, other):
        if not isinstance(other, CostModel):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None

    def __repr__(self):
        return (f"CostModel(alpha={self.alpha:.6g}, intercept={self.intercept:.6g}, "
                f"max_tokens={self.max_tokens}, r2={self.r2}, source={self.source!r})")


def resolve(cost_model, alpha, intercept, max_tokens):
    """(alpha, intercept, max_tokens) for a sampler: explicit values first, then the cost
    model's, then the library's defaults. ``None`` means "not given"."""
    cm = None if cost_model is None else CostModel.coerce(cost_model)
    if alpha is None:
        alpha = cm.alpha if cm else FIXED_ALPHA
    if intercept is None:
        intercept = cm.intercept if cm else FIXED_INTERCEPT
    if max_tokens is None and cm is not None:
        max_tokens = cm.max_tokens
    return alpha, intercept, max_tokens


def _is_scalar(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _at_least_one(name, value):
    if not value >= 1 or math.isinf(value):
        raise ValueError(f"predict: {name} must be a finite number >= 1; got {value!r}")


def _positive_array(name, value, np):
    if isinstance(value, bool) or (isinstance(value, np.ndarray) and value.dtype == bool):
        raise TypeError(f"predict: {name} must be numbers, not booleans")
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError(name)  # numpy would parse "8": a number is asked for
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"predict: {name} must be a number or an array of numbers; got "
                        f"{type(value).__name__}") from None
    if not np.all(np.isfinite(array) & (array >= 1)):
        raise ValueError(f"predict: every {name} must be a finite number >= 1; got "
                         f"{array[~(np.isfinite(array) & (array >= 1))].ravel()[:3].tolist()}")
    return array


def _positive(name, value):
    value = _args.real(name, value)
    if not value > 0:
        raise ValueError(f"{name} must be a finite number > 0 or None; got {value}")
    return value


def _non_negative(name, value):
    value = _args.real(name, value)
    if value < 0 or math.isinf(value):
        raise ValueError(f"{name} must be a finite number >= 0; got {value}")
    return value


# -- the file format (docs/formats.md) ----------------------------------------------------------

class _NotJSON(ValueError):
    """The bytes are not a JSON text the format allows."""


class _OutOfRange(float):
    """A JSON number that no double holds (it rounds to infinity, or to zero or a subnormal
    though its digits are not all 0). Kept as a float so that the informational values that
    hold one still load; a key that is read refuses it."""


def _parse_float(text):
    value = float(text)
    mantissa = text.lower().split("e")[0]
    if math.isinf(value) or (abs(value) < sys.float_info.min and any(c in "123456789"
                                                                     for c in mantissa)):
        return _OutOfRange(value)
    return value


def _parse_int(text):
    # Python refuses to convert an integer of more than 4300 digits; JSON allows it.
    return int(text) if len(text) <= 4000 else _OutOfRange(float(text))


def _refuse_constant(name):
    raise _NotJSON(f"{name} is not a JSON number (write a finite number)")


def _members(pairs):
    if len(pairs) > MAX_MEMBERS:
        raise _NotJSON(f"an object has more than {MAX_MEMBERS} members")
    names = set()
    for name, _ in pairs:
        if name in names:
            raise _NotJSON(f"the member name {json.dumps(name)[:60]} appears twice in one object")
        names.add(name)
    return dict(pairs)


def _depth(value):
    """How deeply value nests (a scalar 0, [] 1), computed without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            todo.extend((child, depth + 1) for child in children)
    return deepest


def _parse_json(data):
    """The object of a cost-model file's bytes: UTF-8 (a byte-order mark is skipped), RFC 8259,
    no NaN/Infinity, no name twice in an object, at most MAX_DEPTH levels."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _NotJSON(f"byte {exc.start + 1} is not UTF-8") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_parse_float,
                           parse_int=_parse_int, object_pairs_hook=_members)
    except json.JSONDecodeError as exc:
        raise _NotJSON(str(exc)) from None
    except RecursionError:
        raise _NotJSON(f"nested deeper than {MAX_DEPTH} levels") from None
    if not isinstance(value, dict):
        raise _NotJSON("the file must hold one JSON object ({...})")
    if _depth(value) > MAX_DEPTH:
        raise _NotJSON(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _shown(value):
    try:
        return json.dumps(value)[:60]
    except (TypeError, ValueError):
        return repr(value)[:60]


def _is_integer(value):
    """An integer of JSON, or of Python code (numpy's too), not a bool and not 1.0."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_header(data):
    if "format" not in data:
        raise ValueError(f'key "format" is missing (expected "{FORMAT}")')
    if data["format"] != FORMAT:
        raise ValueError(f'key "format" is {_shown(data["format"])}, expected "{FORMAT}": this '
                         "is not a cost-model file")
    if "version" not in data:
        raise ValueError(f'key "version" is missing (expected {VERSION})')
    version = data["version"]
    if not _is_integer(version) or version != VERSION:  # not True, not 1.0
        raise ValueError(f'key "version" is {_shown(version)}, but this package reads version '
                         f"{VERSION}")


def _finite(key, value):
    """value as a float when it is a finite JSON number; ValueError in the C reader's words."""
    if not _is_scalar(value):
        raise ValueError(f'key "{key}" is {_shown(value)}, not a number')
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if isinstance(value, _OutOfRange) or not math.isfinite(number):
        raise ValueError(f'key "{key}" is {_shown(value)}, not a finite number')
    return number


def _cost_term(data, key):
    if key not in data:
        raise ValueError(f'key "{key}" is missing')
    value = _finite(key, data[key])
    if value < 0:
        raise ValueError(f'key "{key}" is {_shown(data[key])}, out of range: it must be a finite '
                         "number >= 0")
    return value + 0.0  # -0 reads as 0


def _max_tokens(value):
    if value is None:
        return None
    if not _is_integer(value) or not 1 <= value <= _args.INT64_MAX:
        raise ValueError(f'key "max_tokens" is {_shown(value)}, not an integer >= 1 or null')
    return value


def _seconds_per_unit(value):
    if value is None:
        return None
    if not _finite("seconds_per_unit", value) > 0:
        raise ValueError(f'key "seconds_per_unit" is {_shown(value)}, out of range: it must be a '
                         "finite number above 0, or null when the model was not calibrated")
    return float(value)


def _first_shape_seconds(value):
    """Absent or null in files written before calibration timed first runs: 0, not measured."""
    if value is None:
        return 0.0
    if not _finite("first_shape_seconds", value) >= 0:
        raise ValueError(f'key "first_shape_seconds" is {_shown(value)}, out of range: it must '
                         "be a finite number >= 0, or null")
    return float(value) + 0.0


# The keys the planner does not use, with their JSON types; null means absent for each.
_RECORD = (("r2", numbers.Real, "a number"), ("worst_residual", numbers.Real, "a number"),
           ("source", str, "a string"), ("model", str, "a string"), ("device", str, "a string"),
           ("memory", dict, "an object"), ("timing", dict, "an object"),
           ("timings", list, "an array"))


def _record(data):
    record = {}
    for key, kind, what in _RECORD:
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, kind):
            raise ValueError(f'key "{key}" is {_shown(value)}, not {what} or null')
        record[key] = _finite(key, value) if what == "a number" else value
    if record.get("source", "fixed") not in SOURCES:
        raise ValueError(f'key "source" is {_shown(record["source"])}, not one of '
                         '"calibrated", "analytic", "fixed"')
    return record
