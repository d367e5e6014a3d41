"""brs.CostModel: the numbers of the planner's cost model, with where they came from.

libbrs prices a micro-batch of bs samples padded to length L as ``intercept + bs*L +
alpha*bs*L^2`` (docs/algorithm.md), plus, for each of its images of p patches, ``encoder_weight*p
+ encoder_alpha*p^2 + encoder_intercept`` ("Two parts"). A CostModel carries alpha, intercept,
encoder_weight, encoder_alpha and encoder_intercept in those units, the caps ``max_tokens`` on
bs*L and ``max_encoder_tokens`` on a micro-batch's patches, and the evidence behind them (fit
quality, raw timings). It comes from ``brs.calibrate`` (timed on the user's model), from
``CostModel.from_config`` (counted FLOPs, no timing) or from the library's fixed default. The
JSON file it saves is the one format ``brs plan --cost-model``,
``BatchRebalanceSampler(cost_model=...)`` and ``RebalanceOptions(cost_model=...)`` read;
docs/calibration.md describes it.
"""

import json
import math
import numbers
import os
import tempfile

from . import _args, _files, _native, _options
from ._flops import analytic_terms, vision_terms

FORMAT = "brs-cost-model"
VERSION = 1
SOURCES = ("calibrated", "analytic", "fixed")
# The largest file libbrs reads (BRS_COST_MODEL_FILE_MAX_BYTES); docs/formats.md has the rest.
MAX_FILE_SIZE = _native.COST_MODEL_FILE_MAX_BYTES
# The library's defaults for alpha and intercept (BRS_OPT_ALPHA / BRS_OPT_INTERCEPT), from its
# option table: a CostModel("fixed") plans like no cost model.
FIXED_ALPHA = _options.BY_NAME["alpha"].default
FIXED_INTERCEPT = _options.BY_NAME["intercept"].default
FIXED_ENCODER_WEIGHT = _options.BY_NAME["encoder_weight"].default
FIXED_ENCODER_ALPHA = _options.BY_NAME["encoder_alpha"].default
FIXED_ENCODER_INTERCEPT = _options.BY_NAME["encoder_intercept"].default


# -- the terms of a micro-batch's cost --------------------------------------------------------

#: What each of cost_terms is, in its order: the text part's three, then the encoder's.
COST_TERMS = ("1", "bs*L", "bs*L^2", "patches", "patches^2", "images")
#: How many of COST_TERMS are the text part's: a fit of micro-batches without images uses
#: cost_terms(...)[:TEXT_TERMS].
TEXT_TERMS = 3


def cost_terms(batch_size, length, patches=0, squares=0, images=0):
    """The terms of the cost of a micro-batch of ``batch_size`` samples padded to ``length``
    tokens holding ``images`` images of ``patches`` patches in all, whose squares sum to
    ``squares`` (encoder_sums), in COST_TERMS order: ``(1, bs*L, bs*L^2, patches, squares,
    images)``.

    The planner's cost is these terms weighed by CostModel.coefficients, ``(intercept, 1,
    alpha, encoder_weight, encoder_alpha, encoder_intercept)``; a calibration fits seconds as
    the terms weighed by per-term seconds (brs.calibrate on a grid, online calibration from
    sums of products of the terms), which from_seconds and encoder_from_seconds turn into a
    model.
    Every Python use of the formula reads it here, the benchmarks' included. Scalars or numpy
    arrays, which broadcast: each term has the type and shape of ``bs*L`` (plus the encoder's
    inputs). A micro-batch without images has 0 in the encoder's three terms.
    """
    tokens = batch_size * length
    zero = tokens * 0
    return (zero + 1, tokens, tokens * length, zero + patches, zero + squares, zero + images)


