"""HuggingFace accelerate support: prepare a DataLoader whose batch_sampler is brs's.

    sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=8, grad_accum=4, seed=42)
    loader = prepare_dataloader(accelerator, DataLoader(dataset, batch_sampler=sampler,
                                                        collate_fn=collate))

Why not ``accelerator.prepare(loader)``: with more than one process accelerate wraps every
map-style batch sampler in a ``BatchSamplerShard`` that hands process p the batches p, p+n, ...
A BatchRebalanceSampler already yields this rank's own micro-batches, so that wrapper would
keep only every n-th of them and silently drop the rest. This module lets accelerate do
everything else (device placement, gradient-state bookkeeping, save_state) and turns the
wrapper into a passthrough.

It also makes ``set_epoch`` reach the sampler through every wrapper accelerate may add, notably
the ``SkipBatchSampler`` of ``skip_first_batches`` (used to resume inside an epoch), whose
absence would replay epoch 0's order after a resume.
"""

import contextlib
import inspect

import torch.utils.data
from accelerate.data_loader import BatchSamplerShard, DataLoaderAdapter

from brs import BatchRebalanceSampler, CostModel
from brs.calibration import online

from . import _framework_names, _loader, _memory_budget, _sync_choice, accelerate_data_parallel
from ._loader import find_rebalance_sampler

__all__ = ["prepare_dataloader", "PreparedBatchSampler", "find_rebalance_sampler",
           "OnlineCalibration", "device_max_tokens", "calibrate_loader"]


class PreparedBatchSampler:
    """The batch sampler of the DataLoader prepare_dataloader hands to accelerate: the carrier
    a prepared DataLoader iterates, yielding the brs sampler's micro-batches as is.

    accelerate's ``DataLoaderShard.set_epoch`` looks for ``set_epoch`` on its batch sampler, on
    ``batch_sampler.sampler`` and on ``batch_sampler.batch_sampler.sampler``; the Trainer looks
    on ``batch_sampler.batch_sampler``. Naming the brs sampler both ``sampler`` and
    ``batch_sampler`` here puts it where those lookups land, with or without a
    ``SkipBatchSampler`` on top.
    """

    batch_size = None  # variable-size micro-batches

    def __init__(self, sampler):
        if not isinstance(sampler, BatchRebalanceSampler):
            raise TypeError(f"expected a brs.BatchRebalanceSampler, got {type(sampler).__name__}")
        self.sampler = sampler
        self.batch_sampler = sampler
        self.drop_last = sampler.drop_last

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        return len(self.sampler)

    def set_epoch(self, epoch):
        self.sampler.set_epoch(epoch)


def prepare_dataloader(accelerator, dataloader, *, epochs=None):
    """``accelerator.prepare_data_loader(dataloader)`` for a DataLoader built on a brs sampler.

    ``dataloader`` must not be prepared yet and must have been created as
    ``DataLoader(dataset, batch_sampler=<brs.BatchRebalanceSampler>, ...)``; its other settings
    (collate_fn, workers, pinning, generator) are kept. Returns accelerate's prepared loader:
    every process yields exactly its sampler's micro-batches, ``set_epoch`` reaches the sampler
    (also on loaders returned by ``accelerator.skip_first_batches``), and the loader is
    registered with the accelerator like any prepared one.

    With tensor, context or sequence parallelism (a ParallelismConfig), the sampler plans per
    data-parallel replica: build it with ``dp_size, rank = data_parallel_rank(mesh)`` (or
    ``accelerate_data_parallel(accelerator)``), and the ranks of one replica yield the same
    micro-batches.

    A sampler whose ``sync`` is unset or "auto" gets the accelerator's sync model: "step" under
    DDP when accelerate accumulates (``Accelerator(gradient_accumulation_steps > 1)``, whose
    ``accelerator.accumulate(model)`` runs every micro-step but the last under ``no_sync``),
    "micro_step" under FSDP, DeepSpeed ZeRO-2/3 and ``sync_each_batch=True``; else the
    library's default. The choice is logged on the "brs" logger.

    A sampler built without pad_to_multiple_of takes the collate_fn's (transformers' and TRL's
    padding collators keep one), so that max_tokens holds for the tensors it builds; logged.
    With max_shapes or length_buckets set, the collate_fn is wrapped in brs.PadToPlan, so that
    each batch has the planned shape (logged once).

    ``epochs``: the number of epochs the loop will train, if known: every one of them is
    checked now against the sampler's max_tokens (BatchRebalanceSampler.check_epochs), so an
    infeasible cap fails before the first step rather than when a later epoch starts.

    Raises ValueError for accelerator settings that would redistribute batches behind the
    sampler's back (dispatch_batches, split_batches), for an Accelerator whose
    gradient_accumulation_steps (above 1) is not the sampler's grad_accum, for a sampler whose
    dp_size or rank disagrees with the accelerator's data-parallel topology, and for a
    max_tokens that some epoch of ``epochs`` cannot keep, naming the Accelerator's arguments.
    """
    sampler = _rebalance_sampler_of(dataloader)
    _check_accelerator(accelerator, sampler)
    _check_grad_accum(accelerator, sampler)  # the Trainer sets both from its own argument
    # the sampler's own checks, in the Accelerator's words (the job's steps and processes)
    with _framework_names.in_terms_of(_framework_names.ACCELERATE, "prepare_dataloader"):
        _loader.follow(sampler, dataloader.collate_fn, "accelerate")
        if epochs is not None:
            sampler.check_epochs(epochs)
        # max_shapes / length_buckets: the tensors get the planned shape, not the longest's.
        collate_fn = _loader.pad_to_plan(sampler, dataloader.collate_fn, "accelerate")
    return prepare_loader(accelerator, dataloader, collate_fn=collate_fn)


