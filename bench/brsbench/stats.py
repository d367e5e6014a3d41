"""Headline numbers derived from the raw results: the summary table and the targets of bench/README.md."""

import math
from dataclasses import dataclass

from .metrics import steps_worse
from .quality import Case
from .speed import STEP_SYNC, TARGET_POINTS, Point


def geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def spread(xs: list[float]) -> str:
    """'geo-mean (min-max)' of ratios, the form every ratio cell of the summary uses."""
    if not xs:
        return "n/a"
    return f"{geomean(xs):.2f}x ({min(xs):.2f}-{max(xs):.2f})"


# (row label, peer's score key, brs score key it is compared with, same steps as brs?)
PEER_ROWS = [
    ("transformers BatchRebalanceSampler (batch_rebalance)", "upstream", "brs", True),
    ("transformers LengthGroupedSampler (group_by_length)", "group_by_length", "brs", False),
    ("fixed-size random batches (DistributedSampler)", "random", "brs", False),
    ("verl get_seqlen_balanced_partitions (packed, KK)", "verl_kk", "brs_packed", True),
    ("brs with a hard max_tokens cap (cost of the cap)", "brs_capped", "brs", True),
    ("upstream vs brs capped at upstream's peak of each step (equal memory)", "upstream",
     "brs_equal_memory", True),
    ("upstream vs brs capped at upstream's epoch peak (the memory upstream needs)", "upstream",
     "brs_upstream_cap", True),
]

# brs's memory levels against upstream: (a) brs's default budget, (b) upstream's peak of each
# step as the cap, (c) upstream's epoch peak as the cap (quality.evaluate)
MEMORY_LEVELS = [("(a) at its default budget", "brs"),
                 ("(b) at equal memory (upstream's peak of each step as cap)", "brs_equal_memory"),
                 ("(c) at upstream's epoch peak as cap", "brs_upstream_cap")]


def summary_rows(cases: list[Case], points: list[Point]) -> list[list[str]]:
    rows = []
    for label, peer, ours, same_steps in PEER_ROWS:
        cs = [c for c in cases if peer in c.scores]
        if not cs:
            rows.append([label] + ["not run"] * (len(SUMMARY_HEADER) - 1))
            continue
        def ratios(attr):
            return [getattr(c.scores[peer], attr) / getattr(c.scores[ours], attr) for c in cs]
        worse = "n/a (other steps)"
        if same_steps:
            worse = str(sum(steps_worse(c.scores[ours].max_cost, c.scores[peer].max_cost) for c in cs))
        over = sum(c.scores[peer].cap_violations for c in cs)
        total = sum(c.scores[peer].micro_batches for c in cs)
        plan = [c.plan_seconds[peer] / c.plan_seconds[ours] for c in cs if c.plan_seconds.get(ours)]
        rows.append([label, spread(ratios("peak_tokens")),
                     f"{geomean([c.scores[peer].efficiency for c in cs]):.3f} vs "
                     f"{geomean([c.scores[ours].efficiency for c in cs]):.3f}",
                     spread(ratios("micro_sync")), spread(ratios("step_sync")), worse,
                     f"{over} / {total}", spread(plan)])
    brs_row = ["brs (reference): step time / lower bound", "1.00x", "", spread(
        [c.scores["brs"].micro_sync / c.lower_bound for c in cases]), spread(
        [c.scores["brs"].step_sync / c.lower_bound for c in cases]), "", f"uncapped: "
        f"{sum(c.scores['brs'].cap_violations for c in cases)}", ""]
    rows.append(brs_row)
    return rows


SUMMARY_HEADER = ["peer", "peak padded tokens per micro-batch (peer / brs)",
                  "padding efficiency (peer vs brs)", "step time, per-micro-step sync (peer / brs)",
                  "step time, per-step sync (peer / brs)", "steps where brs max cost > peer's",
                  "micro-batches over the cap", "epoch planning time in Python (peer / brs)"]


@dataclass
class Target:
    text: str
    value: str
    met: bool | None  # None: not measurable in this run
    why: str = ""


def _not_slower(cases: list[Case], ours: str, level: str, model: str, attr: str) -> Target:
    def ratio(c):
        return getattr(c.scores[ours], attr) / getattr(c.scores["upstream"], attr)
    bad = [c for c in cases if ratio(c) > 1 + 1e-9]
    worst = max(cases, key=ratio)
    listing = "; ".join(f"{c.dataset} {c.config} {ratio(c):.4f}" for c in bad[:12])
    return Target(f"brs {level}: epoch step time under {model} sync <= upstream's in every case",
                  f"{len(bad)} of {len(cases)} cases above upstream; worst brs/upstream "
                  f"{ratio(worst):.4f} ({worst.dataset} {worst.config})" + (f": {listing}" if bad else ""),
                  not bad, "" if not bad else "the planner is heuristic beyond small steps "
                  "(docs/algorithm.md); see same_samples.md")


