"""The transformers Trainer with libbrs planning its training micro-batches.

    from brs.integrations.transformers import BatchRebalanceTrainer
    trainer = BatchRebalanceTrainer(model=model, args=args, train_dataset=ds, data_collator=pad)

replaces ``Trainer(..., args=TrainingArguments(train_sampling_strategy="batch_rebalance"))``.
For a trainer derived from Trainer (TRL's SFTTrainer, ...), put the mixin first:
``class RebalancedSFT(BatchRebalanceMixin, SFTTrainer): pass``.

What it reads from TrainingArguments: per_device_train_batch_size (the AVERAGE micro-batch
size), gradient_accumulation_steps, the world size and process index, dataloader_drop_last,
data_seed (else seed), length_column_name, and the dataloader worker settings; of a
vision-language dataset, each sample's images (RebalanceOptions.encoder_loads_column). Options the
upstream sampler lacks come as ``rebalance_options=RebalanceOptions(...)``. Guide:
docs/trainer.md.
"""

import dataclasses
import functools
import logging
import weakref

from torch.utils.data import DataLoader, IterableDataset
from transformers import Trainer
from transformers.distributed.fsdp import is_fsdp_managed_module
from transformers.trainer_utils import has_length, seed_worker
from transformers.utils import is_datasets_available

from brs import BatchRebalanceSampler, arguments, options as option_table, warmup
from brs.calibration.online import batch_shape
from brs.dataset_lengths import ENCODER_LOADS_COLUMN, dataset_encoder_loads, dataset_lengths

from . import _calibrate, _collator_padding, _cost_choice, _memory_budget, _run_epochs
from . import _sync_choice
from ._epoch_callback import RebalanceEpochCallback
from ._metrics_callback import RebalanceMetricsCallback
from ._online_callback import OnlineCalibrationCallback
from ._parallelism import accelerate_data_parallel
from .accelerate import prepare_loader

