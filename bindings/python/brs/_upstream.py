"""transformers' BatchRebalanceSampler (trainer_pt_utils) in brs's terms: its constructor's
arguments and its attribute names, answered by any brs.BatchRebalanceSampler.

The sampler exposes each as a thin attribute (``BatchRebalanceSampler.from_upstream_args``,
``sampler.num_global_batches``, ...) so that code written for upstream's sampler reads the same;
everything here uses the sampler's public attributes only. It is core, not
brs.integrations.transformers: it needs no transformers (docs/python.md, "From transformers'
BatchRebalanceSampler"), and the core imports no integration.
"""

from . import _args


def from_upstream_args(cls, lengths, effective_batch_size, dp_size, grad_accum, shuffle=None,
                       seed=42, rank=None, drop_last=None, alpha=None, max_tokens=None,
                       intercept=None, **options):
    """The sampler that transformers' ``BatchRebalanceSampler(lengths, effective_batch_size,
    dp_size, grad_accum, shuffle, seed, rank, drop_last)`` describes, planned by libbrs.

    ``effective_batch_size`` is the number of samples of one optimizer step over all ranks.
    brs gives each of the dp_size x grad_accum micro-batches of a step the same AVERAGE size,
    so it must be a multiple of dp_size x grad_accum (upstream only asks for at least that
    many); the ValueError says which values work.

    Defaults: ``seed`` is upstream's 42 (the library's own default differs). ``shuffle``,
    ``drop_last``, ``alpha`` (upstream's QUADRATIC_COST_COEF) and ``intercept`` left None
    take the library's defaults, which are upstream's values (a test checks it). ``rank``
    None is the job's rank, as for the constructor: 0 in one process, upstream's default.
    ``max_tokens`` is brs's hard cap on a micro-batch's padded tokens (None: no cap; upstream
    has none). ``options`` are the constructor's other keywords (sync, strategy, packed,
    cost_model).

    Upstream's counts and flags read the same: ``len()``, ``num_global_batches``,
    ``num_full_batches``, ``remainder``, ``has_tail``, ``effective_batch_size``. The samples
    of each step are brs's own draw (its keyed shuffle, not torch.randperm), and with
    drop_last=True a dataset with no full step is an error here, not an empty epoch.
    """
    effective_batch_size = _args.integer("effective_batch_size", effective_batch_size, 1)
    dp_size = _args.integer("dp_size", dp_size, 1)
    grad_accum = _args.integer("grad_accum", grad_accum, 1)
    per_device, rest = divmod(effective_batch_size, dp_size * grad_accum)
    if rest or not per_device:
        raise ValueError(_indivisible_message(effective_batch_size, dp_size, grad_accum))
    return cls(lengths, per_device_batch_size=per_device, dp_size=dp_size,
               grad_accum=grad_accum, rank=rank, seed=seed, shuffle=shuffle,
               drop_last=drop_last, alpha=alpha, intercept=intercept, max_tokens=max_tokens,
               **options)


def effective_batch_size(sampler):
    """Samples per optimizer step over all ranks, a kept short last step aside
    (per_device_batch_size x grad_accum x dp_size, as the library stores them)."""
    return sampler.per_device_batch_size * sampler.grad_accum * sampler.dp_size


def num_global_batches(sampler):
    """Optimizer steps per epoch, the library's steps_per_epoch (upstream's name)."""
    return sampler.steps_per_epoch


def has_tail(sampler):
    """True when the epoch's last step is short: drop_last=False kept the samples left
    after the full steps (topped up to dp_size x grad_accum when fewer; docs/design.md)."""
    return sampler.steps_per_epoch * effective_batch_size(sampler) > len(sampler.lengths)


def num_full_batches(sampler):
    """Steps of a full effective_batch_size in an epoch."""
    return sampler.steps_per_epoch - has_tail(sampler)


def remainder(sampler):
    """Samples left after the full steps: planned in the tail step, or dropped."""
    return len(sampler.lengths) - num_full_batches(sampler) * effective_batch_size(sampler)


def _indivisible_message(effective_batch_size, dp_size, grad_accum):
    micro_batches = dp_size * grad_accum
    below = effective_batch_size // micro_batches * micro_batches
    choices = [str(value) for value in (below, below + micro_batches) if value > 0]
    return (f"effective_batch_size={effective_batch_size} is not a multiple of dp_size x "
            f"grad_accum = {dp_size} x {grad_accum} = {micro_batches}: brs gives every "
            "micro-batch of a step the same average size, effective_batch_size / (dp_size x "
            f"grad_accum); pass effective_batch_size={' or '.join(choices)}, or a dp_size and "
            f"grad_accum whose product divides {effective_batch_size}")