def _step_sync_speed(points: list[Point]) -> list[Target]:
    """Planning under per-step sync (the deal is a multiway partition there, not a sort)."""
    out = []
    b, k, limit_ms = STEP_SYNC
    at = [p for p in points if (p.B, p.K) == (b, k)]
    if at:
        out.append(Target(f"planning under per-step sync <= {limit_ms:.0f} ms a step at B = {b}, K = {k} (C)",
                          ", ".join(f"{p.dist} {p.c_step_sync_ns_step / 1e6:.1f} ms (per-micro-step sync "
                                    f"{p.c_ns_step / 1e6:.1f} ms)" for p in at),
                          max(p.c_step_sync_ns_step for p in at) / 1e6 <= limit_ms))
    measured = [p for p in points if p.K >= 64 and p.ratio_step_sync]
    if measured:
        worst = min(measured, key=lambda p: p.ratio_step_sync)
        out.append(Target("planning under per-step sync >= 100x faster than upstream at K >= 64",
                          f"min upstream/brs(C) {worst.ratio_step_sync:.0f}x (B={worst.B}, K={worst.K}, "
                          f"{worst.dist})", worst.ratio_step_sync >= 100))
    return out


def targets(cases: list[Case], points: list[Point]) -> list[Target]:
    out = []
    # With one micro-step the step time is the max cost, which brs minimises exactly; with more,
    # brs minimises the step time and its max cost may exceed a peer's.
    single = [c for c in cases if c.config.ga == 1]
    steps = sum(c.steps for c in single)
    above = sum(c.brs_max_cost_above_upstream for c in single)
    out.append(Target("grad_accum 1 (step time = max cost): brs max micro-batch cost <= upstream's "
                      "on every step",
                      f"{above} of {steps} steps above upstream ({len(single)} distribution x config cases)",
                      above == 0, "brs is exact there (min-max over contiguous splits)" if above == 0 else
                      "a brs step costs more than upstream's: a planner bug (not exact)"))
    for level, ours in MEMORY_LEVELS:
        for model, attr in (("per-micro-step", "micro_sync"), ("per-step", "step_sync")):
            out.append(_not_slower(cases, ours, level, model, attr))
    capped = sum(c.scores["brs_capped"].cap_violations for c in cases)
    up_over = sum(c.scores["upstream"].cap_violations for c in cases)
    up_mb = sum(c.scores["upstream"].micro_batches for c in cases)
    up_cases = sum(c.scores["upstream"].cap_violations > 0 for c in cases)
    out.append(Target("brs never exceeds a cap; upstream's cap violations counted",
                      f"brs capped: {capped} micro-batches over the cap; upstream (no cap option in any "
                      f"release): {up_over} of {up_mb} micro-batches over the same cap, in {up_cases} of "
                      f"{len(cases)} cases", capped == 0))
    measured = [p for p in points if p.K >= 64 and p.ratio]
    if measured:
        worst = min(measured, key=lambda p: p.ratio)
        out.append(Target("planning >= 100x faster than upstream at K >= 64",
                          f"min upstream/brs(C) {worst.ratio:.0f}x (B={worst.B}, K={worst.K}); "
                          f"via Python min {min(p.ratio_py for p in measured if p.ratio_py):.0f}x; "
                          f"{sum(1 for p in points if p.K >= 64 and not p.ratio)} upstream configs skipped",
                          worst.ratio >= 100))
    out += _step_sync_speed(points)
    at_64 = [p for p in points if (p.B, p.K) == TARGET_POINTS[0]]
    if at_64:
        b, k = TARGET_POINTS[0]
        out.append(Target(f"planning under 10 ns per sample at B = {b}, K = {k} (C, sort included)",
                          ", ".join(f"{p.dist} {p.c_ns_sample:.1f} ns/sample" for p in at_64),
                          max(p.c_ns_sample for p in at_64) < 10))
    small = [p for p in points if p.K <= 4096]
    worst = max(small, key=lambda p: p.c_ns_sample)
    out.append(Target("planning under 10 ns per sample at K <= 4096 (C, sort included)",
                      f"max {worst.c_ns_sample:.1f} ns/sample (B={worst.B}, K={worst.K}, {worst.dist}); "
                      f"median {sorted(p.c_ns_sample for p in small)[len(small) // 2]:.1f}",
                      worst.c_ns_sample < 10))
    big = [p for p in points if (p.B, p.K) == TARGET_POINTS[-1]]
    if big:
        ms = max(p.c_ns_step for p in big) / 1e6
        out.append(Target("1e6 samples per step well under 50 ms at K = 1e5",
                          f"{ms:.1f} ms per step (worst of uniform / longtail)", ms < 50))
    return out
