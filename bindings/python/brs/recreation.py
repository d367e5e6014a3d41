"""A BatchRebalanceSampler that a framework re-creates stays the same sampler, wrapped.

Under a distributed strategy with ``use_distributed_sampler=True`` (its default), Lightning
rebuilds a custom batch sampler by calling its class again with the arguments it finds saved on
the instance (``__pl_saved_args`` and friends), the one named ``sampler`` replaced by its
DistributedSampler (``_dataloader_init_kwargs_resolve_sampler`` in lightning's
utilities/data.py). Without them it would call ``BatchRebalanceSampler(sampler, batch_size=...,
drop_last=...)``, which a planner of variable-size batches cannot take.

A brs sampler already plans every rank's micro-batches, so the right rebuild is the same sampler
(its epoch, its position, the object the user holds) wrapped in LightningBatchSampler: that puts
it where Lightning's ``set_epoch`` looks and checks its ranks against Lightning's sampler.

Lightning calls the class of the object it holds, ``type(batch_sampler)(*saved_args,
**saved_kwargs)``, so the one place that can answer that call with the wrapper is that class's
own constructor: BatchRebalanceSampler.__new__ asks ``recreated`` here, which tells Lightning's
call (the saved keyword below) from a user's. Lightning's users find the same sampler object
under the wrapper's ``.sampler``: it is a wrapper, not another sampler.

This is core, not brs.integrations.lightning (which exports LightningBatchSampler under its
name): a bare sampler is re-created so even when the user never imported the integration, and
nothing here imports Lightning or any other framework, so ``import brs`` stays light. Nor does
it import brs.sampler: the sampler builds on this module, never the other way round.
"""

import abc
import weakref

# The saved keyword that tells Lightning's call of the class from a user's.
_ORIGINAL = "_lightning_recreates"


class Recreatable(abc.ABC):
    """What LightningBatchSampler wraps: brs.BatchRebalanceSampler registers itself (a virtual
    subclass: its bases stay its own), so that this module need not import brs.sampler."""


class LightningBatchSampler:
    """A Lightning DataLoader's ``batch_sampler``: yields the brs sampler's micro-batches as is,
    and is what Lightning re-creates (with ``set_epoch`` reaching the sampler) under a
    distributed strategy.

    ``rebalance`` is the BatchRebalanceSampler; ``sampler`` is for Lightning only (the
    DistributedSampler it injects under ``use_distributed_sampler=True``, read for its
    ``num_replicas`` and ``rank``). ``.sampler`` is the brs sampler, so that Lightning's
    ``set_epoch`` reaches it.
    """

    batch_size = None  # variable-size micro-batches

    def __init__(self, rebalance, sampler=None):
        if not isinstance(rebalance, Recreatable):  # a brs.BatchRebalanceSampler
            raise TypeError(f"LightningBatchSampler wraps a brs.BatchRebalanceSampler, got "
                            f"{type(rebalance).__name__}")
        self.sampler = rebalance
        self.drop_last = rebalance.drop_last
        self.distributed_sampler = sampler  # what Lightning injected, None before
        if sampler is not None:
            check_topology(rebalance, getattr(sampler, "num_replicas", None),
                           getattr(sampler, "rank", None), "Lightning's distributed sampler")
        # Lightning re-creates a custom batch sampler from these saved arguments, replacing the
        # one named "sampler" (lightning/pytorch/utilities/data.py); without them it would call
        # the class with batch_size=..., which a planner of variable-size batches cannot take.
        setattr(self, "__pl_saved_args", (rebalance,))
        setattr(self, "__pl_saved_kwargs", {})
        setattr(self, "__pl_saved_default_kwargs", {"sampler": None})
        setattr(self, "__pl_saved_arg_names", ("rebalance",))

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        return len(self.sampler)

    def set_epoch(self, epoch):
        self.sampler.set_epoch(epoch)


class EpochSetter:
    """``batch_sampler.sampler`` of a bare BatchRebalanceSampler: forwards ``set_epoch``.

    Lightning's fit loop calls ``set_epoch`` on ``dataloader.sampler`` and on
    ``dataloader.batch_sampler.sampler``, never on the batch sampler itself: this is how a bare
    BatchRebalanceSampler reshuffles every epoch under a plain Trainer. Not the sampler itself,
    so that code following ``.sampler`` links until they end does end; made on each read, so
    that the sampler holds no reference back to it (no reference cycle).
    """

    __slots__ = ("_owner",)

    def __init__(self, owner):
        self._owner = owner

    def set_epoch(self, epoch):
        self._owner.set_epoch(epoch)

    @property
    def epoch(self):
        return self._owner.epoch

    def __repr__(self):
        return f"<set_epoch of {self._owner!r}>"


def check_topology(sampler, dp_size, rank, source):
    """ValueError when ``source`` (a framework's data-parallel view: ``dp_size`` replicas, this
    one ``rank``; None: unknown) disagrees with what ``sampler`` plans for."""
    if dp_size is None or rank is None:
        return
    if (sampler.dp_size, sampler.rank) != (int(dp_size), int(rank)):
        raise ValueError(
            f"the brs sampler plans for dp_size={sampler.dp_size}, rank={sampler.rank} but "
            f"{source} has {dp_size} data-parallel replica(s) and this is replica {rank}: build "
            f"BatchRebalanceSampler(..., dp_size={dp_size}, rank={rank}) or leave both unset "
            "to detect them from torch.distributed")


def save_arguments(sampler):
    """Stores on ``sampler`` what Lightning re-creates it from (BatchRebalanceSampler calls it)."""
    # A weak reference: the saved arguments live on the sampler itself, and a strong one would
    # put every sampler in a reference cycle (its native handle then freed only by the collector).
    setattr(sampler, "__pl_saved_args", ())
    setattr(sampler, "__pl_saved_kwargs", {_ORIGINAL: weakref.ref(sampler)})
    setattr(sampler, "__pl_saved_default_kwargs", {"sampler": None})
    setattr(sampler, "__pl_saved_arg_names", ())


def recreated(kwargs):
    """What Lightning's call of the class with ``kwargs`` builds; None for any other call
    (BatchRebalanceSampler.__new__ asks)."""
    reference = kwargs.get(_ORIGINAL)
    if reference is None:
        return None
    original = reference()
    if original is None:  # Lightning holds the DataLoader, hence the sampler, while it calls
        raise RuntimeError("the BatchRebalanceSampler Lightning re-creates no longer exists")
    return LightningBatchSampler(original, sampler=kwargs.get("sampler"))