def encoder_sums(patches):
    """(patches, squares, images) of a micro-batch's images given as their patch counts: the
    encoder's inputs of cost_terms."""
    counts = [int(p) for p in patches]
    return sum(counts), sum(p * p for p in counts), len(counts)


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
    cost_terms(...))`` (the text part's coefficients, or all of them): the model whose
    coefficients times seconds_per_unit are the fitted ones. The fit must have a positive bs*L
    coefficient (the unit of a cost)."""
    per_micro_batch, per_token, per_token_length = tuple(coefficients)[:TEXT_TERMS]
    return per_token_length / per_token, per_micro_batch / per_token, per_token


def encoder_from_seconds(coefficients):
    """(encoder_weight, encoder_alpha, encoder_intercept) of a fit of seconds over all of
    cost_terms: the encoder's coefficients in the units of its bs*L coefficient (what one
    padded text token costs), as from_seconds gives the text part's. The fit must have a
    positive bs*L coefficient."""
    per_token = coefficients[COST_TERMS.index("bs*L")]
    return tuple(coefficients[COST_TERMS.index(term)] / per_token
                 for term in ("patches", "patches^2", "images"))


class CostModel:
    """alpha, intercept (brs units), max_tokens (int or None) and the fit's quality; the
    encoder part's encoder_weight (brs units per patch), encoder_alpha, encoder_intercept (brs
    units, per image) and max_encoder_tokens (int or None), the library's defaults unless
    calibrated or given.

    ``seconds_per_unit`` (calibrated models only) converts a cost back to seconds: the fitted
    time of one padded token's linear work; ``predict`` uses it. ``timing`` says how the
    timings were taken (clock, estimator, rounds, the machine's load average).
    ``first_shape_seconds`` is what the first run of a new (batch size, padded length) costs
    beyond its warm runs (the median over the calibrated shapes; 0 where not measured): a
    one-time price per distinct shape that the per-micro-batch model leaves out.
    ``encoder`` records the encoder part's calibration (its fit, timings and memory), empty
    when it was not calibrated.
    """

    __slots__ = ("alpha", "intercept", "max_tokens", "r2", "worst_residual", "source", "model",
                 "device", "seconds_per_unit", "memory", "timings", "timing",
                 "first_shape_seconds", "encoder_weight", "encoder_alpha",
                 "encoder_intercept", "max_encoder_tokens", "encoder", "cp_comm_cost",
                 "cp_latency")

    def __init__(self, alpha, intercept=0.0, max_tokens=None, *, r2=None, worst_residual=None,
                 source="fixed", model="", device="", seconds_per_unit=None, memory=None,
                 timings=None, timing=None, first_shape_seconds=0.0,
                 encoder_weight=FIXED_ENCODER_WEIGHT, encoder_alpha=FIXED_ENCODER_ALPHA,
                 encoder_intercept=FIXED_ENCODER_INTERCEPT, max_encoder_tokens=None,
                 encoder=None, cp_comm_cost=None, cp_latency=None):
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
        self.encoder_weight = _non_negative("encoder_weight", encoder_weight)
        self.encoder_alpha = _non_negative("encoder_alpha", encoder_alpha)
        self.encoder_intercept = _non_negative("encoder_intercept", encoder_intercept)
        self.max_encoder_tokens = _args.optional_integer("max_encoder_tokens",
                                                         max_encoder_tokens, 1)
        self.encoder = dict(encoder) if encoder else {}
        # The context-parallel terms, fitted on a timed CP group; None: the library's defaults.
        self.cp_comm_cost = (None if cp_comm_cost is None
                             else _non_negative("cp_comm_cost", cp_comm_cost))
        self.cp_latency = None if cp_latency is None else _non_negative("cp_latency", cp_latency)

    # -- the cost of a micro-batch ---------------------------------------------------------

    @property
    def coefficients(self):
        """The weight of each of cost_terms in the cost: ``(intercept, 1, alpha,
        encoder_weight, encoder_alpha, encoder_intercept)``."""
        return (self.intercept, 1.0, self.alpha, self.encoder_weight, self.encoder_alpha,
                self.encoder_intercept)

    def cost(self, batch_size, length, images=()):
        """intercept + bs*L + alpha*bs*L^2, plus encoder_weight*p + encoder_alpha*p^2 +
        encoder_intercept for each of ``images`` (the micro-batch's patch counts): the library's
        units."""
        return combine(self.coefficients, cost_terms(batch_size, length, *encoder_sums(images)))

    def predict(self, batch_size, length, images=()):
        """Seconds of a micro-batch of ``batch_size`` samples padded to ``length`` tokens, with
        ``images`` (its images' patch counts; scalar batch sizes and lengths only):
        seconds_per_unit * cost(batch_size, length, images).

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
            return self.seconds_per_unit * self.cost(float(batch_size), float(length), images)
        if len(images):
            raise ValueError("predict: images go with one micro-batch (a scalar batch_size and "
                             "length), not with arrays of them")
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

        A vision-language config (one with a ``text_config``) is read through its text_config:
        alpha and the intercept are those of the language model alone, as from the text config
        itself. Its ``vision_config`` gives the encoder part: encoder_weight = the tower's
        linear FLOPs per patch / the text part's per token, encoder_alpha = its attention FLOPs
        per patch per patch of an image (full attention) over the same, encoder_intercept 0.
        """
        terms = analytic_terms(config, causal=causal)
        linear = terms["linear_per_token"]
        alpha = terms["attention_per_token_per_length"] / linear
        name = getattr(config, "model_type", None) or type(config).__name__
        memory = {"activation_bytes_per_token": terms["activation_bytes_per_token"],
                  "flops": {k: v for k, v in terms.items() if k != "activation_bytes_per_token"}}
        encoder = {}
        vision = vision_terms(config)
        if vision is not None:  # a patch's FLOPs in units of a text token's linear FLOPs
            encoder = {"encoder_weight": vision["linear_per_patch"] / linear,
                       "encoder_alpha": vision["attention_per_patch_per_patch"] / linear,
                       "encoder_intercept": 0.0}
            memory["vision_flops"] = vision
        return cls(alpha, 0.0, None, source="analytic", model=str(name), memory=memory,
                   **encoder)

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
                "timings": self.timings, "timing": self.timing,
                "encoder_weight": self.encoder_weight, "encoder_alpha": self.encoder_alpha,
                "encoder_intercept": self.encoder_intercept,
                "max_encoder_tokens": self.max_encoder_tokens, "encoder": self.encoder,
                "cp_comm_cost": self.cp_comm_cost, "cp_latency": self.cp_latency}

    @classmethod
    def from_dict(cls, data, where="cost model"):
        """A CostModel from a file's object, by the rules of docs/formats.md: the dict is
        written as JSON and read by libbrs's reader, the one of CostModel.load and the brs
        command, so a dict and a file are accepted and refused alike."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
        try:
            text = json.dumps(data, allow_nan=False, default=_plain)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}: every value must be one JSON can write, every "
                             "number finite (see docs/formats.md)") from None
        return cls._read(text.encode("utf-8"), where)

    @classmethod
    def _read(cls, data, where):
        """The CostModel of a file's bytes, checked by libbrs (brs_cost_model_file_*)."""
        reader = _files.CostModelFile()
        try:
            reader.parse(data, where)
        except ValueError as exc:
            raise ValueError(f"{exc} (see docs/formats.md)") from None
        record = {key: reader.double(key) for key in ("r2", "worst_residual")}
        record.update((key, reader.value(key)) for key in _RECORD if reader.has(key))
        first_shape = reader.double("first_shape_seconds")
        # The encoder's keys are optional: files written before images were priced, or before a
        # patch had a weight of its own, load as before (absent: the library's default, or no
        # cap).
        encoder = {key: reader.double(key)
                   for key in ("encoder_weight", "encoder_alpha", "encoder_intercept")
                   if reader.has(key)}
        encoder.update((key, reader.double(key)) for key in CP_OPTIONS if reader.has(key))
        return cls(reader.double("alpha"), reader.double("intercept"),
                   reader.integer("max_tokens"),
                   seconds_per_unit=reader.double("seconds_per_unit"),
                   first_shape_seconds=0.0 if first_shape is None else first_shape,
                   max_encoder_tokens=reader.integer("max_encoder_tokens"), **encoder, **record)

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
        """The CostModel of a file, checked by libbrs's reader (docs/formats.md)."""
        path = os.fspath(path)
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE_SIZE + 1)  # the library refuses a larger file
        except OSError as exc:
            raise ValueError(f"cannot read cost model '{path}': {exc.strerror}") from None
        return cls._read(data, f"cost model '{path}'")

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


