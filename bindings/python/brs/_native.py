"""ctypes binding of libbrs.so.1: the loader and one declaration per function of brs.h.

Nothing here plans anything; it only finds the library, declares every function's C signature
(so ctypes converts and checks arguments instead of guessing ints) and refuses a library whose
major version this package was not written for.
"""

import ctypes
import ctypes.util
import importlib.resources
import os

#: The major version of the C ABI this package is written against (BRS_VERSION_MAJOR).
ABI_MAJOR = 1

# Status codes (brs.h); their values never change.
OK = 0
ERR_NULL_POINTER = -1
ERR_INVALID_ARGUMENT = -2
ERR_UNSUPPORTED = -3
ERR_OUT_OF_RANGE = -4
ERR_NO_MEMORY = -5
ERR_STATE = -6
ERR_INVALID_LENGTH = -7
ERR_TOO_FEW_SAMPLES = -8
ERR_SAMPLE_TOO_LONG = -9
ERR_CAP_INFEASIBLE = -10
ERR_TOO_LARGE = -11

MAX_STEP_SAMPLES = 16777216
MAX_MICRO_BATCHES = 16777216

# Sampler option keys (BRS_OPT_*).
OPT_BATCH_SIZE = 1
OPT_GRAD_ACCUM = 2
OPT_DP_SIZE = 3
OPT_RANK = 4
OPT_SEED = 5
OPT_SHUFFLE = 6
OPT_DROP_LAST = 7
OPT_MAX_TOKENS = 8
OPT_PACKED = 9
OPT_ALPHA = 10
OPT_INTERCEPT = 11
OPT_STRATEGY = 12
OPT_SYNC = 13
OPT_PAD_TO_MULTIPLE_OF = 14
OPT_ENCODER_ALPHA = 15
OPT_ENCODER_INTERCEPT = 16
OPT_MAX_ENCODER_TOKENS = 17
OPT_ENCODER_WEIGHT = 18
OPT_MAX_SHAPES = 19
OPT_CP_SIZE = 20
OPT_MAX_TOKENS_PER_RANK = 21
OPT_CP_COMM_COST = 22
OPT_CP_DEGREES = 23
OPT_MAX_SHAPES_SEARCH = 24
OPT_CP_LATENCY = 25

# Values of OPT_STRATEGY and OPT_SYNC (their names: brs_option_value_name).
STRATEGY_BALANCED = 0
STRATEGY_RANDOM = 1
STRATEGY_LENGTH_GROUPED = 2
SYNC_MICRO_STEP = 0
SYNC_STEP = 1

# Option types (brs_option_type).
OPTION_INT = 0
OPTION_DOUBLE = 1

# Option scopes (brs_option_scope): who shares an option's value.
OPTION_SCOPE_RANK = 0
OPTION_SCOPE_SPLIT = 1
OPTION_SCOPE_RUN = 2

LENGTHS_COPY = 0
LENGTHS_BORROW = 1

# Plan query keys (BRS_PLAN_*).
PLAN_EPOCH = 1
PLAN_STEP = 2
PLAN_NUM_SAMPLES = 3
PLAN_DP_SIZE = 4
PLAN_GRAD_ACCUM = 5
PLAN_TOTAL_PADDED_TOKENS = 6
PLAN_TOTAL_REAL_TOKENS = 7
PLAN_MAX_PADDED_TOKENS = 8
PLAN_MEGABATCH_SIZE = 9
PLAN_TOTAL_ENCODER_TOKENS = 10
PLAN_MAX_ENCODER_TOKENS = 11
PLAN_CP_SIZE = 12
PLAN_MAX_RANK_TOKENS = 13
PLAN_MAX_COST = 20
PLAN_LOWER_BOUND = 21
PLAN_TOTAL_COST = 22
PLAN_MICRO_SYNC_TIME = 23
PLAN_STEP_SYNC_TIME = 24
PLAN_TIME_LOWER_BOUND = 25
PLAN_ENCODER_COST = 26
# Where the step time goes (include/brs.h, BRS_PLAN_STEP_TIME): useful + padding + waiting
# = ranks x step time.
PLAN_STEP_TIME = 27
PLAN_USEFUL_TIME = 28
PLAN_PADDING_TIME = 29
PLAN_WAITING_TIME = 30


