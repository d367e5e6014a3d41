"""python -m brsbench context_parallel: dynamic context parallelism, modelled.

On long-tailed lengths (manpages clipped at 32K, lognormal up to 32K, a log-uniform 1K-16K set
like verl's dynamic-CP runs) and 8 (dp 2 x cp 4) and 32 (dp 4 x cp 8) ranks, every step is
planned four ways on the same samples, and scored with the library's one cost model (alpha,
intercept and cp_comm_cost at their defaults: a micro-batch on c ranks costs each
intercept + (sum L + alpha L^2) / c + cp_comm_cost log2(c) sum L):
- brs: cp_size C, every power of two allowed (the planner chooses each micro-batch's degree);
- fixed CP: the same planner with one degree, the least the longest sample of the dataset needs
  under max_tokens_per_rank (cp_degrees); an upper bound on a fixed-CP loader's quality, since it
  is balanced by brs;
- CP 1: degree 1 only, where the longest sample fits max_tokens_per_rank (else "does not fit");
- dp_balanced: a Megatron-style greedy written from the documentation of Megatron-LM's
  dynamic-CP `dp_balanced` scheduler: each sequence, longest first, takes the least CP size
  that fits max-seqlen-per-dp-cp-rank and goes to the least-loaded place that holds it (a group
  of its size with room, or free ranks), micro-step by micro-step.
Reported per (dataset, layout): the geometric mean of each strategy's per-micro-step synchronised
step time over brs's, the steps where brs is slower than dp_balanced, the peak tokens per rank,
and the planning time per step (the C planner, through brs.BatchRebalanceSampler.plan).

    PYTHONPATH=bindings/python:bench BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \\
        python3 -m brsbench context_parallel [--steps 40] [--out bench/results/context_parallel.md]
"""

import math
import random
import statistics
import sys
import time
from pathlib import Path

import brs

from .results import command, write_text

ROOT = Path(__file__).resolve().parents[2]
LAYOUTS = [(2, 4), (4, 8)]  # (dp_size, cp_size): 8 and 32 ranks
GRAD_ACCUM, BATCH = 8, 1
COST_UNIT = 1.0


def datasets(seed=0):
    rng = random.Random(seed)
    manpages = [min(32768, int(x)) for x in (ROOT / "data" / "manpages.lengths").read_text().split()]
    lognormal = [min(32768, max(64, int(rng.lognormvariate(8.0, 1.2)))) for _ in range(20000)]
    verl = [int(math.exp(rng.uniform(math.log(1024), math.log(16384)))) for _ in range(20000)]
    return [("manpages@32k", manpages, 8192), ("lognormal<=32K", lognormal, 8192),
            ("1K-16K (verl-like)", verl, 4096)]