__all__ = ["BatchRebalanceMixin", "BatchRebalanceTrainer", "RebalanceOptions",
           "RebalanceEpochCallback"]

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class RebalanceOptions:
    """Planner options beyond what TrainingArguments says (see brs.BatchRebalanceSampler).

    alpha, intercept: the cost model ``intercept + bs*L + alpha*bs*L^2`` of a micro-batch of bs
    samples padded to length L. max_tokens: a hard cap on ``bs*L`` (padded tokens) of every
    micro-batch; None for no cap. packed: micro-batches are packed without padding (varlen
    attention), costing ``sum(L) + alpha*sum(L^2)``. cost_model: a brs.CostModel or the path
    of its JSON (brs.calibrate); it supplies alpha, intercept and max_tokens not given here.
    With neither, alpha comes from the model's config (CostModel.from_config), else the
    library's default (docs/calibration.md). sync: "auto" (the Trainer's own sync model:
    "step" under DDP, "micro_step" under FSDP, DeepSpeed ZeRO-2/3 or sync_each_batch), or the
    library's "micro_step" / "step" to override it.

    memory_budget: when neither max_tokens nor the cost model gives a cap, the cap is derived
    from this many bytes (or e.g. "40GiB") and the memory model; "auto" (default): on CUDA the
    device's free memory, on CPU no cap; None: never derived (docs/trainer.md, memory).

    calibrate_online: time every micro-batch trained and refit alpha and intercept to those
    timings at each epoch's end, or every ``recalibrate_every`` optimizer steps; all ranks
    switch to the same model at the same step (docs/trainer.md, online calibration).

    pad_to_multiple_of: the rounding of a micro-batch's padded length; None (default): the
    data collator's ``pad_to_multiple_of``, so that cost, cap and padded tokens are those of
    the tensors it builds. length_buckets: the padded lengths a micro-batch may take (a list,
    or "auto" for the library's ladder; docs/python.md, shapes), None for any length.

    Vision-language samples (docs/trainer.md, vision-language batches): encoder_loads_column
    names the dataset column of each sample's image patch counts ("encoder_loads"); without
    that column the images come from an "image_grid_thw" column (Qwen2-VL processors' patch
    grids, t*h*w patches per image), else there are none. A column named otherwise must exist;
    None plans the text only. encoder_weight, encoder_alpha, encoder_intercept: an image of p
    patches costs ``encoder_intercept + encoder_weight*p + encoder_alpha*p^2`` beside the text. max_encoder_tokens: a hard
    cap on the image patches of every micro-batch. None: the library's default (no cap).

    max_shapes: the most distinct micro-batch shapes (batch size, padded length) of the whole
    run (None or 0: any); with it, or with length_buckets, the data collator is wrapped in
    brs.PadToPlan so that the tensors have the planned shape (docs/trainer.md, shapes).
    warmup: run each shape of the vocabulary once (forward and backward, brs.warmup) before the
    first training step, leaving training bit-identical.
    """

    alpha: float | None = None
    intercept: float | None = None
    max_tokens: int | None = None
    packed: bool = False
    cost_model: object = None
    sync: str = "auto"
    memory_budget: object = _memory_budget.AUTO
    calibrate_online: bool = False
    recalibrate_every: int | None = None
    pad_to_multiple_of: int | None = None
    length_buckets: object = None
    encoder_loads_column: str | None = ENCODER_LOADS_COLUMN
    encoder_weight: float | None = None
    encoder_alpha: float | None = None
    encoder_intercept: float | None = None
    max_encoder_tokens: int | None = None
    max_shapes: int | None = None
    warmup: bool = False

    def __post_init__(self):
        # Checked here, at construction, not at the first train() after the model was loaded.
        for name in ("alpha", "intercept", "encoder_weight", "encoder_alpha", "encoder_intercept"):
            if getattr(self, name) is not None:  # None: the cost model's or the library's
                arguments.real(f"RebalanceOptions.{name}", getattr(self, name))
        arguments.optional_integer("RebalanceOptions.max_tokens", self.max_tokens, 1)
        arguments.optional_integer("RebalanceOptions.max_encoder_tokens",
                                   self.max_encoder_tokens, 1)
        if self.encoder_loads_column is not None and not isinstance(self.encoder_loads_column,
                                                                    str):
            raise TypeError("RebalanceOptions.encoder_loads_column must be a column name or "
                            f"None; got {self.encoder_loads_column!r}")
        arguments.flag("RebalanceOptions.packed", self.packed)
        arguments.optional_integer("RebalanceOptions.max_shapes", self.max_shapes, 0)
        arguments.flag("RebalanceOptions.warmup", self.warmup)
        _check_sync(self.sync)
        _memory_budget.check("RebalanceOptions.memory_budget", self.memory_budget)
        arguments.flag("RebalanceOptions.calibrate_online", self.calibrate_online)
        arguments.optional_integer("RebalanceOptions.recalibrate_every", self.recalibrate_every, 1)
        if self.recalibrate_every is not None and not self.calibrate_online:
            raise ValueError("RebalanceOptions.recalibrate_every is the period of online "
                             "calibration: pass calibrate_online=True with it, or drop it")