# The largest cost-model file (BRS_COST_MODEL_FILE_MAX_BYTES): read one byte more, the library
# refuses it.
COST_MODEL_FILE_MAX_BYTES = 16777216


class brs_sampler(ctypes.Structure):
    """Opaque struct brs_sampler: only ever handled through a pointer."""


class brs_plan(ctypes.Structure):
    """Opaque struct brs_plan: only ever handled through a pointer."""


class brs_lengths_file(ctypes.Structure):
    """Opaque struct brs_lengths_file (since 1.5): the lengths-file reader."""


class brs_cost_model_file(ctypes.Structure):
    """Opaque struct brs_cost_model_file (since 1.5): the cost-model-file reader."""


# Distinct pointer types, so passing a plan where a sampler is expected is a ctypes TypeError
# here instead of undefined behaviour in C.
SamplerPtr = ctypes.POINTER(brs_sampler)
PlanPtr = ctypes.POINTER(brs_plan)
LengthsFilePtr = ctypes.POINTER(brs_lengths_file)
CostModelFilePtr = ctypes.POINTER(brs_cost_model_file)

_status = ctypes.c_int32  # brs_status
_key = ctypes.c_int32  # brs_option, brs_plan_key
_i64p = ctypes.POINTER(ctypes.c_int64)
_u64p = ctypes.POINTER(ctypes.c_uint64)
_dblp = ctypes.POINTER(ctypes.c_double)
_keyp = ctypes.POINTER(ctypes.c_int32)
_strp = ctypes.POINTER(ctypes.c_char_p)

