"""brs: batch rebalancing for distributed training, over libbrs (ctypes).

    from brs import BatchRebalanceSampler
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=8, grad_accum=2)
    loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler, collate_fn=pad)

Set BRS_LIBRARY=<path to libbrs.so.1> to use a library from a build tree.
"""

from ._errors import BrsError
from ._native import version as library_version
from .plan import MicroBatch, Plan
from .sampler import BatchRebalanceSampler
from .batch import plan_batch
from .stream import RebalancedStream
from .cost_model import CostModel
from .calibration import calibrate

__all__ = ["BatchRebalanceSampler", "plan_batch", "RebalancedStream", "Plan", "MicroBatch", "BrsError", "library_version",
           "CostModel", "calibrate"]
try:
    # Written by the build that installed this package, from meson.build's project version.
    from ._version import version as __version__
except ImportError:
    # The source tree (PYTHONPATH=bindings/python) or Debian's python3-brs: the package is that
    # of the libbrs it loaded, whose version is meson.build's project version too.
    __version__ = library_version
