"""The plan of one optimizer step for every rank, copied out of libbrs into plain Python values."""

from typing import List, NamedTuple


class MicroBatch(NamedTuple):
    """One micro-batch: dataset indices (longest sample first) and what it weighs."""

    indices: List[int]
    padded_tokens: int  # batch size * padded length: the longest, rounded by pad_to_multiple_of
    # and length_buckets (packed mode: the sum of lengths, rounded as one row)
    real_tokens: int  # sum of the samples' lengths: what a token-mean loss divides by
    num_samples: int
    cost: float  # in the cost model's units: intercept + bs*L + alpha*bs*L^2, plus encoder_cost
    # The vision encoder's side (encoder_loads=): image patches, images, their cost; 0 without.
    encoder_tokens: int = 0
    images: int = 0
    encoder_cost: float = 0.0
    # The length every row of the micro-batch's tensors is padded to: padded_tokens / num_samples
    # (the longest, rounded as the plan prices it; with max_shapes a vocabulary length); packed
    # mode: the one row's padded total. 0 when unknown.
    padded_length: int = 0
    # Context parallelism (cp_size > 1 or max_tokens_per_rank; brs/_context_parallel.py): the
    # global ranks sharing this micro-batch (its CP degree's group; (rank,) for a placeholder), and
    # the (index, start, end) token ranges of its samples this rank computes; padded_tokens and
    # real_tokens then count what this rank holds. Empty without context parallelism.
    cp_ranks: tuple = ()
    token_ranges: list = ()


_TOTALS = ("epoch", "step", "num_samples", "max_cost", "lower_bound", "total_cost",
           "micro_sync_time", "step_sync_time", "time_lower_bound", "total_padded_tokens",
           "total_real_tokens", "max_padded_tokens", "total_encoder_tokens", "max_encoder_tokens",
           "encoder_cost", "step_time", "useful_time", "padding_time", "waiting_time")


def time_shares(plan):
    """(useful, padding, waiting): the shares of the ranks' time of one step, summing to 1."""
    whole = plan.useful_time + plan.padding_time + plan.waiting_time
    if whole <= 0:
        return (1.0, 0.0, 0.0)
    return (plan.useful_time / whole, plan.padding_time / whole, plan.waiting_time / whole)


class Plan:
    """Step ``step`` of epoch ``epoch``: ``micro_batches[rank][micro]`` for every rank.

    A training loop normalises a token-mean loss by ``total_real_tokens`` (the global count of
    the step), which every rank knows without communication; see docs/python.md.

    The step's totals are read at once; ``micro_batches`` (K lists of indices) only when first
    used, from the plan handle this object owns alone, so asking for ``total_real_tokens`` every
    step stays cheap even with thousands of micro-batches.

    Where the step time goes (include/brs.h, BRS_PLAN_STEP_TIME; docs/algorithm.md): every rank
    is held for ``step_time`` (the sync model's: ``micro_sync_time`` or ``step_sync_time``), and
    the ranks' time, ranks x ``step_time``, is ``useful_time`` (the samples' cost unpadded) +
    ``padding_time`` + ``waiting_time`` (at the synchronisation), in cost units.
    """

    __slots__ = _TOTALS + ("_micro_batches", "_reader")

    def __init__(self, *, micro_batches=None, reader=None, **totals):
        if set(totals) != set(_TOTALS):
            raise TypeError(f"Plan needs exactly {_TOTALS}")
        for name, value in totals.items():
            setattr(self, name, value)
        self._micro_batches = micro_batches
        self._reader = reader  # () -> micro_batches, used once

    @property
    def micro_batches(self) -> List[List[MicroBatch]]:
        if self._micro_batches is None:
            self._micro_batches, self._reader = self._reader(), None
        return self._micro_batches

    @property
    def real_tokens_per_rank(self):
        return [sum(mb.real_tokens for mb in rank) for rank in self.micro_batches]

    @property
    def num_samples_per_rank(self):
        return [sum(mb.num_samples for mb in rank) for rank in self.micro_batches]

    def _totals(self):
        return {name: getattr(self, name) for name in _TOTALS}

    def __eq__(self, other):
        if not isinstance(other, Plan):
            return NotImplemented
        return self._totals() == other._totals() and self.micro_batches == other.micro_batches

    __hash__ = None

    def __reduce__(self):  # pickles as plain values: the handle stays behind
        return _rebuild, (self._totals(), self.micro_batches)

    def __repr__(self):
        return (f"Plan(epoch={self.epoch}, step={self.step}, num_samples={self.num_samples}, "
                f"max_cost={self.max_cost}, lower_bound={self.lower_bound}, "
                f"total_real_tokens={self.total_real_tokens}, "
                f"max_padded_tokens={self.max_padded_tokens}, step_time={self.step_time})")


def _rebuild(totals, micro_batches):
    return Plan(micro_batches=micro_batches, **totals)