#: name -> (restype, argtypes): every function of include/brs.h, in the header's order.
SIGNATURES = {
    "brs_version_number": (ctypes.c_uint32, []),
    "brs_version_string": (ctypes.c_char_p, []),
    "brs_strerror": (ctypes.c_char_p, [_status]),
    "brs_option_bounds_int": (_status, [_i64p, _i64p, _key]),
    "brs_option_bounds_double": (_status, [_dblp, _dblp, _key]),
    "brs_option_count": (_status, [ctypes.POINTER(ctypes.c_size_t)]),
    "brs_option_key": (_status, [_keyp, ctypes.c_size_t]),
    "brs_option_find": (_status, [_keyp, ctypes.c_char_p]),
    "brs_option_name": (_status, [_strp, _key]),
    "brs_option_type": (_status, [ctypes.POINTER(ctypes.c_int32), _key]),
    "brs_option_default_int": (_status, [_i64p, _key]),
    "brs_option_default_double": (_status, [_dblp, _key]),
    "brs_option_help": (_status, [_strp, _key]),
    "brs_option_value_name": (_status, [_strp, _key, ctypes.c_int64]),
    "brs_option_value_find": (_status, [_i64p, _key, ctypes.c_char_p]),
    "brs_option_keyword": (_status, [_strp, _key]),
    "brs_option_scope": (_status, [ctypes.POINTER(ctypes.c_int32), _key]),
    "brs_sampler_new": (_status, [ctypes.POINTER(SamplerPtr)]),
    "brs_sampler_free": (None, [SamplerPtr]),
    "brs_sampler_set_lengths": (
        _status, [SamplerPtr, ctypes.POINTER(ctypes.c_uint32), ctypes.c_size_t, ctypes.c_int32]),
    "brs_sampler_set_int": (_status, [SamplerPtr, _key, ctypes.c_int64]),
    "brs_sampler_set_double": (_status, [SamplerPtr, _key, ctypes.c_double]),
    "brs_sampler_get_int": (_status, [_i64p, SamplerPtr, _key]),
    "brs_sampler_get_double": (_status, [_dblp, SamplerPtr, _key]),
    "brs_sampler_validate": (_status, [SamplerPtr]),
    "brs_sampler_steps_per_epoch": (_status, [_u64p, SamplerPtr]),
    "brs_sampler_fingerprint": (_status, [_u64p, SamplerPtr]),
    "brs_sampler_stream_fingerprint": (_status, [_u64p, SamplerPtr]),
    "brs_sampler_check_epoch": (_status, [_u64p, _u64p, SamplerPtr, ctypes.c_uint64]),
    "brs_sampler_set_length_buckets": (
        _status, [SamplerPtr, ctypes.POINTER(ctypes.c_uint32), ctypes.c_size_t]),
    "brs_sampler_get_length_buckets": (
        _status, [ctypes.POINTER(ctypes.POINTER(ctypes.c_uint32)),
                  ctypes.POINTER(ctypes.c_size_t), SamplerPtr]),
    "brs_sampler_bucket_ladder": (
        _status, [ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_size_t), SamplerPtr,
                  ctypes.c_uint32, ctypes.c_size_t]),
    "brs_sampler_shapes": (
        _status, [_u64p, ctypes.POINTER(ctypes.c_size_t), SamplerPtr, ctypes.c_uint64,
                  ctypes.c_size_t]),
    "brs_sampler_shape_vocabulary": (
        _status, [_u64p, ctypes.POINTER(ctypes.c_size_t), SamplerPtr, ctypes.c_size_t]),
    "brs_sampler_last_error": (ctypes.c_char_p, [SamplerPtr]),
    "brs_plan_new": (_status, [ctypes.POINTER(PlanPtr)]),
    "brs_plan_free": (None, [PlanPtr]),
    "brs_plan_compute": (_status, [PlanPtr, SamplerPtr, ctypes.c_uint64, ctypes.c_uint64]),
    "brs_plan_compute_batch": (
        _status, [PlanPtr, SamplerPtr, ctypes.POINTER(ctypes.c_uint32), ctypes.c_size_t]),
    "brs_plan_load": (
        _status, [PlanPtr, SamplerPtr, _u64p, _u64p, ctypes.c_size_t, ctypes.c_uint64,
                  ctypes.c_uint64]),
    "brs_plan_get_int": (_status, [_i64p, PlanPtr, _key]),
    "brs_plan_get_double": (_status, [_dblp, PlanPtr, _key]),
    "brs_plan_micro_batch": (
        _status, [ctypes.POINTER(_u64p), ctypes.POINTER(ctypes.c_size_t), PlanPtr,
                  ctypes.c_int64, ctypes.c_int64]),
    "brs_plan_micro_batch_stats": (
        _status, [_u64p, _u64p, _dblp, PlanPtr, ctypes.c_int64, ctypes.c_int64]),
    "brs_plan_last_error": (ctypes.c_char_p, [PlanPtr]),
    "brs_plan_cp_micro_steps": (_status, [_u64p, PlanPtr]),
    "brs_plan_cp_micro_batch": (
        _status, [ctypes.POINTER(_u64p), ctypes.POINTER(ctypes.c_size_t), _u64p, _u64p, PlanPtr,
                  ctypes.c_uint64, ctypes.c_uint64]),
    "brs_plan_cp_micro_batch_stats": (
        _status, [_u64p, _u64p, _dblp, PlanPtr, ctypes.c_uint64, ctypes.c_uint64]),
    "brs_plan_cp_token_ranges": (
        _status, [_u64p, ctypes.POINTER(ctypes.c_size_t), PlanPtr, ctypes.c_uint64,
                  ctypes.c_uint64, ctypes.c_size_t]),
    "brs_sampler_set_encoder_loads": (
        _status, [SamplerPtr, ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64),
                  ctypes.c_size_t]),
    "brs_sampler_encoder_load": (_status, [_u64p, _u64p, SamplerPtr, ctypes.c_uint64]),
    "brs_plan_compute_batch_images": (
        _status, [PlanPtr, SamplerPtr, ctypes.POINTER(ctypes.c_uint32),
                  ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64),
                  ctypes.c_size_t]),
    "brs_plan_micro_batch_encoder": (
        _status, [_u64p, _u64p, _dblp, PlanPtr, ctypes.c_int64, ctypes.c_int64]),
    "brs_lengths_file_new": (_status, [ctypes.POINTER(LengthsFilePtr)]),
    "brs_lengths_file_free": (None, [LengthsFilePtr]),
    "brs_lengths_file_parse": (
        _status, [LengthsFilePtr, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]),
    "brs_lengths_file_begin": (_status, [LengthsFilePtr, ctypes.c_char_p]),
    "brs_lengths_file_feed": (_status, [LengthsFilePtr, ctypes.c_char_p, ctypes.c_size_t]),
    "brs_lengths_file_finish": (_status, [LengthsFilePtr]),
    "brs_lengths_file_lengths": (
        _status, [ctypes.POINTER(ctypes.POINTER(ctypes.c_uint32)),
                  ctypes.POINTER(ctypes.c_size_t), LengthsFilePtr]),
    "brs_lengths_file_images": (
        _status, [ctypes.POINTER(ctypes.POINTER(ctypes.c_uint32)), ctypes.POINTER(_u64p),
                  LengthsFilePtr]),
    "brs_lengths_file_last_error": (ctypes.c_char_p, [LengthsFilePtr]),
    "brs_cost_model_file_new": (_status, [ctypes.POINTER(CostModelFilePtr)]),
    "brs_cost_model_file_free": (None, [CostModelFilePtr]),
    "brs_cost_model_file_parse": (
        _status, [CostModelFilePtr, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]),
    "brs_cost_model_file_has": (
        _status, [ctypes.POINTER(ctypes.c_int32), CostModelFilePtr, ctypes.c_char_p]),
    "brs_cost_model_file_get_double": (_status, [_dblp, CostModelFilePtr, ctypes.c_char_p]),
    "brs_cost_model_file_get_int": (_status, [_i64p, CostModelFilePtr, ctypes.c_char_p]),
    "brs_cost_model_file_get_json": (
        _status, [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                  CostModelFilePtr, ctypes.c_char_p]),
    "brs_cost_model_file_last_error": (ctypes.c_char_p, [CostModelFilePtr]),
}

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _bundled():
    # importlib.resources, not __file__: an editable install (pip install -e .) serves the
    # package from the source tree but the library from meson-python's build tree, and only the
    # package's resource reader knows where that is.
    package = importlib.resources.files(__package__)
    exact = package / "libbrs.so.1"
    if exact.is_file():
        return os.fspath(exact)
    # A wheel cannot hold symlinks, so the bundled copy may carry its full file version.
    versioned = sorted(os.fspath(entry) for entry in package.iterdir()
                       if entry.name.startswith("libbrs.so.1."))
    return versioned[0] if versioned else os.path.join(_PACKAGE_DIR, "libbrs.so.1")


