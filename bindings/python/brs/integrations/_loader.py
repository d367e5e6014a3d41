"""The brs sampler under a framework's DataLoader, and what the loader's collator and loss
tell it: what every integration (accelerate, transformers, Lightning) does with the loader.

- find_rebalance_sampler: the BatchRebalanceSampler under the wrappers a framework puts around
  a DataLoader; check_batching: a DataLoader that would batch its micro-batches again.
- The padding a collator adds, so that the plan prices, caps and reports the tensors it builds.
  transformers' padding collators (DataCollatorWithPadding, DataCollatorForSeq2Seq,
  DataCollatorForLanguageModeling, ...) and TRL's keep ``pad_to_multiple_of``; the Trainer wraps
  its collator in a RemoveColumnsCollator (``.data_collator``) and users in functools.partial
  (``.func``). A sampler built without pad_to_multiple_of takes the collator's; one given
  explicitly keeps its own (BatchRebalanceSampler.fill_unset). With max_shapes or
  length_buckets the collator is wrapped in brs.PadToPlan.
- calibrate_loader: brs.calibrate on what the framework trains with, its lengths, its collator
  and its loss (docs/calibration.md): a calibration is worth what it predicts about the
  micro-batches training runs. Each framework module passes its own loss.
"""

import logging

from brs import BatchRebalanceSampler, PadToPlan, calibrate
from . import _vocabulary_log

logger = logging.getLogger("brs")


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


def check_batching(loader, batch_sampler="sampler"):
    """TypeError, in the DataLoader's words, when ``loader`` was given the brs sampler as its
    ``sampler=`` with a ``batch_size``: torch's BatchSampler would batch its micro-batches
    (lists of indices) again. ``batch_sampler``: what the message tells the user to pass."""
    size = getattr(loader, "batch_size", None)
    inner = getattr(getattr(loader, "batch_sampler", None), "sampler", None)
    if size is None or not isinstance(inner, BatchRebalanceSampler):
        return
    raise TypeError(f"DataLoader(batch_size={size}, sampler=<brs sampler>) would batch the brs "
                    f"sampler's micro-batches again: pass DataLoader(dataset, "
                    f"batch_sampler={batch_sampler}, collate_fn=...) and no batch_size")


# -- the collator's padding ------------------------------------------------------------------

_WRAPPERS = ("data_collator", "func", "collate_fn")


def pad_to_multiple_of(collator):
    """The collator's pad_to_multiple_of (an int > 1), or None when it rounds nothing."""
    seen = set()
    while collator is not None and id(collator) not in seen:
        seen.add(id(collator))
        multiple = getattr(collator, "pad_to_multiple_of", None)
        if isinstance(multiple, int) and not isinstance(multiple, bool) and multiple > 1:
            return multiple
        collator = next((getattr(collator, name) for name in _WRAPPERS
                         if getattr(collator, name, None) is not None), None)
    return None


def follow(sampler, collator, framework):
    """Gives ``sampler`` the collator's pad_to_multiple_of unless the user set one; logs it."""
    multiple = pad_to_multiple_of(collator)
    if multiple is None:
        return
    try:
        filled = sampler.fill_unset(pad_to_multiple_of=multiple)
    except RuntimeError:  # already iterating (a loader's workers prefetched): say, not change
        filled = False
    if filled:
        logger.info("brs: %s pads micro-batches to a multiple of %d (its collator's "
                    "pad_to_multiple_of): the plan prices and caps the padded tensors",
                    framework, multiple)
    elif sampler.pad_to_multiple_of != multiple:
        logger.warning("brs: %s's collator pads to a multiple of %d but the sampler plans "
                       "pad_to_multiple_of=%d: build it with pad_to_multiple_of=%d so that "
                       "max_tokens holds for the tensors the collator builds",
                       framework, multiple, sampler.pad_to_multiple_of, multiple)


_WRAP_LOGGED = set()


def pad_to_plan(sampler, collator, framework):
    """``collator`` wrapped in brs.PadToPlan when the sampler bounds the shapes (max_shapes or
    length_buckets): its tensors then have the planned shape, not the longest sample's. In
    packed mode only with max_shapes (the row padded to its vocabulary row; the collator must
    flatten). Logged once per framework on the "brs" logger, and the vocabulary once per
    sampler (_vocabulary_log.py)."""
    _vocabulary_log.log_once(sampler, framework)
    if collator is None or isinstance(collator, PadToPlan):
        return collator
    if not sampler.max_shapes and (sampler.packed or not sampler.length_buckets):
        return collator
    wrapped = PadToPlan(collator, sampler)
    if framework not in _WRAP_LOGGED:
        _WRAP_LOGGED.add(framework)
        what = (f"max_shapes={sampler.max_shapes}" if sampler.max_shapes
                else "length_buckets")
        logger.info("brs: %s pads each micro-batch to the plan's padded length (%s): its "
                    "collator is wrapped in brs.PadToPlan", framework, what)
    return wrapped


# -- a calibration over the loader -----------------------------------------------------------

def calibrate_with_loader(model, dataloader, forward=None, **kwargs):
    """brs.calibrate over the lengths of the brs sampler under ``dataloader`` and its
    collate_fn; ``forward(model, batch) -> loss`` as the loop computes it (default
    ``model(**batch).loss``)."""
    sampler = find_rebalance_sampler(dataloader)
    if sampler is None:
        raise ValueError("calibrate: no brs.BatchRebalanceSampler under this DataLoader; build "
                         "it as DataLoader(dataset, batch_sampler=sampler, collate_fn=...)")
    collate_fn = getattr(dataloader, "collate_fn", None)
    return calibrate(model, sampler.lengths, collate_fn=collate_fn, forward=forward, **kwargs)