def calibrate_loader(model, dataloader, *, forward=None, **kwargs):
    """brs.calibrate on the batches this loop trains: the lengths of the brs sampler under
    ``dataloader``, its collate_fn, and ``forward(model, batch) -> loss`` as the loop computes
    the loss (default ``model(**batch).loss``). kwargs: brs.calibrate's. Build the sampler
    again with the CostModel it returns (cost_model=) before preparing the loader.

        cost_model = calibrate_loader(model, DataLoader(ds, batch_sampler=sampler,
                                                        collate_fn=collate), memory_budget="40GiB")
    """
    return _loader.calibrate_with_loader(model, dataloader, forward=forward, **kwargs)


def device_max_tokens(model, lengths, *, cost_model=None, memory_budget=_memory_budget.AUTO):
    """The max_tokens to build the sampler with when the user has no cap of their own.

    The cost model's own max_tokens when it has one (brs.calibrate with a memory budget); else
    the cap that ``memory_budget`` holds by the memory model (the calibrated one, else the
    model config's analytic one), after the gradients and AdamW's state of ``model``'s
    trainable parameters: "auto" (default) takes the free memory of the CUDA device ``model``
    is on, and gives None on CPU; a size ("40GiB" or bytes) is used on any device; None gives
    None. Logged on the "brs.integrations" logger (docs/trainer.md, memory). Raises ValueError
    when a given budget cannot hold one sample of the longest length.

        max_tokens = device_max_tokens(model, lengths)        # after model.to(device)
        sampler = brs.BatchRebalanceSampler(lengths, ..., max_tokens=max_tokens)
    """
    _memory_budget.check("memory_budget", memory_budget)
    chosen = None if cost_model is None else CostModel.coerce(cost_model)
    if chosen is not None and chosen.max_tokens is not None:
        return chosen.max_tokens
    return _memory_budget.derive(memory_budget, model, chosen, int(max(lengths)))


def prepare_loader(accelerator, dataloader, *, resolve_sync=True, collate_fn=None):
    """What prepare_dataloader does after the collator's padding and the epochs' check: the
    sync model (unless ``resolve_sync`` is False), then accelerate's preparation. The Trainer
    integration, which has done those and chose its sampler's sync itself, calls it so.
    ``collate_fn``: the prepared loader's, in place of the dataloader's (None: keep it)."""
    sampler = _rebalance_sampler_of(dataloader)
    _check_accelerator(accelerator, sampler)
    if resolve_sync:
        _sync_choice.resolve(sampler, "accelerate", *_sync_model(accelerator))
    carrier = _with_batch_sampler(dataloader, PreparedBatchSampler(sampler), collate_fn)
    with _even_batches_off(accelerator):
        prepared = accelerator.prepare_data_loader(carrier)
    _make_shard_passthrough(prepared, sampler)
    return prepared


