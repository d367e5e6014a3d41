"""Finding the brs sampler under the wrappers a framework puts around a DataLoader."""

from brs import BatchRebalanceSampler


def find_rebalance_sampler(obj, depth=6):
    """The BatchRebalanceSampler under ``obj`` (a DataLoader or a wrapper of one), else None."""
    for _ in range(depth):
        if obj is None or isinstance(obj, BatchRebalanceSampler):
            return obj
        inner = getattr(obj, "batch_sampler", None)
        if inner is None or inner is obj:
            inner = getattr(obj, "sampler", None)
        obj = inner
    return obj if isinstance(obj, BatchRebalanceSampler) else None