def least_degree(length, cap, cp_size):
    c = 1
    while c <= cp_size:
        if -(-length // c) <= cap:
            return c
        c *= 2
    return None


class Model:
    """The library's cost model, in cost units (defaults read back from a sampler)."""

    def __init__(self, s):
        self.alpha, self.intercept, self.comm = s.alpha, s.intercept, s.cp_comm_cost

    def cost(self, lengths, c):
        w = sum(length + self.alpha * length * length for length in lengths)
        return self.intercept + w / c + self.comm * math.log2(c) * sum(lengths)


def dp_balanced(lengths, dp, cp, ga, cap, model):
    """Megatron-style dp_balanced greedy; returns (micro-sync time, peak tokens per rank) or
    None where it places nothing."""
    ranks = dp * cp
    steps = [{"free": ranks, "groups": []} for _ in range(ga)]
    for length in sorted(lengths, reverse=True):
        c = least_degree(length, cap, cp)
        held = -(-length // c)
        best = None
        for m, st in enumerate(steps):
            for g in st["groups"]:
                if g["c"] == c and g["held"] + held <= cap:
                    load = model.cost(g["lengths"] + [length], c)
                    if best is None or load < best[0]:
                        best = (load, m, g)
            if st["free"] >= c:
                load = model.cost([length], c)
                if best is None or load < best[0]:
                    best = (load, m, None)
        if best is None:
            return None
        _, m, g = best
        if g is None:
            steps[m]["free"] -= c
            steps[m]["groups"].append({"c": c, "held": held, "lengths": [length]})
        else:
            g["held"] += held
            g["lengths"].append(length)
    time_ = sum(max((model.cost(g["lengths"], g["c"]) for g in st["groups"]), default=0.0)
                for st in steps)
    peak = max(g["held"] for st in steps for g in st["groups"])
    return time_, peak


def peak_of(plan, ranks):
    return max(mb.padded_tokens for r in range(ranks) for mb in plan.micro_batches[r])


def run_one(name, lengths, cap, dp, cp, steps_wanted):
    ranks = dp * cp
    longest = max(lengths)
    fixed = least_degree(longest, cap, cp)
    base = dict(per_device_batch_size=BATCH, grad_accum=GRAD_ACCUM, dp_size=dp, rank=0,
                packed=True, cp_size=cp, max_tokens_per_rank=cap, seed=1)
    samplers = {"brs": brs.BatchRebalanceSampler(lengths, **base),
                "fixed": brs.BatchRebalanceSampler(lengths, cp_degrees=fixed, **base)}
    if longest <= cap:
        samplers["cp1"] = brs.BatchRebalanceSampler(lengths, cp_degrees=1, **base)
    model = Model(samplers["brs"])
    steps = min(steps_wanted, samplers["brs"].steps_per_epoch)
    times = {k: [] for k in list(samplers) + ["dp_balanced"]}
    peaks = {k: 0 for k in times}
    plan_seconds = []
    slower = 0
    for step in range(steps):
        for key, s in samplers.items():
            t0 = time.perf_counter()
            plan = s.plan(step)
            if key == "brs":
                plan_seconds.append(time.perf_counter() - t0)
            times[key].append(plan.micro_sync_time)
            peaks[key] = max(peaks[key], peak_of(plan, ranks))
            if key == "brs":
                drawn = [i for r, mbs in enumerate(plan.micro_batches) for mb in mbs
                         if r == mb.cp_ranks[0] for i in mb.indices]
        got = dp_balanced([lengths[i] for i in drawn], dp, cp, GRAD_ACCUM, cap, model)
        if got is None:
            times["dp_balanced"].append(float("nan"))
        else:
            times["dp_balanced"].append(got[0])
            peaks["dp_balanced"] = max(peaks["dp_balanced"], got[1])
            slower += times["brs"][-1] > got[0] * (1 + 1e-9)

    def geo(key):
        pairs = [(a, b) for a, b in zip(times[key], times["brs"]) if a == a]
        return math.exp(sum(math.log(a / b) for a, b in pairs) / len(pairs)) if pairs else None

    return {"dataset": name, "layout": f"{ranks} ranks (dp {dp} x cp {cp})", "cap": cap,
            "fixed_degree": fixed, "steps": steps, "samples_per_step": BATCH * GRAD_ACCUM * dp,
            "ratio": {k: geo(k) for k in times if k != "brs"},
            "mean_time": {k: statistics.fmean(v) for k, v in times.items() if v and v[0] == v[0]},
            "peak": peaks, "slower_than_dp_balanced": slower,
            "plan_ms": 1e3 * statistics.median(plan_seconds),
            "plan_ms_max": 1e3 * max(plan_seconds)}


def add_arguments(p):
    p.add_argument("--steps", type=int, default=40, help="steps per (dataset, layout)")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "context_parallel.md")


def fmt(x, spec=".2f"):
    return "n/a" if x is None else format(x, spec)


def run(args):
    rows = []
    for name, lengths, cap in datasets():
        for dp, cp in LAYOUTS:
            row = run_one(name, lengths, cap, dp, cp, args.steps)
            rows.append(row)
            print(row, file=sys.stderr)
    lines = ["# Dynamic context parallelism, modelled", "",
             f"Command: `{command(sys.argv[1:] if sys.argv[1:] else ['context_parallel'])}`", "",
             __doc__.split("\n\n")[1].strip() if False else "",
             "Per-micro-step synchronised step time of each strategy over brs's (geometric mean "
             "over steps; > 1: brs is faster), peak tokens one rank holds (brs / fixed / CP 1 / "
             "dp_balanced), brs's steps slower than dp_balanced, and brs's planning time per step "
             f"(median, max). grad_accum {GRAD_ACCUM}, per_device_batch_size {BATCH}; alpha "
             "0.001, intercept 0, cp_comm_cost 0.1 (the library's defaults).", "",
             "| dataset | layout | max_tokens_per_rank | fixed degree | fixed / brs | CP 1 / brs "
             "| dp_balanced / brs | brs slower than dp_balanced | peak tokens per rank "
             "| plan ms (median, max) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["peak"]
        lines.append(
            f"| {r['dataset']} | {r['layout']} | {r['cap']} | {r['fixed_degree']} | "
            f"{fmt(r['ratio']['fixed'])} | "
            f"{fmt(r['ratio'].get('cp1')) if 'cp1' in r['ratio'] else 'does not fit'} | "
            f"{fmt(r['ratio']['dp_balanced'])} | {r['slower_than_dp_balanced']} / {r['steps']} | "
            f"{p['brs']} / {p['fixed']} / {p.get('cp1', '-')} / {p['dp_balanced']} | "
            f"{r['plan_ms']:.2f}, {r['plan_ms_max']:.2f} |")
    write_text(args.out, "\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 0
