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
import math
import weakref

from torch.utils.data import DataLoader, IterableDataset
from transformers import Trainer, TrainerCallback
from transformers.distributed.fsdp import is_fsdp_managed_module
from transformers.trainer_callback import ExportableState
from transformers.trainer_utils import has_length, seed_worker
from transformers.utils import is_datasets_available

from brs import BatchRebalanceSampler, CostModel, arguments, options as option_table, warmup
from brs import calibrate as brs_calibrate
from brs.calibration.online import OnlineCalibration, batch_shape
from brs.dataset_lengths import ENCODER_LOADS_COLUMN, dataset_encoder_loads, dataset_lengths

from . import _framework_names, _loader, _metrics, _memory_budget, _sync_choice, accelerate_data_parallel
from ._loader import find_rebalance_sampler
from ._metrics import MetricsWindow, planned_time_name
from .accelerate import prepare_loader

__all__ = ["BatchRebalanceMixin", "BatchRebalanceTrainer", "RebalanceOptions",
           "RebalanceEpochCallback"]

logger = logging.getLogger(__name__)


# The sampler's options that TrainingArguments decides, not RebalanceOptions: the micro-batch
# size (per_device_train_batch_size), gradient_accumulation_steps, the world (dp_size, rank),
# data_seed or seed, the Trainer's shuffle and dataloader_drop_last.
TRAINER_DECIDES = ("per_device_batch_size", "grad_accum", "dp_size", "rank", "seed", "shuffle",
                   "drop_last")
#: The sampler's options a RebalanceOptions forwards: every keyword of the library's option
#: table but TRAINER_DECIDES, in the table's order.
SAMPLER_OPTIONS = tuple(option_table.keyword(option) for option in option_table.TABLE
                        if option_table.keyword(option) not in TRAINER_DECIDES)
# Caps whose "no cap" is None here, not the library's 0: RebalanceOptions refuses 0 for them.
_NONE_IS_NO_CAP = ("max_tokens", "max_encoder_tokens")
# sync="auto": the Trainer's own sync model (brs's value for "unset", see _sync_choice.py).
_SYNC_DEFAULT = "auto"


def _option_type(option):
    if option.is_double:
        return float | None
    if option.is_switch:
        return bool | None
    return (str | None) if option.value_names else (int | None)


def _check_option(keyword, value):
    """The type (and least value) of field ``keyword``, one of SAMPLER_OPTIONS, by its row of
    the library's table, with the sampler's messages (brs.arguments); None: the library's."""
    if keyword == "sync":
        _check_sync(value)
        return
    if value is None or (keyword == "max_shapes" and value == "auto"):
        return
    name = f"RebalanceOptions.{keyword}"
    option = option_table.BY_KEYWORD[keyword]
    if option.is_double:
        arguments.real(name, value)
    elif option.is_switch:
        arguments.flag(name, value)
    elif option.value_names:
        _check_named(name, option, value)
    else:
        arguments.integer(name, value, 1 if keyword in _NONE_IS_NO_CAP else int(option.lower))


def _check_fields(self):
    # Checked here, at construction, not at the first train() after the model was loaded.
    for keyword in SAMPLER_OPTIONS:
        _check_option(keyword, getattr(self, keyword))
    if self.encoder_loads_column is not None and not isinstance(self.encoder_loads_column, str):
        raise TypeError("RebalanceOptions.encoder_loads_column must be a column name or "
                        f"None; got {self.encoder_loads_column!r}")
    arguments.flag("RebalanceOptions.warmup", self.warmup)
    _memory_budget.check("RebalanceOptions.memory_budget", self.memory_budget)
    arguments.flag("RebalanceOptions.calibrate_online", self.calibrate_online)
    arguments.optional_integer("RebalanceOptions.recalibrate_every", self.recalibrate_every, 1)
    if self.recalibrate_every is not None and not self.calibrate_online:
        raise ValueError("RebalanceOptions.recalibrate_every is the period of online "
                         "calibration: pass calibrate_online=True with it, or drop it")


