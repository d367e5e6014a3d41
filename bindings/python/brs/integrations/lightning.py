"""PyTorch Lightning with libbrs planning the training micro-batches.

    from brs.integrations.lightning import LightningBatchSampler, RebalanceCallback

    def train_dataloader(self):                      # in the LightningModule or DataModule
        sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=8, grad_accum=4)
        return DataLoader(dataset, batch_sampler=LightningBatchSampler(sampler), collate_fn=pad)

    trainer = lightning.Trainer(accumulate_grad_batches=4, callbacks=[RebalanceCallback()])

What the two pieces do, and why Lightning needs them (guide: docs/lightning.md):

- LightningBatchSampler puts the brs sampler where Lightning's ``set_epoch`` looks
  (``batch_sampler.sampler``; a bare brs sampler's own ``.sampler`` forwards it too). Under a
  distributed strategy with ``use_distributed_sampler=True`` (Lightning's default), Lightning
  re-creates the batch sampler around its own DistributedSampler; this one takes that sampler's
  ``num_replicas`` and ``rank`` as the strategy's data-parallel topology, checks the plan against
  it, and keeps yielding brs's micro-batches. A bare BatchRebalanceSampler given as the
  ``batch_sampler`` ends up the same way: Lightning's re-creation of it returns it wrapped in
  LightningBatchSampler (brs/recreation.py, which defines it: a bare sampler is re-created even
  where this module was never imported).
- RebalanceCallback checks ``accumulate_grad_batches`` against the sampler's grad_accum and the
  sampler's ranks against the strategy's, gives a sampler whose ``sync`` is unset or "auto" the
  strategy's sync model (logged on the "brs" logger), saves the sampler position into every
  checkpoint (an exact resume inside an epoch: Lightning itself restarts a plain DataLoader from
  its start), logs the ``brs/`` metrics of each optimizer step with ``LightningModule.log``, and
  gives the training step the plan of its optimizer step (for the token-count loss
  normalisation).
"""

import logging
from collections.abc import Mapping

import lightning.pytorch as pl
from lightning.pytorch.strategies import (DDPStrategy, DeepSpeedStrategy, FSDPStrategy,
                                          ModelParallelStrategy, XLAStrategy)

from brs.calibration.online import OnlineCalibration, batch_shape
from brs.recreation import LightningBatchSampler, check_topology

from . import _framework_names, _loader, _sync_choice
from ._loader import find_rebalance_sampler
from ._metrics import plan_metrics, planned_time_name, unbounded_bound

__all__ = ["LightningBatchSampler", "RebalanceCallback", "step_plan", "calibrate_module"]

logger = logging.getLogger(__name__)


