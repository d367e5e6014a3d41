"""The plan of one optimizer step for every rank, copied out of libbrs into plain Python values."""

from dataclasses import dataclass
from typing import List, NamedTuple


class MicroBatch(NamedTuple):
    """One micro-batch: dataset indices (longest sample first) and what it weighs."""

    indices: List[int]
    padded_tokens: int  # batch size * longest length (sum of lengths in packed mode)
    real_tokens: int  # sum of the samples' lengths: what a token-mean loss divides by
    num_samples: int
    cost: float  # in the cost model's units: intercept + bs*L + alpha*bs*L^2


@dataclass(frozen=True)
class Plan:
    """Step ``step`` of epoch ``epoch``: ``micro_batches[rank][micro]`` for every rank.

    A training loop normalises a token-mean loss by ``total_real_tokens`` (the global count of
    the step), which every rank knows without communication; see docs/python.md.
    """

    epoch: int
    step: int
    num_samples: int
    max_cost: float
    lower_bound: float
    total_cost: float
    micro_sync_time: float
    step_sync_time: float
    time_lower_bound: float
    total_padded_tokens: int
    total_real_tokens: int
    max_padded_tokens: int
    micro_batches: List[List[MicroBatch]]

    @property
    def real_tokens_per_rank(self):
        return [sum(mb.real_tokens for mb in rank) for rank in self.micro_batches]

    @property
    def num_samples_per_rank(self):
        return [sum(mb.num_samples for mb in rank) for rank in self.micro_batches]