_OPTIONS_DOC = """Planner options beyond what TrainingArguments says (brs.BatchRebalanceSampler's).

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
    patches costs ``encoder_intercept + encoder_weight*p + encoder_alpha*p^2`` beside the text.
    max_encoder_tokens: a hard cap on the image patches of every micro-batch. None: the
    library's default (no cap).

    max_shapes: the most distinct micro-batch shapes (batch size, padded length) of the whole
    run (None or 0: any; "auto": the count that makes the run of max_steps or num_train_epochs
    fastest by a calibrated cost_model's first_shape_seconds); with it, or with length_buckets,
    the data collator is wrapped in brs.PadToPlan so that the tensors have the planned shape
    (docs/trainer.md, shapes).
    warmup: run each shape of the vocabulary once (forward and backward, brs.warmup) before the
    first training step, leaving training bit-identical.

    strategy, and any option the library adds: the sampler's keyword of the same name.

    The fields named after the sampler's options are made from the library's option table
    (brs.options), all but the ones TrainingArguments decides (TRAINER_DECIDES), and forwarded to
    the sampler as given: None is the library's default (sync: "auto"), stated nowhere here. Each
    is checked at construction by its row of the table. Keyword arguments only.
"""

# Built from the option table: one field per keyword of SAMPLER_OPTIONS, then the Trainer
# integration's own.
RebalanceOptions = dataclasses.make_dataclass(
    "RebalanceOptions",
    [(keyword, _option_type(option_table.BY_KEYWORD[keyword]),
      dataclasses.field(default=_SYNC_DEFAULT if keyword == "sync" else None))
     for keyword in SAMPLER_OPTIONS] + [
        ("cost_model", object, dataclasses.field(default=None)),
        ("memory_budget", object, dataclasses.field(default=_memory_budget.AUTO)),
        ("calibrate_online", bool, dataclasses.field(default=False)),
        ("recalibrate_every", int | None, dataclasses.field(default=None)),
        ("length_buckets", object, dataclasses.field(default=None)),
        ("encoder_loads_column", str | None, dataclasses.field(default=ENCODER_LOADS_COLUMN)),
        ("warmup", bool, dataclasses.field(default=False)),
    ],
    namespace={"__module__": __name__, "__doc__": _OPTIONS_DOC, "__post_init__": _check_fields},
    frozen=True, kw_only=True)


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
        self._prebuilt = None
        if self.train_dataset is not None:
            _check_map_style(self.train_dataset)  # fail at construction, not at train()
            self._prebuilt = (self._prebuild_key(), self._train_sampler(self.train_dataset))
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
        prebuilt, self._prebuilt = self._prebuilt, None
        if prebuilt is not None and prebuilt[0] == self._prebuild_key():
            sampler = prebuilt[1]  # built at construction from the same arguments
        else:
            sampler = self._train_sampler(dataset)
        dataset, collator = self._pruned_dataset_and_collator(dataset)
        # max_shapes / length_buckets: the tensors get the planned shape, not the longest's.
        collator = _loader.pad_to_plan(sampler, collator, "the Trainer")
        self._warmup_sampler = sampler if self.rebalance_options.warmup else None
        loader = DataLoader(dataset, batch_sampler=sampler, **self._train_loader_kwargs(collator))
        self._warn_if_loss_is_biased()
        self._rebalance_callback().bind(sampler)
        if self._rebalance_metrics is not None:
            self._rebalance_metrics.bind(sampler)
        if self._online is not None:
            self._online.bind(sampler)
        return prepare_loader(self.accelerator, loader, resolve_sync=False)  # sync chosen above

    def _train_sampler(self, dataset):
        """The sampler of ``dataset``, checked for every epoch the run trains; a bad argument
        is named as TrainingArguments names it. Built when the Trainer is, so that it fails
        there, before training (and reused by get_train_dataloader)."""
        self._check_rebalance_supported(dataset)
        with _framework_names.in_terms_of(_framework_names.TRAINER, type(self).__name__):
            # Before column pruning: the length and encoder_loads columns are no model inputs
            # and would be removed.
            sampler = self._rebalance_sampler(self._train_lengths(dataset),
                                              self._train_encoder_loads(dataset))
            # Every epoch the run trains, before its first step: not a failure at epoch 3.
            sampler.check_epochs(_train_epochs(self.args, sampler.steps_per_epoch))
        return sampler

    def _prebuild_key(self):
        """What the sampler built at construction depends on that a caller may change before
        train(): the dataset, the arguments, the options and the model."""
        args = self.args
        return (id(self.train_dataset), id(self.model), id(self.rebalance_options),
                args.per_device_train_batch_size, args.gradient_accumulation_steps,
                args.world_size, args.seed, args.data_seed, args.dataloader_drop_last,
                args.max_steps, args.num_train_epochs, args.length_column_name)

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
        cost_model = _choose_cost_model(options, self.model)
        max_tokens = options.max_tokens
        if max_tokens is None and getattr(cost_model, "max_tokens", None) is None:
            max_tokens = _memory_budget.derive(options.memory_budget, self.model, cost_model,
                                               int(max(lengths)))
        # RebalanceOptions' sampler options as given (None: the library's default), but the cap
        # derived from the memory and the sync chosen for sync="auto".
        forwarded = {keyword: getattr(options, keyword) for keyword in SAMPLER_OPTIONS}
        forwarded.update(max_tokens=max_tokens,
                         sync=options.sync if choice is None else choice.sync)
        auto_shapes = options.max_shapes == "auto"
        if auto_shapes:  # chosen below, once the run's length in steps is known
            forwarded["max_shapes"] = None
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
            cost_model=cost_model,
            length_buckets=options.length_buckets,
            encoder_loads=encoder_loads,
            **forwarded,
        )
        if auto_shapes:
            sampler.choose_max_shapes(_train_steps(args, sampler.steps_per_epoch))
        _loader.follow(sampler, self.data_collator, "the Trainer")
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
        cost_model = brs_calibrate(
            self.model, self._train_lengths(self.train_dataset), collate_fn=self.data_collator,
            forward=self._compute_loss_of, **kwargs)
        self.rebalance_options = dataclasses.replace(self.rebalance_options,
                                                     cost_model=cost_model)
        return cost_model

    def _compute_loss_of(self, model, batch):
        """(model, batch) -> loss by the Trainer's compute_loss, as its training_step computes
        it: what calibrate_cost_model times."""
        return self.compute_loss(model, batch)

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