class RebalanceCallback(pl.Callback):
    """Keeps the brs sampler in step with Lightning's fit loop (see the module docstring).

    ``metrics=False`` turns the ``brs/`` metrics off. ``calibrate_online=True`` times every
    training batch and refits the cost model at each epoch's end, or every
    ``recalibrate_every`` optimizer steps, the same on every rank (docs/trainer.md, online
    calibration); the switches are logged with ``LightningModule.log`` (``brs/calibration_*``).
    """

    def __init__(self, metrics=True, calibrate_online=False, recalibrate_every=None):
        if not isinstance(metrics, bool):
            raise TypeError(f"metrics must be True or False, got {metrics!r}")
        self.metrics = metrics
        self._online = _online_calibration(calibrate_online, recalibrate_every)
        self._sampler = None
        self._pending = None  # a loaded state, applied once the sampler exists
        self._consumed = 0  # micro-batches of the current epoch trained (resume included)
        self._plan = None  # (epoch, step, Plan) of the step being trained
        self._resumed_epoch = None  # the epoch a loaded position belongs to, until it starts

    @property
    def state_key(self):
        return "brs.RebalanceCallback"

    # -- fit-loop hooks -----------------------------------------------------------------------

    def on_train_start(self, trainer, pl_module):
        sampler = self._bind(trainer)
        _check_grad_accum(sampler, trainer.accumulate_grad_batches)
        kwargs = trainer.distributed_sampler_kwargs or {"num_replicas": 1, "rank": 0}
        check_topology(sampler, kwargs.get("num_replicas"), kwargs.get("rank"),
                       f"the {type(trainer.strategy).__name__} of Trainer(devices="
                       f"{getattr(trainer, 'num_devices', None)}, "
                       f"num_nodes={getattr(trainer, 'num_nodes', None)})")
        # the sampler's own checks, in the Trainer's words (its steps and devices)
        with _framework_names.in_terms_of(_framework_names.LIGHTNING, "RebalanceCallback"):
            _loader.follow(sampler, _collate_fn(trainer.train_dataloader),
                           "Lightning's train_dataloader")
            _pad_to_plan(trainer, sampler)
            # Every epoch the fit trains, before its first step (unbounded fits check each
            # epoch as it starts).
            epochs = _fit_epochs(trainer, sampler.steps_per_epoch)
            if epochs is not None:
                sampler.check_epochs(epochs)
        # Before a checkpoint's position is loaded: its fingerprint holds the resolved sync.
        # Lightning creates the DataLoader iterator before this hook (FitLoop.setup_data): with
        # num_workers > 0, the steps already prefetched keep the previous sync on every rank.
        _sync_choice.resolve(sampler, f"Lightning's {type(trainer.strategy).__name__}",
                             *_sync_model(trainer.strategy, pl_module))
        if self._pending is not None:
            sampler.load_state_dict(self._pending)
            position = self._pending["step"] * sampler.grad_accum + self._pending["micro"]
            self._consumed, self._pending = position, None
            self._resumed_epoch = sampler.epoch
        else:
            self._resumed_epoch = None
        if self._online is not None:
            self._online.restore(sampler)  # the statistics a loaded position carries

    def on_train_epoch_start(self, trainer, pl_module):
        # Lightning's own set_epoch reaches the sampler too (batch_sampler.sampler); setting it
        # here does not depend on that path. A resumed epoch keeps the position loaded from the
        # checkpoint (same epoch: no reset).
        self._sampler.set_epoch(trainer.current_epoch)
        if self._resumed_epoch != self._sampler.epoch:
            self._consumed = 0
        self._resumed_epoch = None

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if self._online is not None:
            self._online.timer.start(pl_module.device)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self._consumed += 1
        sampler = self._sampler
        if self._online is not None:
            shape = batch_shape(batch)
            if shape is not None:
                self._online.timer.stop(*shape)
        if self.metrics and self._consumed % sampler.grad_accum == 0:
            step = self._consumed // sampler.grad_accum - 1
            plan = self._step_plan(step)
            unbounded = unbounded_bound(sampler, step, sampler.epoch)
            for name, value in plan_metrics(plan, planned_time_name(sampler), unbounded).items():
                pl_module.log(name, float(value), on_step=True, on_epoch=False, batch_size=1)
        if (self._online is not None and self._consumed % sampler.grad_accum == 0
                and self._online.due(trainer.global_step, epoch_end=False)):
            self._recalibrate(pl_module, on_step=True)

    def on_train_epoch_end(self, trainer, pl_module):
        if self._online is not None and self._online.due(trainer.global_step, epoch_end=True):
            self._recalibrate(pl_module, on_step=False)

    def _recalibrate(self, pl_module, on_step):
        metrics = self._online.recalibrate(self._sampler, self._sampler.grad_accum)
        for name, value in metrics.items():  # equal on every rank: no reduction needed
            pl_module.log(name, float(value), on_step=on_step, on_epoch=not on_step,
                          batch_size=1)

    # -- what the training step asks -----------------------------------------------------------

    def step_plan(self):
        """The brs.Plan of the optimizer step the batch now being trained belongs to."""
        if self._sampler is None:
            raise RuntimeError("RebalanceCallback.step_plan() is available once training runs")
        return self._step_plan(self._consumed // self._sampler.grad_accum)

    def _step_plan(self, step):
        epoch = self._sampler.epoch
        if self._plan is None or self._plan[:2] != (epoch, step):
            self._plan = (epoch, step, self._sampler.plan(step, epoch=epoch))
        return self._plan[2]

    # -- checkpoints ---------------------------------------------------------------------------

    def state_dict(self):
        if self._sampler is None:
            return {}
        return {"sampler": self._sampler.state_dict(consumed=self._consumed)}

    def load_state_dict(self, state_dict):
        # Lightning restores callbacks before it builds the dataloaders: keep it for later.
        self._pending = state_dict.get("sampler")

    def _bind(self, trainer):
        _loader.check_batching(_data_loader(trainer.train_dataloader),
                               "LightningBatchSampler(sampler)")
        sampler = find_rebalance_sampler(trainer.train_dataloader)
        if sampler is None:
            raise ValueError(
                "RebalanceCallback found no brs sampler in the train dataloader: return "
                "DataLoader(dataset, batch_sampler=LightningBatchSampler(brs_sampler), ...) from "
                "train_dataloader() (see docs/lightning.md)")
        self._sampler = sampler
        return sampler


def _pad_to_plan(trainer, sampler):
    """With max_shapes or length_buckets, the train DataLoader's collate_fn wrapped in
    brs.PadToPlan, so that its tensors have the planned shape (logged once)."""
    loader = _data_loader(trainer.train_dataloader)
    if loader is None:
        return
    wrapped = _loader.pad_to_plan(sampler, loader.collate_fn,
                                            "Lightning's train_dataloader")
    if wrapped is loader.collate_fn:
        return
    loader.collate_fn = wrapped
    # Lightning made the loader's iterator before this hook (FitLoop.setup_data), with the
    # collate_fn it had then: make it again, before any batch is trained.
    fetcher = getattr(trainer.fit_loop, "_data_fetcher", None)
    if fetcher is not None:
        iter(fetcher)


def _collate_fn(loader, depth=4):
    """The collate_fn of the DataLoader under Lightning's wrappers (CombinedLoader), or None."""
    return getattr(_data_loader(loader, depth), "collate_fn", None)


def _data_loader(loader, depth=4):
    """The DataLoader under Lightning's wrappers (CombinedLoader), or None."""
    for _ in range(depth):
        if loader is None or hasattr(loader, "collate_fn"):
            break
        loader = getattr(loader, "iterables", None) or getattr(loader, "loader", None)
        if isinstance(loader, (list, tuple)) and loader:
            loader = loader[0]
        elif isinstance(loader, dict) and loader:
            loader = next(iter(loader.values()))
    return loader if hasattr(loader, "collate_fn") else None


def step_plan(trainer):
    """The brs.Plan of the optimizer step being trained, from the trainer's RebalanceCallback."""
    for callback in trainer.callbacks:
        if isinstance(callback, RebalanceCallback):
            return callback.step_plan()
    raise ValueError("step_plan() needs a brs RebalanceCallback in Trainer(callbacks=[...])")


def _sync_model(strategy, pl_module):
    """(sync model, why) of Lightning's fit loop under ``strategy`` (see _sync_choice.py)."""
    # lightning 2.6: automatic optimization runs each batch that does not end an optimizer step
    # under _block_parallel_sync_behavior -> strategy.block_backward_sync(), which enters DDP's
    # no_sync (loops/optimization/automatic.py, strategies/parallel.py). DeepSpeed accumulates
    # in its engine (handles_gradient_accumulation); XLA reduces in its optimizer step.
    if not pl_module.automatic_optimization:
        return None, "manual optimization: training_step decides when gradients synchronise"
    if isinstance(strategy, DeepSpeedStrategy):
        zero = (strategy.config or {}).get("zero_optimization") or {}
        return _sync_choice.deepspeed_model(int(zero.get("stage", 0)))
    if isinstance(strategy, (FSDPStrategy, ModelParallelStrategy)):
        return _sync_choice.MICRO_STEP, _sync_choice.FSDP_WHY
    if isinstance(strategy, DDPStrategy) and not isinstance(strategy, XLAStrategy):
        return _sync_choice.STEP, ("DDP: Lightning runs every batch of a step but the last under "
                                   "block_backward_sync (DDP's no_sync), so the gradients are "
                                   "all-reduced once per optimizer step")
    return None, f"brs does not know how {type(strategy).__name__} synchronises"


def _online_calibration(enabled, every):
    if not isinstance(enabled, bool):
        raise TypeError(f"calibrate_online must be True or False, got {enabled!r}")
    if every is not None and not enabled:
        raise ValueError("recalibrate_every is the period of online calibration: pass "
                         "calibrate_online=True with it, or drop it")
    if every is not None and (isinstance(every, bool) or not isinstance(every, int)
                              or every < 1):
        raise ValueError(f"recalibrate_every must be an int >= 1 (optimizer steps); got {every!r}")
    return OnlineCalibration(every) if enabled else None


def _check_grad_accum(sampler, accumulate):
    if accumulate != sampler.grad_accum:
        raise ValueError(
            f"Trainer(accumulate_grad_batches={accumulate}) but the brs sampler plans "
            f"grad_accum={sampler.grad_accum} micro-batches per optimizer step: set both to the "
            "same value, or Lightning's optimizer steps would cut across the planned steps")


def calibrate_module(pl_module, dataloader=None, **kwargs):
    """brs.calibrate on the batches this LightningModule trains: the lengths of the brs sampler
    under ``dataloader`` (default ``pl_module.train_dataloader()``), its collate_fn, and the
    loss of ``pl_module.training_step``. kwargs: brs.calibrate's. Returns the CostModel; pass
    it to the BatchRebalanceSampler (cost_model=) that train_dataloader builds."""
    loader = pl_module.train_dataloader() if dataloader is None else dataloader
    return _loader.calibrate_with_loader(pl_module, loader, forward=_training_step_loss,
                                         **kwargs)


def _training_step_loss(model, batch):
    """A LightningModule's training_step loss (a tensor, or a dict's "loss"): what a
    calibration over Lightning's batches times."""
    out = model.training_step(batch, 0)
    if isinstance(out, Mapping):
        out = out.get("loss")
    if out is None:
        raise TypeError("calibrate: training_step returned no loss (a tensor or a dict with "
                        "'loss'); pass forward=(model, batch) -> loss")
    return out


def _fit_epochs(trainer, steps_per_epoch):
    """How many epochs Lightning's fit runs, the epochs check_epochs checks before the first
    step: the fewer of ``max_epochs`` and the epochs ``max_steps`` spans (an epoch is
    ``steps_per_epoch`` optimizer steps: RebalanceCallback checks accumulate_grad_batches
    against the sampler's grad_accum); None when neither bounds the run (max_epochs=-1 with
    max_steps=-1: training until stopped)."""
    bounds = []
    if trainer.max_epochs is not None and trainer.max_epochs >= 0:
        bounds.append(max(1, trainer.max_epochs))
    if trainer.max_steps is not None and trainer.max_steps > 0:
        bounds.append(-(-trainer.max_steps // max(1, steps_per_epoch)))
    return min(bounds) if bounds else None