#: The sampler keywords of the encoder part that a cost model supplies, in resolve_encoder's
#: order.
ENCODER_OPTIONS = ("encoder_weight", "encoder_alpha", "encoder_intercept", "max_encoder_tokens")


def resolve_encoder(cost_model, encoder_weight, encoder_alpha, encoder_intercept,
                    max_encoder_tokens):
    """(encoder_weight, encoder_alpha, encoder_intercept, max_encoder_tokens) for a sampler
    (ENCODER_OPTIONS), as resolve: the values given, else the cost model's; None (the library's
    default) without a cost model."""
    if cost_model is None:
        return encoder_weight, encoder_alpha, encoder_intercept, max_encoder_tokens
    cm = CostModel.coerce(cost_model)
    if encoder_weight is None:
        encoder_weight = cm.encoder_weight
    if encoder_alpha is None:
        encoder_alpha = cm.encoder_alpha
    if encoder_intercept is None:
        encoder_intercept = cm.encoder_intercept
    if max_encoder_tokens is None:
        max_encoder_tokens = cm.max_encoder_tokens
    return encoder_weight, encoder_alpha, encoder_intercept, max_encoder_tokens


#: The sampler keywords of context parallelism's cost that a cost model supplies (resolve_cp).
CP_OPTIONS = ("cp_comm_cost", "cp_latency")


def resolve_cp(cost_model, cp_comm_cost, cp_latency):
    """(cp_comm_cost, cp_latency) for a sampler, as resolve_encoder: the values given, else the
    cost model's where it has them; None (the library's default) otherwise."""
    if cost_model is None:
        return cp_comm_cost, cp_latency
    cm = CostModel.coerce(cost_model)
    return (cm.cp_comm_cost if cp_comm_cost is None else cp_comm_cost,
            cm.cp_latency if cp_latency is None else cp_latency)


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


# -- the file format: libbrs reads it (brs_cost_model_file_*, docs/formats.md) ---------------

# The keys of the calibration's record, kept as the file writes them (r2 and worst_residual are
# numbers, read as such).
_RECORD = ("source", "model", "device", "memory", "timing", "timings", "encoder")


def _plain(value):
    """A number of numpy (or any numeric type) as the JSON number it is; json.dumps calls this
    for the objects it cannot write itself."""
    if hasattr(type(value), "__index__"):
        return value.__index__()
    if isinstance(value, numbers.Real):
        return float(value)
    if hasattr(value, "tolist"):  # a numpy array
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not a JSON value")