def _check_named(name, option, value):
    """An option of named values (strategy): one of its names."""
    names = option.value_names
    what = f"one of the library's values ({', '.join(map(repr, names))})"
    if not isinstance(value, str):
        raise TypeError(f"{name} must be {what}; got {value!r} ({type(value).__name__})")
    if value not in names:
        raise ValueError(f"{name} must be {what}; got {value!r}")


def _check_sync(sync):
    names = option_table.BY_NAME["sync"].value_names
    what = f"'auto' or a sync model of the library ({', '.join(map(repr, names))})"
    if not isinstance(sync, str):
        raise TypeError(f"RebalanceOptions.sync must be {what}; got {sync!r} "
                        f"({type(sync).__name__})")
    if sync != _SYNC_DEFAULT and sync not in names:
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


# -- which cost model plans, when the user picked none ----------------------------------------
# Order: RebalanceOptions(cost_model=...) (a calibrated or saved model); explicit alpha /
# intercept; else the analytic model of the model's own config (brs.CostModel.from_config),
# which follows the architecture's real ratio of attention to linear work; the library's fixed
# default only when the model has no readable config. The choice is logged once.

cost_logger = logging.getLogger("brs.integrations")


def _choose_cost_model(options, model):
    """The CostModel to pass to the sampler (None: the sampler's own defaults)."""
    if options.cost_model is not None:
        chosen = CostModel.coerce(options.cost_model, "RebalanceOptions.cost_model")
        cost_logger.info("brs: planning with the %s cost model alpha=%.3g intercept=%.3g "
                         "max_tokens=%s", chosen.source, chosen.alpha, chosen.intercept,
                         chosen.max_tokens)
        return chosen
    if options.alpha is not None:
        return None  # the user's own numbers
    config = getattr(model, "config", None)
    try:
        chosen = CostModel.from_config(config)
    except (ValueError, TypeError, AttributeError, ZeroDivisionError):
        fixed = CostModel.fixed()
        cost_logger.info("brs: the model's config does not describe a decoder; planning with "
                         "the fixed default alpha=%.3g", fixed.alpha)
        return None
    cost_logger.info("brs: planning with alpha=%.3g derived from the %s config (CostModel."
                     "from_config; calibrate for measured values: docs/calibration.md)",
                     chosen.alpha, chosen.model)
    return chosen


