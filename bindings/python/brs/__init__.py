"""brs: batch rebalancing for distributed training, over libbrs (ctypes).

    from brs import BatchRebalanceSampler
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=8, grad_accum=2)
    loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler, collate_fn=pad)

Set BRS_LIBRARY=<path to libbrs.so.1> to use a library from a build tree.
"""

import importlib
import importlib.util

# Imported on first use (PEP 562), not with the package: the `brs` console script (brs._cli)
# execs the C command without paying for torch, which the sampler's and stream's modules import.
_PUBLIC = {
    "BatchRebalanceSampler": (".sampler", "BatchRebalanceSampler"),
    "plan_batch": (".batch", "plan_batch"),
    "RebalancedStream": (".stream", "RebalancedStream"),
    "Plan": (".plan", "Plan"),
    "MicroBatch": (".plan", "MicroBatch"),
    "BrsError": ("._errors", "BrsError"),
    "library_version": ("._native", "version"),
    "CostModel": (".cost_model", "CostModel"),
    "calibrate": (".calibration", "calibrate"),
    # (lengths, images) of a lengths file, read by libbrs (docs/formats.md)
    "read_lengths_file": ("._lengths", "read_file_with_images"),
    # the tensors of a micro-batch padded to the plan's length (max_shapes, length_buckets)
    "PadToPlan": ("._pad_to_plan", "PadToPlan"),
    # each shape of the run once before step 0, training left bit-identical
    "warmup": ("._warmup", "warmup"),
    # will brs pay on my setup? (docs/trial.md)
    "trial": ("._trial", "trial"),
}

__all__ = list(_PUBLIC)


def _version():
    try:
        # Written by the build that installed this package, from meson.build's project version.
        from ._version import version
    except ImportError:
        # The source tree (PYTHONPATH=bindings/python) or Debian's python3-brs: the package is
        # that of the libbrs it loaded, whose version is meson.build's project version too.
        from ._native import version
    return version


def __getattr__(name):
    if name == "__version__":
        value = _version()
    elif name in _PUBLIC:
        module, attribute = _PUBLIC[name]
        value = getattr(importlib.import_module(module, __name__), attribute)
    elif importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f".{name}", __name__)  # brs.sampler, as before
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC) | {"__version__"})
