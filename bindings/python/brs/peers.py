"""The peers brs is measured against, run on given samples so that each comparison is on the
same global batch: transformers' BatchRebalanceSampler (train_sampling_strategy="batch_rebalance"),
the peer brs replaces for data parallelism, and megatron-core's BalancedCPScheduler, the one for
context parallelism.

This is the one module that reaches the peer's private ``_assign``: the split of one optimizer
step's samples into every rank's micro-batches, which its ``__iter__`` calls once a step for
all ranks. brs.trial, the benchmarks (bench/brsbench) and the tests go through here, so a change
of a peer's interface is met in one place. transformers and megatron-core are imported on the
first call only: ``import brs`` needs neither.
"""


def batch_rebalance_class():
    """(transformers' BatchRebalanceSampler, None), or (None, why) where the installed
    transformers lacks it or splits a step otherwise."""
    try:
        from transformers.trainer_pt_utils import BatchRebalanceSampler
    except ImportError as exc:
        return None, f"transformers has no BatchRebalanceSampler ({exc})"
    if not hasattr(BatchRebalanceSampler, "_assign"):
        return None, "transformers' BatchRebalanceSampler has no _assign (a different algorithm)"
    return BatchRebalanceSampler, None


def batch_rebalance(lengths, *, effective_batch_size, dp_size, grad_accum, seed, **options):
    """transformers' sampler over ``lengths`` as rank 0 of the job builds it (its own defaults
    otherwise: alpha 0.001); ``options`` are its other arguments (shuffle, drop_last).
    RuntimeError where transformers has none."""
    cls, why = batch_rebalance_class()
    if cls is None:
        raise RuntimeError(why)
    return cls(lengths=[int(x) for x in lengths], effective_batch_size=effective_batch_size,
               dp_size=dp_size, grad_accum=grad_accum, seed=seed, rank=0, **options)


def assign(sampler, indices, lengths=None):
    """The peer's micro-batches of one step's samples ``indices`` (dataset indices; their
    ``lengths``, default the sampler's own): ``[rank][micro]`` lists of indices."""
    if lengths is None:
        lengths = [sampler.lengths[i] for i in indices]
    return sampler._assign(list(indices), [int(x) for x in lengths])


def recorded_epoch(sampler):
    """(plan, samples) of one epoch of the peer, iterated on rank 0 as the Trainer does: each
    step's split for every rank (``plan[step][rank][micro]``, lists of indices) and its
    samples in the peer's draw order (which brs may then plan too). Each step is planned
    once: its split is recorded as the sampler makes it."""
    plan, samples, split = [], [], sampler._assign

    def recording(indices, step_lengths):
        result = split(indices, step_lengths)
        plan.append([[list(mb) for mb in rank] for rank in result])
        samples.append(list(indices))
        return result

    sampler._assign = recording
    try:
        for _ in sampler:
            pass
    finally:
        del sampler._assign  # the class's own again
    return plan, samples


def least_degree(length, cap, cp_size):
    """The degree memory alone gives a sample, as megatron-core's scheduler picks it and a
    fixed-CP job must take for its longest one: the least power of two c <= cp_size with
    ceil(length / c) <= cap, or None."""
    c = 1
    while c <= cp_size:
        if -(-length // c) <= cap:
            return c
        c *= 2
    return None


def balanced_cp_scheduler_class():
    """(megatron-core's BalancedCPScheduler, None), or (None, why) where megatron-core is not
    installed (pip install "brs[megatron]")."""
    import warnings

    try:
        with warnings.catch_warnings():  # its optional fused kernels' notices, not ours to show
            warnings.simplefilter("ignore")
            from megatron.core.pipeline_parallel.hybrid_cp_schedule import BalancedCPScheduler
    except ImportError as exc:
        return None, f"megatron-core has no BalancedCPScheduler ({exc})"
    return BalancedCPScheduler, None


class _Ranks:
    """The process group BalancedCPScheduler is given: it asks for its size() alone."""

    def __init__(self, size):
        self._size = size

    def size(self):
        return self._size


def balanced_cp_groups(step_lengths, ranks, max_seq_len_per_rank):
    """megatron-core's own schedule of one step's samples (``step_lengths``: {dataset index:
    length}) on ``ranks`` hybrid DP x CP ranks: its ``sample_id_groups``, a list of groups, each
    a list over the ranks of the indices each rank runs in that group (a sample on c ranks is in
    the lists of its c consecutive ranks). RuntimeError where megatron-core is not installed."""
    cls, why = balanced_cp_scheduler_class()
    if cls is None:
        raise RuntimeError(why)
    scheduler = cls(max_seq_len_per_rank=max_seq_len_per_rank, dp_cp_group=_Ranks(ranks))
    _, groups = scheduler.get_groups_and_subsamples(list(step_lengths.items()), None)
    return groups
