"""transformers' batch_rebalance (trainer_pt_utils.BatchRebalanceSampler), the peer brs replaces,
planned on brs's samples of each step and described by the library's one cost model.

Its ``_assign`` is the function its sampler calls once per optimizer step with that step's
samples; given the samples brs draws for the step (the same global batch), its micro-batches are
loaded into the library (``sampler.describe``), so their step time, padding and waiting are
priced exactly as brs's own plans are. Imported from the pinned transformers release
(requirements-test.txt), never copied.
"""

NAME = "batch_rebalance"


def peer_class():
    """(transformers' BatchRebalanceSampler, None), or (None, why it cannot be compared)."""
    try:
        from transformers.trainer_pt_utils import BatchRebalanceSampler
    except ImportError:
        return None, ("transformers is not installed (pip install '.[trainer]', or "
                      "pip install transformers)")
    if not hasattr(BatchRebalanceSampler, "_assign"):
        return None, "the installed transformers' BatchRebalanceSampler has no _assign"
    return BatchRebalanceSampler, None


def plans(sampler, brs_plans):
    """batch_rebalance's Plan of each of ``brs_plans``' steps, on the same samples."""
    cls, why = peer_class()
    if cls is None:
        raise RuntimeError(why)
    lengths = sampler.lengths
    peer = cls(lengths=[int(x) for x in lengths], effective_batch_size=sampler.per_device_batch_size
               * sampler.grad_accum * sampler.dp_size, dp_size=sampler.dp_size,
               grad_accum=sampler.grad_accum, seed=sampler.seed, rank=0)
    out = []
    for plan in brs_plans:
        samples = [i for rank in plan.micro_batches for mb in rank for i in mb.indices]
        micro_batches = peer._assign(samples, [int(lengths[i]) for i in samples])
        out.append(sampler.describe(micro_batches, plan.step, plan.epoch))
    return out
