"""python -m brsbench rollouts: one batch of RL rollouts split three ways, on the same lengths.

An RL step holds a batch that exists only once generated: brs.plan_batch (packed mode, the
library's default cost model) splits it into dp x grad_accum micro-batches, against
- verl_kk: verl's `get_seqlen_balanced_partitions` (Karmarkar-Karp, equal_size=False), the
  packed workload of brs's cost model as exact integers (packed_vs_verl.verl_split), dealt
  snake-wise;
- greedy: the token-budget greedy of RL trainers' dynamic batching, longest first, each
  sequence into the least-loaded micro-batch (by cost) whose token sum stays within the cap
  (when none does, the least-loaded one: a violation), dealt snake-wise.
The peers' splits are loaded into the library (`brs_plan_load`), so one cost model gives every
plan's step time under per-micro-step and per-step sync; brs plans once per sync model.

Lengths: prompt clamp(lognormal(5.5, 0.6), 16, 2048) plus response lognormal(6.3, 1.0)
truncated at 4096 (the truncated generations form a spike at the maximum: the long tail RL
batches have). Caps: none, and max_tokens = the largest sequence or 1.25x the mean
micro-batch's tokens, whichever is more. Planning time: the fastest of --repeats calls for
brs and greedy, one call for verl (pure Python, seconds at K = 1024).

    PYTHONPATH=bindings/python:bench BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \\
        python3 -m brsbench rollouts [--verl-path bench/out/peers] [--out FILE]
"""

import math
import random
import sys
import time
from pathlib import Path

import brs

from .compare import load_verl
from .datasets import lognormal
from .library import shared
from .metrics import alpha
from .packed_vs_verl import verl_split
from .peers import Config, snake_deal
from .results import emit

# (global batch B, dp, grad_accum): K = dp * grad_accum from 8 to 1024, B up to 8192.
LAYOUTS = [(512, 8, 1), (2048, 8, 8), (4096, 16, 4), (8192, 64, 4), (8192, 64, 16)]
BATCHES = {8: 6, 64: 6, 256: 3, 1024: 2}  # rollout batches per layout, by K
MAX_PROMPT, MAX_RESPONSE = 2048, 4096


def rollout_lengths(count: int, rng: random.Random) -> list[int]:
    prompt = lognormal(rng, 5.5, 0.6, 16, MAX_PROMPT, n=count)
    response = lognormal(rng, 6.3, 1.0, 1, MAX_RESPONSE, n=count)
    return [p + r for p, r in zip(prompt, response)]


def cap_for(lengths: list[int], k: int) -> int:
    return max(max(lengths), math.ceil(1.25 * sum(lengths) / k))


def greedy_split(lengths: list[int], k: int, cap: int | None, cost) -> list[list[int]]:
    """Longest first into the least-costly micro-batch that keeps its tokens within the cap."""
    groups, tokens, costs = [[] for _ in range(k)], [0] * k, [0.0] * k
    for i in sorted(range(len(lengths)), key=lambda j: -lengths[j]):
        fits = [g for g in range(k) if cap is None or tokens[g] + lengths[i] <= cap]
        g = min(fits or range(k), key=costs.__getitem__)
        groups[g].append(i)
        tokens[g] += lengths[i]
        costs[g] += cost(lengths[i])
    return sorted(groups, key=lambda g: -sum(cost(lengths[i]) for i in g))


def fastest(call, repeats: int):
    best, result = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - t0)
    return best, result