class BatchRebalanceMixin:
    """Makes a Trainer (or a subclass of it) train on batches planned by libbrs.

    Must come before the Trainer class in the bases, so that its ``get_train_dataloader`` wins.
    Keyword argument ``rebalance_options``: a RebalanceOptions (default: RebalanceOptions()).
    Keyword argument ``rebalance_metrics`` (True): add the ``brs/`` metrics of the planned steps
    to the Trainer's training logs (log_history, TensorBoard, W&B, ...); False turns them off.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        mro = cls.__mro__
        if Trainer in mro and mro.index(Trainer) < mro.index(BatchRebalanceMixin):
            raise TypeError(f"{cls.__name__}: put BatchRebalanceMixin first in the bases, e.g. "
                            f"class {cls.__name__}(BatchRebalanceMixin, SFTTrainer), so that its "
                            "get_train_dataloader overrides the Trainer's")

    def __init__(self, *args, rebalance_options=None, rebalance_metrics=True, **kwargs):
        if not isinstance(rebalance_metrics, bool):
            raise TypeError(f"rebalance_metrics must be True or False, got {rebalance_metrics!r}")
        if rebalance_options is None:
            rebalance_options = RebalanceOptions()
        if not isinstance(rebalance_options, RebalanceOptions):
            raise TypeError("rebalance_options must be a brs.integrations.transformers."
                            f"RebalanceOptions, got {type(rebalance_options).__name__}")
        self.rebalance_options = rebalance_options
        super().__init__(*args, **kwargs)
        if self.train_dataset is not None:
            _check_map_style(self.train_dataset)  # fail at construction, not at train()
        self.add_callback(RebalanceEpochCallback())
        self._rebalance_metrics = RebalanceMetricsCallback() if rebalance_metrics else None
        if self._rebalance_metrics is not None:
            self.add_callback(self._rebalance_metrics)
        self._online = None
        if rebalance_options.calibrate_online:
            self._online = OnlineCalibrationCallback(rebalance_options.recalibrate_every,
                                                     weakref.WeakMethod(self.log))
            self.add_callback(self._online)

    def get_train_dataloader(self) -> DataLoader:
        """The training DataLoader over a BatchRebalanceSampler, prepared by accelerate."""
        if self.train_dataset is None:
            raise ValueError("Trainer: training requires a train_dataset.")
        dataset = self.train_dataset
        self._check_rebalance_supported(dataset)
        # Before column pruning: the length and encoder_loads columns are no model inputs and
        # would be removed.
        sampler = self._rebalance_sampler(self._train_lengths(dataset),
                                          self._train_encoder_loads(dataset))
        # Every epoch the run trains, before its first step: not a failure at epoch 3's start.
        sampler.check_epochs(_run_epochs.trainer_epochs(self.args, sampler.steps_per_epoch))
        dataset, collator = self._pruned_dataset_and_collator(dataset)
        # max_shapes / length_buckets: the tensors get the planned shape, not the longest's.
        collator = _collator_padding.pad_to_plan(sampler, collator, "the Trainer")
        self._warmup_sampler = sampler if self.rebalance_options.warmup else None
        loader = DataLoader(dataset, batch_sampler=sampler, **self._train_loader_kwargs(collator))
        self._warn_if_loss_is_biased()
        self._rebalance_callback().bind(sampler)
        if self._rebalance_metrics is not None:
            self._rebalance_metrics.bind(sampler)
        if self._online is not None:
            self._online.bind(sampler)
        return prepare_loader(self.accelerator, loader, resolve_sync=False)  # sync chosen above

    def _check_rebalance_supported(self, dataset):
        _check_map_style(dataset)

    def _train_lengths(self, dataset):
        input_names = getattr(self.processing_class, "model_input_names", None) or ["input_ids"]
        return dataset_lengths(dataset, column=self.args.length_column_name,
                               input_name=input_names[0],
                               show_progress=self.is_local_process_zero()
                               and not self.args.disable_tqdm)

    def _train_encoder_loads(self, dataset):
        """Each sample's image patch counts (RebalanceOptions.encoder_loads_column), or None."""
        column = self.rebalance_options.encoder_loads_column
        if column is None:
            return None
        # The default column may be absent (then image_grid_thw, then none); a named one may not.
        images = dataset_encoder_loads(dataset, column=column,
                                       required=column != ENCODER_LOADS_COLUMN)
        logger.info("BatchRebalanceTrainer: %s", images.describe())
        return images.loads

    def _rebalance_sampler(self, lengths, encoder_loads=None):
        args, options = self.args, self._planning_options()
        world_size = max(1, args.world_size)
        dp_size, rank = self._data_parallel_topology(world_size)
        choice = self._auto_sync(options, dp_size)  # None: RebalanceOptions.sync names one
        cost_model = _cost_choice.choose(options, self.model)
        max_tokens = options.max_tokens
        if max_tokens is None and getattr(cost_model, "max_tokens", None) is None:
            max_tokens = _memory_budget.derive(options.memory_budget, self.model, cost_model,
                                               int(max(lengths)))
        sampler = BatchRebalanceSampler(
            lengths,
            # With nn.DataParallel (one process, several GPUs) a micro-batch feeds all of them.
            per_device_batch_size=self._train_batch_size,
            grad_accum=args.gradient_accumulation_steps,
            dp_size=dp_size,
            rank=rank,
            seed=args.data_seed if args.data_seed is not None else args.seed,
            shuffle=True,
            drop_last=args.dataloader_drop_last,
            alpha=options.alpha,
            intercept=options.intercept,
            max_tokens=max_tokens,
            packed=options.packed,
            cost_model=cost_model,
            sync=options.sync if choice is None else choice.sync,
            pad_to_multiple_of=options.pad_to_multiple_of,
            length_buckets=options.length_buckets,
            encoder_loads=encoder_loads,
            encoder_weight=options.encoder_weight,
            encoder_alpha=options.encoder_alpha,
            encoder_intercept=options.encoder_intercept,
            max_encoder_tokens=options.max_encoder_tokens,
            max_shapes=options.max_shapes,
        )
        _collator_padding.follow(sampler, self.data_collator, "the Trainer")
        if choice is not None:
            _sync_choice.log("the Trainer", choice, sampler)
        if options.calibrate_online and options.packed:
            raise ValueError("RebalanceOptions(calibrate_online=True) fits padded micro-batches "
                             "(bs x L); this trainer packs them (packed=True or padding_free): "
                             "calibrate offline (brs.calibrate) and pass cost_model= instead")
        return sampler

    def training_step(self, model, inputs, *args, **kwargs):
        """The Trainer's training step, timed for online calibration when it is on."""
        if getattr(self, "_warmup_sampler", None) is not None:
            self._run_warmup(model)
        online = getattr(self, "_online", None)
        if online is None:
            return super().training_step(model, inputs, *args, **kwargs)
        shape = batch_shape(inputs)
        online.calibration.timer.start(self.args.device)
        loss = super().training_step(model, inputs, *args, **kwargs)
        if shape is not None:
            online.calibration.timer.stop(*shape)
        return loss

    def _run_warmup(self, model):
        """brs.warmup of the model that trains (wrapped: DDP, compiled) before its first step,
        with the Trainer's compute_loss; once per training dataloader."""
        sampler, self._warmup_sampler = self._warmup_sampler, None
        shapes = warmup(model, sampler,
                        forward=lambda m, batch: self.compute_loss(m, batch))
        logger.info("BatchRebalanceTrainer: warmed up %d shapes before the first step: %s",
                    len(shapes), shapes)

    def calibrate_cost_model(self, **kwargs):
        """brs.calibrate on this Trainer's model, training lengths, data_collator and loss
        (compute_loss); the CostModel it returns is planned with from the next training
        dataloader on (rebalance_options.cost_model). kwargs: brs.calibrate's
        (memory_budget=, repeats=, batch_sizes=, optimizer=, ...)."""
        if self.train_dataset is None:
            raise ValueError("calibrate_cost_model: the Trainer has no train_dataset to take "
                             "the lengths from")
        cost_model = _calibrate.calibrate(
            self.model, self._train_lengths(self.train_dataset), collate_fn=self.data_collator,
            forward=_calibrate.trainer_forward(self), **kwargs)
        self.rebalance_options = dataclasses.replace(self.rebalance_options,
                                                     cost_model=cost_model)
        return cost_model

    def _auto_sync(self, options, dp_size):
        """For RebalanceOptions(sync="auto"), the Choice of the Trainer's sync model."""
        if options.sync != "auto":
            return None
        return _sync_choice.choose(*self._sync_model(), dp_size,
                                   self.args.gradient_accumulation_steps)

    def _sync_model(self):
        """(sync model, why) of Trainer.train (transformers 5.23 _inner_training_loop)."""
        # It runs every micro-batch of a step but the last under accelerator.no_sync, except
        # with sync_each_batch or DeepSpeed (whose engine accumulates by itself); a model that
        # transformers sharded at load time (FSDP2) defers only the reduction, not the gathers.
        if (getattr(self, "is_distributed_loading_by_transformers", False)
                and is_fsdp_managed_module(self.model)):
            return _sync_choice.MICRO_STEP, _sync_choice.FSDP_WHY
        return _sync_choice.accelerate_model(
            self.accelerator, "the Trainer runs every micro-batch of a step but the last under "
            "accelerator.no_sync")

    def _data_parallel_topology(self, world_size):
        """(replicas, this replica): the processes, or with tp/cp/sp the data-parallel mesh."""
        if world_size > 1 and getattr(self, "accelerator", None) is not None:
            return accelerate_data_parallel(self.accelerator)
        return world_size, self.args.process_index if world_size > 1 else 0

    def _planning_options(self):
        """rebalance_options, with packed=True when the trainer packs its micro-batches."""
        # TRL's SFTTrainer sets padding_free for padding_free=True and for bfd packing: its
        # collator then concatenates a micro-batch into one sequence, whose cost is the packed one.
        options = self.rebalance_options
        if not getattr(self, "padding_free", False) or options.packed:
            return options
        logger.info("BatchRebalanceTrainer: the trainer packs micro-batches without padding "
                    "(padding_free / packing), so brs plans packed costs (packed=True)")
        return dataclasses.replace(options, packed=True)

    def log(self, logs, *args, **kwargs):
        """The Trainer's log, with the brs/ metrics of the steps since the last training log."""
        metrics = getattr(self, "_rebalance_metrics", None)
        if metrics is not None and "loss" in logs:
            logs = {**logs, **metrics.window.flush()}
        super().log(logs, *args, **kwargs)

    def _pruned_dataset_and_collator(self, dataset):
        """Drop the columns the model does not take, as Trainer._get_dataloader does."""
        if _is_datasets_dataset(dataset):
            return self._remove_unused_columns(dataset, description="Training"), self.data_collator
        collator = self._get_collator_with_removed_columns(self.data_collator,
                                                           description="Training")
        return dataset, collator

    def _train_loader_kwargs(self, collator):
        args = self.args
        return {
            "collate_fn": collator,
            "num_workers": args.dataloader_num_workers,
            "pin_memory": args.dataloader_pin_memory,
            "persistent_workers": args.dataloader_persistent_workers,
            "multiprocessing_context": args.dataloader_multiprocessing_context,
            "prefetch_factor": args.dataloader_prefetch_factor,
            "in_order": args.dataloader_in_order,
            "worker_init_fn": functools.partial(seed_worker,
                                                num_workers=args.dataloader_num_workers,
                                                rank=args.process_index),
        }

    def _warn_if_loss_is_biased(self):
        # Micro-batch sizes vary: a mean loss per micro-batch, averaged over micro-steps and
        # ranks, weighs the samples of small micro-batches more. The Trainer sums the loss over
        # the step's tokens (num_items_in_batch) only when the model or compute_loss_func takes it.
        if not self.model_accepts_loss_kwargs and self.compute_loss_func is None:
            logger.warning(
                "BatchRebalanceTrainer: the model's forward does not accept loss kwargs "
                "(num_items_in_batch) and no compute_loss_func is set, so the loss is a mean per "
                "micro-batch; with variable-size micro-batches that over-weights samples in small "
                "micro-batches. Use a model whose forward takes **kwargs or pass compute_loss_func "
                "(see docs/trainer.md, loss normalisation).")
        elif self.args.world_size > 1 and not self.args.average_tokens_across_devices:
            logger.warning(
                "BatchRebalanceTrainer: average_tokens_across_devices=False normalises each "
                "rank's loss by its own token count; ranks hold different numbers of tokens "
                "here, so set average_tokens_across_devices=True for an exact mean.")

    def _rebalance_callback(self):
        for callback in self.callback_handler.callbacks:
            if isinstance(callback, RebalanceEpochCallback):
                return callback
        callback = RebalanceEpochCallback()
        self.add_callback(callback)
        return callback


