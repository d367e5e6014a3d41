"""transformers' batch_rebalance (trainer_pt_utils.BatchRebalanceSampler), the peer brs replaces,
planned on brs's samples of each step and described by the library's one cost model.

Its split of one step's samples (brs/peers.py, the one module reaching its private
``_assign``) runs on the samples brs draws for the step (the same global batch); its micro-batches
are loaded into the library (``sampler.describe``), so their step time, padding and waiting are
priced exactly as brs's own plans are. Imported from the pinned transformers release
(requirements-test.txt), never copied.
"""

from . import peers

NAME = "batch_rebalance"


def peer_class():
    """(transformers' BatchRebalanceSampler, None), or (None, why it cannot be compared)."""
    try:
        import transformers  # noqa: F401  (only to tell "not installed" from "too old")
    except ImportError:
        return None, ("transformers is not installed (pip install '.[trainer]', or "
                      "pip install transformers)")
    return peers.batch_rebalance_class()


def plans(sampler, brs_plans):
    """batch_rebalance's Plan of each of ``brs_plans``' steps, on the same samples."""
    cls, why = peer_class()
    if cls is None:
        raise RuntimeError(why)
    peer = peers.batch_rebalance(sampler.lengths, effective_batch_size=sampler.per_device_batch_size
                                 * sampler.grad_accum * sampler.dp_size, dp_size=sampler.dp_size,
                                 grad_accum=sampler.grad_accum, seed=sampler.seed)
    out = []
    for plan in brs_plans:
        samples = [i for rank in plan.micro_batches for mb in rank for i in mb.indices]
        out.append(sampler.describe(peers.assign(peer, samples), plan.step, plan.epoch))
    return out
