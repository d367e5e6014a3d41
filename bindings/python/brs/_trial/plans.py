"""Each strategy's epoch as plan[step][rank][micro] -> MicroBatch(indices, padded_length).

brs: brs.BatchRebalanceSampler (every rank of a step from ``plan(step)``). upstream:
transformers' own BatchRebalanceSampler's split of a step (brs/peers.py) given brs's samples of
the same step, as bench/brsbench/same_samples.py does, so the two are compared on the same
global batch. group_by_length and random: the library's
fixed-size strategies ("length_grouped", "random") with the same seed and padding. A
micro-batch's padded length is the plan's (brs) or the longest sample rounded up to
pad_to_multiple_of (the collator's rule, which the others' tensors are built by).
"""

from typing import List, NamedTuple

from .. import peers as _peers

STRATEGIES = ("brs", "upstream", "group_by_length", "random")
_LIBRARY_STRATEGY = {"brs": "balanced", "group_by_length": "length_grouped", "random": "random"}


class MicroBatch(NamedTuple):
    indices: tuple
    padded_length: int

    @property
    def shape(self):
        return (len(self.indices), self.padded_length)


#: transformers' BatchRebalanceSampler, or None (with why) where the installed one lacks it.
upstream_class = _peers.batch_rebalance_class


class Planner:
    """The epoch plans of the strategies at one per-device batch size."""

    def __init__(self, lengths, *, per_device_batch_size, grad_accum, dp_size, seed,
                 pad_to_multiple_of, max_tokens, sampler_options):
        self.lengths = lengths
        self.grad_accum, self.dp_size, self.seed = grad_accum, dp_size, seed
        self.multiple = max(1, int(pad_to_multiple_of or 1))
        self.max_tokens = max_tokens
        self.options = dict(sampler_options)
        self.size = per_device_batch_size
        self._samplers = {}

    def at(self, per_device_batch_size):
        """The same planner at another per-device batch size."""
        return Planner(self.lengths, per_device_batch_size=per_device_batch_size,
                       grad_accum=self.grad_accum, dp_size=self.dp_size, seed=self.seed,
                       pad_to_multiple_of=self.multiple, max_tokens=self.max_tokens,
                       sampler_options=self.options)

    def padded(self, longest):
        return -(-int(longest) // self.multiple) * self.multiple

    def sampler(self, name):
        """The library sampler of a strategy (upstream uses brs's for its samples)."""
        import brs

        name = "brs" if name == "upstream" else name
        if name not in self._samplers:
            options = {"pad_to_multiple_of": self.multiple, "seed": self.seed, "rank": 0,
                       "dp_size": self.dp_size, "grad_accum": self.grad_accum,
                       "strategy": _LIBRARY_STRATEGY[name]}
            if name == "brs":  # the cap and the other options are brs's planner's
                options.update(self.options)
                if self.max_tokens is not None:
                    options["max_tokens"] = self.max_tokens
            self._samplers[name] = brs.BatchRebalanceSampler(
                self.lengths, per_device_batch_size=self.size, **options)
        return self._samplers[name]

    def steps_per_epoch(self, name):
        return self.sampler(name).steps_per_epoch

    def step(self, name, t):
        """plan[rank][micro] of step t of epoch 0."""
        plan = self.sampler(name).plan(t, epoch=0)
        if name != "upstream":
            return [[MicroBatch(tuple(mb.indices), mb.padded_length or self.padded(
                max(self.lengths[i] for i in mb.indices))) for mb in rank]
                for rank in plan.micro_batches]
        samples = [i for rank in plan.micro_batches for mb in rank for i in mb.indices]
        rank_mbs = _peers.assign(self._upstream(), samples)
        return [[MicroBatch(tuple(mb), self.padded(max(self.lengths[i] for i in mb)))
                 for mb in rank] for rank in rank_mbs]

    def _upstream(self):
        if "upstream" not in self._samplers:
            self._samplers["upstream"] = _peers.batch_rebalance(
                self.lengths, effective_batch_size=self.size * self.grad_accum * self.dp_size,
                dp_size=self.dp_size, grad_accum=self.grad_accum, seed=self.seed)
        return self._samplers["upstream"]

    def epoch(self, name):
        """Every step of epoch 0: a list of plan[rank][micro]."""
        return [self.step(name, t) for t in range(self.steps_per_epoch(name))]


def shapes(epoch_plan):
    """The distinct (batch size, padded length) of an epoch, all ranks."""
    return {mb.shape for step in epoch_plan for rank in step for mb in rank}


def worst(epoch_plan):
    """The micro-batch with the most padded tokens (ties: the longer padded length)."""
    return worst_candidates(epoch_plan)[0]


def worst_candidates(epoch_plan):
    """The micro-batches whose memory may be the epoch's peak, distinct shapes, first the one
    with the most padded tokens (activations grow with bs*L), then the most bs*L^2 (attention
    scores, where the kernel materialises them), then the longest (ties: the larger)."""
    keys = (lambda b, l: (b * l, l), lambda b, l: (b * l * l, b), lambda b, l: (l, b))
    best = [None] * len(keys)
    for step in epoch_plan:
        for rank in step:
            for mb in rank:
                b, l = mb.shape
                for k, key in enumerate(keys):
                    value = key(b, l)
                    if best[k] is None or value > best[k][0]:
                        best[k] = (value, mb)
    chosen = {}
    for _, mb in best:
        chosen.setdefault(mb.shape, mb)
    return list(chosen.values())


def flatten(step_plan) -> List[tuple]:
    """(rank, micro, MicroBatch) of a step, rank by rank: the order one process runs them."""
    return [(r, m, mb) for r, rank in enumerate(step_plan) for m, mb in enumerate(rank)]