def _check_sync(sync):
    names = option_table.BY_NAME["sync"].value_names
    what = f"'auto' or a sync model of the library ({', '.join(map(repr, names))})"
    if not isinstance(sync, str):
        raise TypeError(f"RebalanceOptions.sync must be {what}; got {sync!r} "
                        f"({type(sync).__name__})")
    if sync != "auto" and sync not in names:
        raise ValueError(f"RebalanceOptions.sync must be {what}; got {sync!r}")


def _is_datasets_dataset(dataset):
    if not is_datasets_available():
        return False
    import datasets

    return isinstance(dataset, datasets.Dataset)


def _check_map_style(dataset):
    if isinstance(dataset, IterableDataset) or not has_length(dataset):
        raise ValueError(
            "BatchRebalanceTrainer needs a map-style training dataset with __len__ (a "
            "datasets.Dataset or a torch Dataset): each epoch is planned from the lengths of all "
            f"samples, which an IterableDataset ({type(dataset).__name__}) cannot give. Load "
            "the dataset without streaming; for a stream, brs.RebalancedStream(dataset, "
            "length=..., per_device_batch_size=...) plans balanced micro-batches one window at "
            "a time: iterate DataLoader(stream, batch_size=None, collate_fn=collator) in your own "
            "loop (docs/python.md, streams).")


class BatchRebalanceTrainer(BatchRebalanceMixin, Trainer):
    """transformers.Trainer whose training batches come from a brs.BatchRebalanceSampler."""
