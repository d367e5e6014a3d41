"""Plan quality: every sampler, one epoch, per distribution and configuration ."""

import math
import sys
import time
from dataclasses import dataclass, field

from . import metrics, peers
from .datasets import Dataset, fit_to_batch
from .peers import Config

CONFIGS = [Config(2, 2, 8), Config(8, 2, 8), Config(8, 4, 8), Config(64, 1, 16), Config(64, 16, 4)]
PACKED = ["brs_packed", "verl_kk"]


@dataclass
class Case:
    dataset: str
    config: Config
    n: int
    steps: int
    cap: int
    scores: dict[str, metrics.Score]
    lower_bound: float  # sum over the common steps of brs Plan.time_lower_bound (padded)
    packed_lower_bound: float
    brs_max_cost_above_upstream: int  # steps where brs's max micro-batch cost > upstream's
    brs_micro_above_upstream: int
    brs_step_above_upstream: int
    plan_seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _capped_run(lengths, cfg, order, cap):
    """brs with a hard cap; a cap that K micro-batches cannot meet on some step is raised by 25%
    until it can (the sampler refuses it when built, or the step when planned; the report gives
    the cap used and how often it was raised)."""
    raised = 0
    while True:
        try:
            return peers.brs_epoch(lengths, cfg, name="brs_capped", order=order, max_tokens=cap), cap, raised
        except (peers.BrsInfeasible, ValueError):  # ValueError: the epoch check's refusal
            if raised == 12:
                raise
            cap, raised = math.ceil(cap * 1.25), raised + 1


def _equal_memory_run(lengths, step_samples, up_peaks, cfg):
    """brs on upstream's samples of each step with max_tokens = upstream's peak padded tokens of
    that step (brs.plan_batch: the cap changes from step to step); the same memory, step by step."""
    import brs

    t0, plan = time.perf_counter(), []
    for samples, cap in zip(step_samples, up_peaks):
        positions = brs.plan_batch([lengths[i] for i in samples], dp_size=cfg.dp,
                                   grad_accum=cfg.ga, max_tokens=cap)
        plan.append([[[samples[p] for p in mb] for mb in rank] for rank in positions])
    return peers.Run("brs_equal_memory", plan, time.perf_counter() - t0)


def _scoring_mismatch(s: metrics.Score, reported) -> str | None:
    """metrics.score describes each step's micro-batches through brs_plan_load; brs's own plan
    must describe itself the same way, or the comparison with the peers would be unsound."""
    for t, (max_cost, micro, whole) in enumerate(reported):
        ours = (s.max_cost[t], s.micro_sync_steps[t], s.step_sync_steps[t])
        for a, b, what in zip(ours, (max_cost, micro, whole), ("max cost", "micro-sync", "step-sync")):
            if abs(a - b) > 1e-6 * max(1.0, abs(b)):
                return f"step {t} {what}: scored {a}, brs says {b}"
    return None


def first_cap(lengths: list[int], cfg: Config) -> int:
    """A memory budget a user could pick without looking at any sampler: twice the padded tokens
    of an average micro-batch (P * mean length), and at least the longest sample."""
    mean = sum(lengths) / len(lengths)
    return max(max(lengths), math.ceil(2 * cfg.batch * mean))


def evaluate(ds: Dataset, cfg: Config, *, seed: int, min_steps: int, verl_max_k: int) -> Case:
    """One distribution x configuration; verl runs where K <= verl_max_k (0: not at all)."""
    ds = fit_to_batch(ds, cfg.global_batch, min_steps)
    lengths = ds.lengths
    notes = list(ds.notes)
    runs = {}
    runs["upstream"], step_samples = peers.upstream_batch_rebalance(lengths, cfg, seed)
    order = [i for step in step_samples for i in step]
    runs["brs"] = peers.brs_epoch(lengths, cfg, name="brs", order=order)
    runs["brs_own_shuffle"] = peers.brs_epoch(lengths, cfg, name="brs_own_shuffle", seed=seed)
    # brs at the memory upstream needs: (b) each step's upstream peak, (c) upstream's epoch peak
    up_peaks = metrics.score("upstream", runs["upstream"].plan, lengths).peak_tokens_steps
    runs["brs_equal_memory"] = _equal_memory_run(lengths, step_samples, up_peaks, cfg)
    runs["brs_upstream_cap"] = peers.brs_epoch(lengths, cfg, name="brs_upstream_cap", order=order,
                                               max_tokens=max(up_peaks))
    runs["brs_capped"], cap, raised = _capped_run(lengths, cfg, order, first_cap(lengths, cfg))
    if raised:
        notes.append(f"cap raised {raised}x (x1.25) from {first_cap(lengths, cfg)} until every step fit")
    runs["group_by_length"] = peers.length_grouped(lengths, cfg, seed)
    runs["random"] = peers.fixed_random(lengths, cfg, seed)
    runs["brs_packed"] = peers.brs_epoch(lengths, cfg, name="brs_packed", order=order, packed=True)
    if cfg.k <= verl_max_k:
        runs["verl_kk"] = peers.verl_packed(lengths, cfg, step_samples, metrics.alpha())

    steps = min(len(r.plan) for r in runs.values())
    if any(len(r.plan) != steps for r in runs.values()):
        notes.append(f"all samplers scored on their first {steps} steps (" + ", ".join(
            f"{k} {len(r.plan)}" for k, r in runs.items() if len(r.plan) != steps) + ")")
    for name, run in runs.items():
        problem = metrics.check_coverage(run.plan[:steps], len(lengths))
        if problem:
            notes.append(f"{name}: {problem}")
    scores = {name: metrics.score(name, run.plan[:steps], lengths, packed=name in PACKED, cap=cap)
              for name, run in runs.items()}
    for name in ("brs", "brs_capped", "brs_packed"):
        mismatch = _scoring_mismatch(scores[name], runs[name].reported[:steps])
        if mismatch:
            notes.append(f"{name}: the benchmark's scoring disagrees with brs's own: {mismatch}")
    ours, up = scores["brs"], scores["upstream"]
    return Case(
        dataset=ds.name, config=cfg, n=len(lengths), steps=steps, cap=cap, scores=scores,
        lower_bound=sum(runs["brs"].time_lower_bounds[:steps]),
        packed_lower_bound=sum(runs["brs_packed"].time_lower_bounds[:steps]),
        brs_max_cost_above_upstream=metrics.steps_worse(ours.max_cost, up.max_cost),
        brs_micro_above_upstream=metrics.steps_worse(ours.micro_sync_steps, up.micro_sync_steps),
        brs_step_above_upstream=metrics.steps_worse(ours.step_sync_steps, up.step_sync_steps),
        plan_seconds={name: run.seconds for name, run in runs.items()}, notes=notes)


def run_all(datasets: list[Dataset], *, seed: int, min_steps: int, verl_max_k: int,
            configs: list[Config] = CONFIGS) -> list[Case]:
    cases = []
    for ds in datasets:
        for cfg in configs:
            t0 = time.perf_counter()
            case = evaluate(ds, cfg, seed=seed, min_steps=min_steps, verl_max_k=verl_max_k)
            _log(f"quality {ds.name:14s} {str(cfg):8s} {case.steps:4d} steps "
                 f"{time.perf_counter() - t0:6.1f}s  brs/up micro {case.scores['brs'].micro_sync / case.scores['upstream'].micro_sync:.3f}"
                 f" step {case.scores['brs'].step_sync / case.scores['upstream'].step_sync:.3f}")
            cases.append(case)
    return cases