def _candidates():
    """The places to look, in the documented order: (description, path or name or None)."""
    env = os.environ.get("BRS_LIBRARY")
    if env:
        yield "$BRS_LIBRARY", env
    yield "bundled in the package", _bundled()
    yield "the loader path", "libbrs.so.1"
    # Last, because it runs ldconfig/gcc: only pay for it when everything else failed.
    yield "ctypes.util.find_library('brs')", ctypes.util.find_library("brs")


def _open():
    failures = []
    for where, name in _candidates():
        if name is None:
            failures.append(f"{where}: nothing found")
            continue
        if os.sep in name and not os.path.exists(name):
            failures.append(f"{where}: {name}: no such file")
            continue
        try:
            return ctypes.CDLL(name), name
        except OSError as exc:
            failures.append(f"{where}: {exc}")
    raise ImportError(
        "brs: cannot load libbrs.so.1; tried, in order:\n  " + "\n  ".join(failures)
        + "\nBuild it (meson setup build && meson compile -C build) and set "
        "BRS_LIBRARY=build/libbrs/libbrs.so.1, or install it (pip install . or meson install).")


def _declare(lib, path):
    for name, (restype, argtypes) in SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError(f"brs: {path} does not export {name}; it is not libbrs 1.x") from None
        fn.restype = restype
        fn.argtypes = argtypes


def _check_major(lib, path):
    number = lib.brs_version_number()
    if number // 10000 != ABI_MAJOR:
        raise ImportError(
            f"brs: {path} is libbrs {lib.brs_version_string().decode()}, but this package needs "
            f"major version {ABI_MAJOR}; install a matching libbrs or set BRS_LIBRARY")


def _load():
    lib, path = _open()
    _declare(lib, path)
    _check_major(lib, path)
    return lib, path


lib, library_path = _load()
version = lib.brs_version_string().decode()

# The hot path of iteration, one call per yielded micro-batch: ctypes' argtypes conversion costs
# about 3 us a call there, three times the call itself. So iteration uses a second, undeclared
# function object of the same symbol and passes every argument already in its C type
# (byref of the two out-parameters, the PlanPtr, c_int64 rank and micro); the declared
# lib.brs_plan_micro_batch serves every other caller.
plan_micro_batch_prepared = lib["brs_plan_micro_batch"]
plan_micro_batch_prepared.restype = ctypes.c_int32
