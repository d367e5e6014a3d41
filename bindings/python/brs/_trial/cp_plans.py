"""The context-parallel trial's three strategies, each step planned from the same samples.

- brs: the library's dynamic CP (BatchRebalanceSampler with cp_size and max_tokens_per_rank,
  every power of two allowed): each rank's micro-batch and token ranges are the plan's CP queries.
- fixed: the same planner held to one degree, the least the dataset's longest sample needs
  under max_tokens_per_rank (cp_degrees; bench/brsbench/context_parallel.py's "fixed CP").
- megatron: megatron-core's own BalancedCPScheduler (brs/peers.py) on the samples brs drew for
  the step; each sub-sample on its c ranks is cut as the library cuts a lone sequence at degree c
  (the head-tail split of docs/algorithm.md "Context parallelism", Megatron's own).

A step of a strategy is a list of phases; a phase gives every global rank the pieces it runs in
order, and every rank waits for the others at its end: a phase is a micro-step of a brs plan
(the synchronised micro-step its cost model prices) and a group of Megatron's schedule (its
runtime, hybrid_context_parallel_forward_backward, puts a barrier after each group).
"""

import functools
from typing import NamedTuple, Tuple

from ..peers import least_degree

STRATEGIES = ("brs", "fixed", "megatron")


class Piece(NamedTuple):
    """What one rank computes of one micro-batch: the fields of brs.MicroBatch that
    brs.context_parallel.shard reads."""

    cp_ranks: Tuple[int, ...]
    token_ranges: list  # (dataset index, start, end)
    padded_tokens: int


@functools.lru_cache(maxsize=None)
def _split(length, degree):
    """Each position's (start, end) ranges of a lone sequence of ``length`` on ``degree`` ranks,
    as the library plans it."""
    from ..calibration.context_parallel import micro_batch

    return tuple(tuple((start, end) for _, start, end in micro_batch(length, degree, p)
                       .token_ranges) for p in range(degree))


class Planner:
    """Each strategy's phases of a step (``step(t)``), every rank's, the same on every rank."""

    def __init__(self, lengths, config, cost_model):
        from ..peers import balanced_cp_scheduler_class
        from ..sampler import BatchRebalanceSampler

        if balanced_cp_scheduler_class()[0] is None:
            raise ValueError(f"the context-parallel trial runs Megatron's scheduler: "
                             f"{balanced_cp_scheduler_class()[1]}; pip install \"brs[megatron]\"")
        self.lengths, self.cap = lengths, config.max_tokens_per_rank
        self.world = config.dp_size * config.cp_size
        self.fixed_degree = least_degree(int(max(lengths)), self.cap, config.cp_size)
        if self.fixed_degree is None:
            raise ValueError(f"the longest sample ({int(max(lengths))} tokens) needs more than "
                             f"cp_size {config.cp_size} ranks under max_tokens_per_rank "
                             f"{self.cap}: raise either")
        base = dict(per_device_batch_size=config.per_device_batch_size,
                    grad_accum=config.grad_accum, dp_size=config.dp_size, rank=0, packed=True,
                    cp_size=config.cp_size, max_tokens_per_rank=self.cap, seed=config.seed)
        if cost_model is not None:
            base["cost_model"] = cost_model
        self.samplers = {"brs": BatchRebalanceSampler(lengths, **base),
                         "fixed": BatchRebalanceSampler(lengths, cp_degrees=self.fixed_degree,
                                                        **base)}

    @property
    def steps_per_epoch(self):
        return self.samplers["brs"].steps_per_epoch

    def step(self, t):
        """(samples of step t, {strategy: phases}, {strategy: the library's step time, in its
        units, where it plans the strategy})."""
        phases, modelled, samples = {}, {}, None
        for name, sampler in self.samplers.items():
            plan = sampler.plan(t)
            phases[name] = _micro_steps(plan)
            modelled[name] = plan.micro_sync_time
            drawn = sorted(i for rank, mbs in enumerate(plan.micro_batches) for mb in mbs
                           if rank == mb.cp_ranks[0] for i in mb.indices)
            if samples is not None and drawn != samples:  # the comparison's premise
                raise RuntimeError(f"step {t}: fixed CP drew other samples than brs")
            samples = drawn
        phases["megatron"] = self.megatron(samples)
        return samples, phases, modelled

    def megatron(self, samples):
        from ..peers import balanced_cp_groups

        groups = balanced_cp_groups({i: int(self.lengths[i]) for i in samples}, self.world,
                                    self.cap)
        return [_group_phase(group, self.lengths) for group in groups]


def _micro_steps(plan):
    """A brs plan's phases: its micro-steps, each rank's micro-batch (none on a placeholder)."""
    ranks = plan.micro_batches
    return [[[] if not ranks[r][m].indices else [Piece(tuple(ranks[r][m].cp_ranks),
                                                       list(ranks[r][m].token_ranges),
                                                       ranks[r][m].padded_tokens)]
             for r in range(len(ranks))] for m in range(len(ranks[0]))]


def _group_phase(group, lengths):
    """One group of Megatron's schedule as a phase: each rank's sub-samples in its order, each
    on the ranks whose lists hold it (its local_cp_size), cut by the library's split."""
    members = {}
    for rank, ids in enumerate(group):
        for i in ids:
            members.setdefault(i, []).append(rank)
    phase = []
    for rank, ids in enumerate(group):
        pieces = []
        for i in ids:
            ranks = tuple(members[i])
            split = _split(int(lengths[i]), len(ranks))
            # every rank of the group pads to its longest share, so that the gathers agree
            padded = max(sum(end - start for start, end in share) for share in split)
            ranges = [(i, start, end) for start, end in split[ranks.index(rank)]]
            pieces.append(Piece(ranks, ranges, padded))
        phase.append(pieces)
    return phase


def process_groups(phases):
    """Every group of more than one rank the phases use, in one order on every rank."""
    return sorted({piece.cp_ranks for step in phases for phase in step for rank in phase
                   for piece in rank if len(piece.cp_ranks) > 1})