def _rebalance_sampler_of(dataloader):
    already_prepared = (isinstance(dataloader, DataLoaderAdapter)
                        or getattr(dataloader, "_is_accelerate_prepared", False))
    if already_prepared:
        raise ValueError("prepare_dataloader() needs the DataLoader as created, before "
                         "accelerator.prepare(); pass the unprepared DataLoader")
    if not isinstance(dataloader, torch.utils.data.DataLoader):
        raise TypeError(f"expected a torch.utils.data.DataLoader, got {type(dataloader).__name__}")
    _loader.check_batching(dataloader)
    batch_sampler = dataloader.batch_sampler
    if isinstance(batch_sampler, PreparedBatchSampler):
        return batch_sampler.sampler
    if isinstance(batch_sampler, BatchRebalanceSampler):
        return batch_sampler
    raise TypeError("the DataLoader's batch_sampler must be a brs.BatchRebalanceSampler: create "
                    "it as DataLoader(dataset, batch_sampler=sampler, collate_fn=...), without "
                    f"batch_size/sampler (got batch_sampler={type(batch_sampler).__name__})")


def _check_accelerator(accelerator, sampler):
    if not all(hasattr(accelerator, name) for name in ("num_processes", "process_index")):
        raise TypeError("accelerator must be an accelerate.Accelerator (the one that prepares "
                        f"the model); got {type(accelerator).__name__}")
    if getattr(accelerator, "dispatch_batches", None):
        raise ValueError(
            "dispatch_batches=True is not supported with a brs.BatchRebalanceSampler: accelerate "
            "would iterate the sampler on process 0 only and slice its variable-size batches "
            "evenly across processes, which undoes the plan. Create the Accelerator with "
            "DataLoaderConfiguration(dispatch_batches=False) (the default for map-style datasets).")
    if getattr(accelerator, "split_batches", False):
        raise ValueError(
            "split_batches=True is not supported with a brs.BatchRebalanceSampler: every process "
            "already gets its own variable-size micro-batch, there is no fixed batch to split. "
            "Create the Accelerator with DataLoaderConfiguration(split_batches=False) and give "
            "the sampler per_device_batch_size = the per-process micro-batch size.")
    _check_topology(accelerator, sampler)


def _check_grad_accum(accelerator, sampler):
    """An Accelerator that accumulates (gradient_accumulation_steps > 1) ends an optimizer step
    every that many micro-batches: the sampler's steps must be as long. With 1 the loop
    accumulates by hand, as long as the sampler says."""
    steps = accelerator.gradient_accumulation_steps
    if steps > 1 and steps != sampler.grad_accum:
        raise ValueError(
            f"Accelerator(gradient_accumulation_steps={steps}) but the brs sampler plans "
            f"grad_accum={sampler.grad_accum} micro-batches per optimizer step: build the "
            f"sampler with grad_accum={steps}, or the optimizer steps cut across the planned ones")


def _check_topology(accelerator, sampler):
    replicas, index = accelerate_data_parallel(accelerator)
    if sampler.dp_size != replicas or sampler.rank != index:
        raise ValueError(
            f"the sampler plans for dp_size={sampler.dp_size}, rank={sampler.rank} but the "
            f"accelerator has {replicas} data-parallel replica(s) and this process belongs to "
            f"replica {index}: build the sampler with dp_size={replicas}, rank={index} "
            "(brs.integrations.data_parallel_rank(mesh) gives both; with pure data parallelism "
            "leave both unset to detect them)")


def _sync_model(accelerator):
    """(sync model, why) of a hand-written loop on ``accelerator`` (see _sync_choice.py)."""
    # Accelerator.accumulate(model) (accelerate 1.15) enters self.no_sync(model) unless
    # sync_gradients (the micro-step that ends an optimizer step, every gradient_accumulation_steps
    # -th) or sync_each_batch; with gradient_accumulation_steps 1 the loop accumulates by hand.
    steps = accelerator.gradient_accumulation_steps
    deferral = (f"accelerator.accumulate(model) runs {steps - 1} of every {steps} micro-steps "
                "under no_sync") if steps > 1 else None
    return _sync_choice.accelerate_model(accelerator, deferral)


