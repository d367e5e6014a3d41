"""Run every sampler for real and record one epoch as plan[step][rank][micro] -> dataset indices.

Each peer is the installed package's own code, called the way its framework calls it; nothing here
re-implements a peer's algorithm. What this module adds is only bookkeeping: which micro-batch a
rank gets at which micro-step, so that all samplers can be scored the same way (metrics.py).
"""

import time
from dataclasses import dataclass, field

import torch
from torch.utils.data import BatchSampler, DistributedSampler

EpochPlan = list[list[list[list[int]]]]  # plan[step][rank][micro] = dataset indices


@dataclass
class Config:
    dp: int
    ga: int
    batch: int  # per-device batch size P (brs: the AVERAGE micro-batch size)

    @property
    def k(self) -> int:
        return self.dp * self.ga

    @property
    def global_batch(self) -> int:
        return self.batch * self.k

    def __str__(self) -> str:
        return f"{self.dp}x{self.ga}x{self.batch}"


@dataclass
class Run:
    """One sampler's epoch: its plan, how long planning took, and brs's own per-step bounds."""

    name: str
    plan: EpochPlan
    seconds: float
    lower_bounds: list[float] = field(default_factory=list)  # brs Plan.lower_bound per step
    time_lower_bounds: list[float] = field(default_factory=list)  # brs Plan.time_lower_bound
    reported: list[tuple[float, float, float]] = field(default_factory=list)  # brs's own max cost,
    # micro-sync and step-sync per step, to cross-check the benchmark's scoring (metrics.py)
    notes: list[str] = field(default_factory=list)


def _by_rank_batches(per_rank_batches: list[list[list[int]]], ga: int) -> EpochPlan:
    """Rank r's b-th micro-batch is micro-step b % ga of step b // ga (how a DataLoader feeds
    gradient accumulation); only steps every rank completes are kept."""
    steps = min(len(batches) for batches in per_rank_batches) // ga
    return [[[batches[t * ga + m] for m in range(ga)] for batches in per_rank_batches]
            for t in range(steps)]


# ---------------------------------------------------------------------------- upstream (transformers)

def upstream_batch_rebalance(lengths: list[int], cfg: Config, seed: int) -> tuple[Run, list[list[int]]]:
    """transformers.trainer_pt_utils.BatchRebalanceSampler with its defaults (alpha 0.001).

    The sampler is rank-aware and computes every rank's micro-batches for a step before
    yielding its own; brs.peers.recorded_epoch iterates rank 0 as the Trainer does and records
    that split (all ranks) and the step's samples, so no step is planned twice. Also returns each
    step's samples in upstream's draw order, which brs then plans too (same-steps comparison).
    """
    from brs import peers

    sampler = peers.batch_rebalance(lengths, effective_batch_size=cfg.global_batch,
                                    dp_size=cfg.dp, grad_accum=cfg.ga, seed=seed)
    t0 = time.perf_counter()
    plan, step_samples = peers.recorded_epoch(sampler)
    return Run("upstream", plan, time.perf_counter() - t0), step_samples


def length_grouped(lengths: list[int], cfg: Config, seed: int) -> Run:
    """transformers' LengthGroupedSampler (group_by_length) with fixed per-device batches.

    As the Trainer builds it: LengthGroupedSampler(per_device_batch * grad_accum), a DataLoader
    batch size of the per-device batch, and accelerate's BatchSamplerShard dealing batch i to
    process i % dp. The Trainer passes no generator (global torch RNG); a seeded one keeps the
    benchmark reproducible.
    """
    from accelerate.data_loader import BatchSamplerShard
    from transformers.trainer_pt_utils import LengthGroupedSampler

    t0 = time.perf_counter()
    sampler = LengthGroupedSampler(cfg.batch * cfg.ga, lengths=lengths,
                                   generator=torch.Generator().manual_seed(seed))
    order = list(sampler)
    batches = BatchSampler(order, cfg.batch, drop_last=True)
    per_rank = [list(BatchSamplerShard(batches, num_processes=cfg.dp, process_index=r))
                for r in range(cfg.dp)]
    return Run("group_by_length", _by_rank_batches(per_rank, cfg.ga), time.perf_counter() - t0)


