"""transformers' BatchRebalanceSampler (train_sampling_strategy="batch_rebalance"), the peer brs
replaces, run on given samples so that the two are compared on the same global batch.

This is the one module that reaches the peer's private ``_assign``: the split of one optimizer
step's samples into every rank's micro-batches, which its ``__iter__`` calls once a step for
all ranks. brs.trial, the benchmarks (bench/brsbench) and the tests go through here, so a change
of transformers' private interface is met in one place. transformers is imported on the first
call only: ``import brs`` needs none.
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