def _train_steps(args, steps_per_epoch):
    """The optimizer steps the Trainer runs: ``max_steps`` when positive, else
    ``num_train_epochs`` (a fraction too) of the sampler's epochs."""
    if args.max_steps > 0:
        return int(args.max_steps)
    return max(1, math.ceil(args.num_train_epochs * steps_per_epoch))


def _train_epochs(args, steps_per_epoch):
    """How many epochs the Trainer runs, the epochs check_epochs checks before the first step:
    ``max_steps`` when positive (it wins over num_train_epochs, as in the Trainer), else
    ``num_train_epochs`` rounded up (a fraction starts an epoch). An epoch is the sampler's
    steps_per_epoch optimizer steps (its grad_accum is gradient_accumulation_steps)."""
    if args.max_steps > 0:
        return -(-args.max_steps // max(1, steps_per_epoch))
    return max(1, math.ceil(args.num_train_epochs))


# -- the callbacks BatchRebalanceMixin adds ---------------------------------------------------

# What the fingerprint depends on that a user changes between runs, for the error message.
_SETTINGS = ("dp_size", "grad_accum", "per_device_batch_size", "seed", "drop_last", "sync")
_SETTING_NAMES = {"dp_size": "world size (data-parallel processes)",
                  "grad_accum": "gradient_accumulation_steps",
                  "per_device_batch_size": "per_device_train_batch_size",
                  "seed": "seed (data_seed if set, else seed)",
                  "drop_last": "dataloader_drop_last",
                  "sync": "sync model (RebalanceOptions.sync; \"auto\" follows the job)"}


class RebalanceEpochCallback(TrainerCallback, ExportableState):
    """Keeps a brs sampler in step with the Trainer's loop. Added by BatchRebalanceMixin; not
    meant to be added by hand.

    - At each epoch start it sets the sampler's epoch from the global step. The Trainer's own
      ``set_epoch`` call does not reach a batch sampler under accelerate's wrappers once
      ``skip_first_batches`` has added one (resume inside an epoch), which would replay epoch 0.
    - It writes the plan's fingerprint (and the settings behind it) into every checkpoint's
      trainer state, and on resume refuses a run whose plan differs: other samples than the
      interrupted run's would be trained, silently. Another number of processes with the same
      global batch is the same sample stream and is accepted (accepts_other_split): the
      Trainer's checkpoints lie on optimizer steps, where such a resume starts.
    """

    def __init__(self):
        self._sampler = None

    def bind(self, sampler):
        self._sampler = sampler

    def state(self):
        sampler = self._sampler
        if sampler is None:
            return {"args": {}, "attributes": {}}
        attributes = {"fingerprint": sampler.fingerprint,
                      "stream_fingerprint": sampler.stream_fingerprint}
        attributes.update({name: getattr(sampler, name) for name in _SETTINGS})
        if sampler.measurements is not None:  # online calibration: the model in force
            attributes["cost"] = sampler.cost_state()
        return {"args": {}, "attributes": attributes}

    def on_train_begin(self, args, state, control, train_dataloader=None, **kwargs):
        sampler = self._resolve(train_dataloader)
        saved = _saved_attributes(state, type(self).__name__)
        if "cost" in saved:  # before the comparison: the saved fingerprint covers that model
            sampler.load_cost_state(saved["cost"])
        if saved.get("fingerprint") in (None, sampler.fingerprint):
            return
        try:
            if sampler.accepts_other_split(_as_sampler_state(saved, state, sampler)):
                return
            hint = ""
        except ValueError as error:  # the same samples, but not resumable with this split
            hint = f" To resume on another number of processes instead: {error}"
        raise ValueError(_mismatch_message(saved, self.state()["attributes"]) + hint)

    def on_epoch_begin(self, args, state, control, train_dataloader=None, **kwargs):
        sampler = self._resolve(train_dataloader)
        sampler.set_epoch(state.global_step // sampler.steps_per_epoch)

    def _resolve(self, train_dataloader):
        # restore_callback_states_from_checkpoint=True replaces this callback by a fresh
        # instance, which finds the sampler again under the Trainer's dataloader.
        if self._sampler is None:
            self._sampler = find_rebalance_sampler(train_dataloader)
        if self._sampler is None:
            raise RuntimeError("RebalanceEpochCallback found no brs sampler: it only works "
                               "with BatchRebalanceMixin's train dataloader")
        return self._sampler


def _saved_attributes(state, name):
    """This callback's attributes in the trainer state (the checkpoint's, on resume)."""
    entry = (state.stateful_callbacks or {}).get(name) or {}
    if isinstance(entry, list):
        entry = entry[-1] if entry else {}
    return entry.get("attributes", {})


def _as_sampler_state(saved, state, sampler):
    """The checkpoint's plan settings in the form of a sampler state at its optimizer step."""
    epoch, step = divmod(state.global_step, sampler.steps_per_epoch)
    return {"fingerprint": saved["fingerprint"],
            "stream_fingerprint": saved.get("stream_fingerprint"), "epoch": epoch, "step": step,
            "micro": 0, **{key: saved.get(key) for key in sampler.split}}


def _mismatch_message(saved, current):
    changed = [f"{_SETTING_NAMES[key]} {saved[key]} -> {current[key]}"
               for key in _SETTINGS if key in saved and saved[key] != current[key]]
    what = "; ".join(changed) if changed else "the sample lengths or the rebalance options"
    return (
        f"cannot resume: the checkpoint's batch plan (fingerprint {saved['fingerprint']}) differs "
        f"from this run's ({current['fingerprint']}); changed: {what}. The resumed run would "
        "train other samples than the interrupted one. Resume with the checkpoint's settings "
        "(same number of processes, batch size, gradient accumulation, seed and dataset), or "
        "start a new run without resume_from_checkpoint.")


class RebalanceMetricsCallback(TrainerCallback):
    """Records the plan of each optimizer step as it ends; BatchRebalanceMixin.log adds the
    ``brs/`` metrics of the steps since the last log to the Trainer's training log, so they
    reach log_history and every reporting integration (TensorBoard, W&B, ...) like the loss.
    Added by BatchRebalanceMixin unless ``rebalance_metrics=False``."""

    def __init__(self):
        self.window = MetricsWindow()
        self._sampler = None

    def bind(self, sampler):
        self._sampler = sampler

    def on_step_end(self, args, state, control, **kwargs):
        sampler = self._sampler
        if sampler is None or state.global_step < 1:
            return
        # The epoch callback keeps the sampler's epoch at global_step // steps_per_epoch, so
        # the step that just ended is this one of the plan.
        done, steps = state.global_step - 1, sampler.steps_per_epoch
        step, epoch = done % steps, done // steps
        self.window.record(sampler.plan(step, epoch=epoch), planned_time_name(sampler),
                           _metrics.unbounded_bound(sampler, step, epoch))


class OnlineCalibrationCallback(TrainerCallback):
    """Online calibration (brs/calibration/online.py) under the Trainer. Added by
    BatchRebalanceMixin for RebalanceOptions(calibrate_online=True).

    BatchRebalanceMixin times each training_step; this callback refits at the boundaries every
    rank knows in advance (on_epoch_end, or on_step_end every ``recalibrate_every`` optimizer
    steps: callbacks run on every rank at the same global step), switches the sampler and logs
    the switch through the Trainer's log (``brs/calibration_*`` keys) and the "brs" logger. The
    cost model in force and the agreed statistics travel in the checkpoint with
    RebalanceEpochCallback's state, which restores them before it compares fingerprints.
    """

    def __init__(self, every, log):
        self.calibration = OnlineCalibration(every)
        self._log = log  # a weakref.WeakMethod of the Trainer's log: no reference cycle
        self._sampler = None

    def bind(self, sampler):
        self._sampler = sampler

    def on_train_begin(self, args, state, control, **kwargs):
        if self._sampler is not None:  # restored by RebalanceEpochCallback on resume
            self.calibration.restore(self._sampler)

    def on_step_end(self, args, state, control, **kwargs):
        if self.calibration.due(state.global_step, epoch_end=False):
            self._recalibrate(args)

    def on_epoch_end(self, args, state, control, **kwargs):
        if self.calibration.due(state.global_step, epoch_end=True):
            self._recalibrate(args)

    def _recalibrate(self, args):
        if self._sampler is None:
            return
        metrics = self.calibration.recalibrate(self._sampler, args.gradient_accumulation_steps)
        log = self._log()
        if log is not None:
            log(metrics)


class BatchRebalanceTrainer(BatchRebalanceMixin, Trainer):
    """transformers.Trainer whose training batches come from a brs.BatchRebalanceSampler."""
