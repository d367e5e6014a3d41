"""libbrs one level down: the C calls themselves, for tools that measure the library call by call.

The benchmarks (bench/brsbench) load plans made by other samplers into the library
(brs_plan_load) and read every plan through its queries, so that one cost model describes
them all. They need what the sampler is built on: ``lib`` (the loaded libbrs, every function
declared with its C signature), the C constants under their brs.h names less ``BRS_`` (``OK``,
``PLAN_MAX_COST``, ...), the handle owners the sampler plans with (``NativeSampler``,
``NativePlan``), ``as_uint32`` (a lengths buffer the library reads), ``image_table`` (each
sample's image patch counts laid out as brs_sampler_set_encoder_loads takes them) and
``check_plan`` (a failed plan call raised as the sampler raises it). Training code uses
BatchRebalanceSampler, plan_batch and RebalancedStream instead.
"""

from . import _native
from ._encoder import image_table
from ._errors import check_plan
from ._handles import NativePlan, NativeSampler
from ._lengths import as_uint32

lib, library_path, version = _native.lib, _native.library_path, _native.version
# Every constant of brs.h that _native declares, so that a new one needs no line here.
globals().update({name: value for name, value in vars(_native).items()
                  if name.isupper() and isinstance(value, int)})

__all__ = ["lib", "library_path", "version", "NativePlan", "NativeSampler", "as_uint32",
           "image_table", "check_plan"]