class Case:
    """One rollout batch under one layout and cap: every plan's times and violations."""

    def __init__(self, lib, lengths, cfg: Config, cap: int | None, repeats: int, verl: bool):
        self.lib, self.n, self.lengths, self.cfg, self.cap = lib, lib.n, lengths, cfg, cap
        model = brs.CostModel(alpha())  # a packed group costs the sum of its samples' costs
        cost = lambda length: model.cost(1, length)  # noqa: E731 - for greedy's order only
        self.planning, self.times, self.violations = {}, {}, {}
        for sync in ("micro_step", "step"):
            options = {"dp_size": cfg.dp, "grad_accum": cfg.ga, "packed": 1,
                       "sync": lib.value("sync", sync)}
            if cap is not None:
                options["max_tokens"] = cap
            config = lib.config(options)  # plan_batch's, without its lists: timed alone
            buffer, plan = lib.as_uint32(lengths), lib.NativePlan()
            seconds, _ = fastest(lambda: plan.compute_batch(config.handle, buffer), repeats)
            self.planning[f"brs_{sync}"] = seconds
            self._describe(f"brs_{sync}", plan, [[plan.indices(r, m) for m in range(cfg.ga)]
                                                  for r in range(cfg.dp)])
        seconds, groups = fastest(lambda: greedy_split(lengths, cfg.k, cap, cost), repeats)
        self.planning["greedy"] = seconds
        self._load("greedy", groups)
        if verl:
            seconds, groups = fastest(lambda: verl_split(lengths, list(range(len(lengths))),
                                                         cfg.k, a), 1)
            self.planning["verl_kk"] = seconds
            self._load("verl_kk", groups)

    def _load(self, name, groups):
        sampler = self.lib.sampler(self.lengths, {
            "batch_size": len(self.lengths) // self.cfg.k, "grad_accum": self.cfg.ga,
            "dp_size": self.cfg.dp, "rank": 0, "packed": 1})
        plan, deal = self.lib.NativePlan(), snake_deal(groups, self.cfg)
        self.lib.load(plan, sampler, deal, 0)
        self._describe(name, plan, deal)

    def _describe(self, name, plan, rank_mbs):
        self.times[name] = (plan.get_double(self.n.PLAN_MICRO_SYNC_TIME),
                            plan.get_double(self.n.PLAN_STEP_SYNC_TIME))
        self.violations[name] = 0 if self.cap is None else sum(
            sum(self.lengths[i] for i in mb) > self.cap for rank in rank_mbs for mb in rank)

    def brs_time(self, sync: int) -> float:
        """brs's time under sync model 0 (micro-step) or 1 (step), planned for that model."""
        return self.times[("brs_micro_step", "brs_step")[sync]][sync]


def summarise(cases: list[Case], peer: str) -> str:
    present = [c for c in cases if peer in c.times]
    if not present:
        return "not run | | | |"
    cells = []
    for sync in (0, 1):
        ratios = [c.brs_time(sync) / c.times[peer][sync] for c in present]
        slower = sum(r > 1 + 1e-12 for r in ratios)
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        cells.append(f"{geo:.4f} ({max(ratios):.4f}), slower {slower}")
    speed = [c.planning[peer] / max(c.planning["brs_micro_step"], c.planning["brs_step"])
             for c in present]
    return (f"{cells[0]} | {cells[1]} | {sum(c.violations[peer] for c in present)} | "
            f"{min(speed):.0f}x-{max(speed):.0f}x")


HEADER = ("| B | dp x ga (K) | cap | batches | peer | brs/peer micro-step sync time, geo-mean "
          "(worst), batches brs slower | brs/peer step sync time | peer's micro-batches over "
          "the cap (brs: 0 by construction) | peer planning time / brs's |")


def markdown(rows) -> str:
    lines = [HEADER, "|" + "---|" * 8]
    for (b, cfg, cap_name), cases in rows:
        brs_ms = max(max(c.planning["brs_micro_step"], c.planning["brs_step"]) for c in cases)
        for peer in ("verl_kk", "greedy"):
            lines.append(f"| {b} | {cfg.dp}x{cfg.ga} ({cfg.k}) | {cap_name} | {len(cases)} | "
                         f"{peer} | {summarise(cases, peer)} |")
        lines.append(f"| | | | | brs planning (slowest batch, either sync) | {brs_ms * 1e3:.2f} ms"
                     " | | | |")
    return "\n".join(lines)


def add_arguments(ap) -> None:
    ap.add_argument("--verl-path", type=Path, default=Path("bench/out/peers"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, help="also write the table to this file")


def run(args) -> int:
    verl, note = load_verl(args.verl_path)
    lib, rng, rows, t0 = shared(), random.Random(args.seed), [], time.perf_counter()
    for b, dp, ga in LAYOUTS:
        cfg = Config(dp, ga, b // (dp * ga))
        batches = [rollout_lengths(b, rng) for _ in range(BATCHES[cfg.k])]
        for cap_name in ("none", "1.25x mean"):
            cases = [Case(lib, lengths, cfg, None if cap_name == "none" else cap_for(lengths, cfg.k),
                          args.repeats, verl) for lengths in batches]
            rows.append(((b, cfg, cap_name), cases))
            print(f"B {b} K {cfg.k} cap {cap_name}: {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr, flush=True)
    table = markdown(rows) + f"\n\n{note}. Wall time {time.perf_counter() - t0:.0f} s.\n"
    emit(table, args.out)
    return 0
