"""A bare BatchRebalanceSampler kept intact when Lightning re-creates a DataLoader's batch sampler.

Under a distributed strategy with ``use_distributed_sampler=True`` (Lightning's default),
Lightning rebuilds a custom batch sampler by calling its class again with the arguments it finds
saved on the instance (``__pl_saved_args`` and friends), the one named ``sampler`` replaced by
its DistributedSampler (``_dataloader_init_kwargs_resolve_sampler`` in lightning's
utilities/data.py). Without them it would call ``BatchRebalanceSampler(sampler, batch_size=...,
drop_last=...)``, which a planner of variable-size batches cannot take.

A brs sampler already plans every rank's micro-batches, so the right rebuild is the same sampler
(its epoch, its position, the object the user holds) wrapped in the Lightning integration's
RebalanceBatchSampler: that puts it where Lightning's ``set_epoch`` looks and checks its ranks
against Lightning's sampler. Nothing here imports Lightning until Lightning itself calls.
"""

import weakref

# The saved keyword that tells Lightning's call of the class from a user's.
_ORIGINAL = "_lightning_recreates"


def save_arguments(sampler):
    """Stores on ``sampler`` what Lightning re-creates it from."""
    # A weak reference: the saved arguments live on the sampler itself, and a strong one would
    # put every sampler in a reference cycle (its native handle then freed only by the collector).
    setattr(sampler, "__pl_saved_args", ())
    setattr(sampler, "__pl_saved_kwargs", {_ORIGINAL: weakref.ref(sampler)})
    setattr(sampler, "__pl_saved_default_kwargs", {"sampler": None})
    setattr(sampler, "__pl_saved_arg_names", ())


def recreated(kwargs):
    """What Lightning's call of the class with ``kwargs`` builds; None for any other call."""
    reference = kwargs.get(_ORIGINAL)
    if reference is None:
        return None
    original = reference()
    if original is None:  # Lightning holds the DataLoader, hence the sampler, while it calls
        raise RuntimeError("the BatchRebalanceSampler Lightning re-creates no longer exists")
    from .integrations.lightning import RebalanceBatchSampler

    return RebalanceBatchSampler(original, sampler=kwargs.get("sampler"))