def fixed_random(lengths: list[int], cfg: Config, seed: int) -> Run:
    """Fixed-size random batches: torch DistributedSampler + BatchSampler on every rank."""
    t0 = time.perf_counter()
    dataset = range(len(lengths))
    per_rank = []
    for r in range(cfg.dp):
        sampler = DistributedSampler(dataset, num_replicas=cfg.dp, rank=r, shuffle=True, seed=seed,
                                     drop_last=True)
        per_rank.append(list(BatchSampler(sampler, cfg.batch, drop_last=True)))
    return Run("random", _by_rank_batches(per_rank, cfg.ga), time.perf_counter() - t0)


# ---------------------------------------------------------------------------- brs (this project)

class BrsInfeasible(Exception):
    """brs refused a step (e.g. a cap that K micro-batches cannot meet); the message says why."""


def brs_epoch(lengths: list[int], cfg: Config, *, name: str, seed: int = 0,
              order: list[int] | None = None, max_tokens: int | None = None,
              packed: bool = False, steps: int | None = None) -> Run:
    """brs.BatchRebalanceSampler through the Python package, every rank of every step.

    With `order` (a list of dataset indices), brs plans exactly those samples step by step: it is
    given lengths[order] with shuffle off, so step t holds order[t*B:(t+1)*B], the same samples
    a peer drew for its step t; indices are mapped back to the dataset.
    """
    import brs

    view = lengths if order is None else [lengths[i] for i in order]
    sampler = brs.BatchRebalanceSampler(
        view, per_device_batch_size=cfg.batch, grad_accum=cfg.ga, dp_size=cfg.dp, rank=0,
        seed=seed, shuffle=order is None, drop_last=True, max_tokens=max_tokens, packed=packed)
    back = (lambda ix: ix) if order is None else (lambda ix: [order[i] for i in ix])
    run = Run(name, [], 0.0)
    t0 = time.perf_counter()
    for t in range(sampler.steps_per_epoch if steps is None else steps):
        try:
            p = sampler.plan(t)
        except (ValueError, brs.BrsError) as err:
            raise BrsInfeasible(f"step {t}: {err}") from err
        run.plan.append([[back(mb.indices) for mb in rank] for rank in p.micro_batches])
        run.lower_bounds.append(p.lower_bound)
        run.time_lower_bounds.append(p.time_lower_bound)
        run.reported.append((p.max_cost, p.micro_sync_time, p.step_sync_time))
    run.seconds = time.perf_counter() - t0
    return run


# ---------------------------------------------------------------------------- packed: verl

def verl_packed(lengths: list[int], cfg: Config, step_samples: list[list[int]], alpha: float) -> Run:
    """verl's get_seqlen_balanced_partitions (Karmarkar-Karp) on the same steps as brs packed.

    Each step's samples are split into K = dp*ga partitions (equal_size=False) by their packed
    workload, passed as exact integers: round(L/alpha) + L^2 = (L + alpha*L^2)/alpha, so KK sees
    the same cost model as brs. verl returns K unordered partitions; they are dealt to
    (rank, micro-step) as brs's baseline does (sorted by workload, snake-wise in blocks of dp).
    """
    from verl.utils.seqlen_balancing import get_seqlen_balanced_partitions

    scale = round(1 / alpha)
    run = Run("verl_kk", [], 0.0)
    t0 = time.perf_counter()
    for samples in step_samples:
        work = [scale * lengths[i] + lengths[i] * lengths[i] for i in samples]
        parts = get_seqlen_balanced_partitions(work, cfg.k, equal_size=False)
        groups = sorted(([samples[j] for j in part] for part in parts),
                        key=lambda g: -sum(scale * lengths[i] + lengths[i] ** 2 for i in g))
        run.plan.append(snake_deal(groups, cfg))
    run.seconds = time.perf_counter() - t0
    return run


def snake_deal(groups_by_cost: list[list[int]], cfg: Config) -> list[list[list[int]]]:
    """Micro-step m takes the m-th block of dp groups (costliest first), alternating direction."""
    ranks = [[None] * cfg.ga for _ in range(cfg.dp)]
    for m in range(cfg.ga):
        block = groups_by_cost[m * cfg.dp:(m + 1) * cfg.dp]
        for j, group in enumerate(block if m % 2 == 0 else block[::-1]):
            ranks[j][m] = group
    return ranks