# DataLoader arguments that the batch sampler replaces.
_BATCHING_ARGS = {"self", "dataset", "batch_size", "shuffle", "sampler", "batch_sampler",
                  "drop_last"}


def _with_batch_sampler(dataloader, batch_sampler, collate_fn=None):
    """A DataLoader like ``dataloader`` (same collate_fn unless one is given, workers, ...) over
    ``batch_sampler``."""
    names = inspect.signature(torch.utils.data.DataLoader.__init__).parameters
    kwargs = {name: getattr(dataloader, name) for name in names
              if name not in _BATCHING_ARGS and hasattr(dataloader, name)}
    if collate_fn is not None:
        kwargs["collate_fn"] = collate_fn
    return torch.utils.data.DataLoader(dataloader.dataset, batch_sampler=batch_sampler, **kwargs)


@contextlib.contextmanager
def _even_batches_off(accelerator):
    """Older accelerate refuses a batch sampler without batch_size unless even_batches is off."""
    previous = accelerator.even_batches
    accelerator.even_batches = False
    try:
        yield
    finally:
        accelerator.even_batches = previous


def _make_shard_passthrough(prepared, sampler):
    """Turn accelerate's BatchSamplerShard (present with > 1 process) into the identity.

    With one process of one, it yields every batch of the sampler under it, in order. Its
    ``sampler`` attribute is where ``DataLoaderShard.set_epoch`` looks once
    ``skip_first_batches`` has put a SkipBatchSampler above it.
    """
    shard = getattr(prepared, "batch_sampler", None)
    if isinstance(shard, BatchSamplerShard):
        shard.num_processes = 1
        shard.process_index = 0
        shard.sampler = sampler


class OnlineCalibration:
    """Online calibration for a hand-written accelerate loop (docs/trainer.md).

        calibration = OnlineCalibration(accelerator, sampler)   # recalibrate_every=N: steps
        accelerator.register_for_checkpointing(calibration)     # the model in force resumes
        for epoch in range(epochs):
            for batch in loader:
                with calibration.timed(batch):
                    ...forward, backward, optimizer step...
            calibration.epoch_end()

    ``timed`` times the micro-batch (bs and padded L from its 2-D ``input_ids``, real tokens
    from ``attention_mask``). The refit, at ``epoch_end()`` or after every
    ``recalibrate_every`` optimizer steps (grad_accum micro-batches each, counted from this
    object's creation), all-reduces the statistics, switches the sampler on every rank alike and
    logs with ``accelerator.log`` (``brs/calibration_*``) and the "brs" logger. Every rank must
    time the same number of micro-batches.
    """

    def __init__(self, accelerator, sampler, recalibrate_every=None):
        if not isinstance(sampler, BatchRebalanceSampler):
            raise TypeError(f"expected a brs.BatchRebalanceSampler, got {type(sampler).__name__}")
        if recalibrate_every is not None and (isinstance(recalibrate_every, bool) or not
                                              isinstance(recalibrate_every, int)
                                              or recalibrate_every < 1):
            raise ValueError("recalibrate_every must be an int >= 1 (optimizer steps) or None "
                             f"(each epoch); got {recalibrate_every!r}")
        self.accelerator, self.sampler = accelerator, sampler
        self.calibration = online.OnlineCalibration(recalibrate_every)
        self._micro_batches = 0

    @contextlib.contextmanager
    def timed(self, batch):
        shape = online.batch_shape(batch)
        timer = self.calibration.timer
        timer.start(self.accelerator.device)
        yield
        if shape is not None:
            timer.stop(*shape)
        self._micro_batches += 1
        steps, micro = divmod(self._micro_batches, self.sampler.grad_accum)
        if micro == 0 and self.calibration.due(steps, epoch_end=False):
            self._recalibrate()

    def epoch_end(self):
        if self.calibration.due(0, epoch_end=True):
            self._recalibrate()

    def _recalibrate(self):
        metrics = self.calibration.recalibrate(self.sampler, self.sampler.grad_accum)
        self.accelerator.log(metrics)

    def state_dict(self):
        """The cost model in force, where it took over and the agreed statistics."""
        return self.sampler.cost_state()

    def load_state_dict(self, state):
        self.sampler.load_cost_state(state)
        self.calibration.restore(self.sampler)
