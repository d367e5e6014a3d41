"""python -m brsbench packed_vs_verl: brs packed mode against verl's Karmarkar-Karp, same samples.

Every step brs plans in packed mode is also split by verl's own
`verl.utils.seqlen_balancing.get_seqlen_balanced_partitions` into K = dp*ga partitions
(equal_size=False) by the packed workload as exact integers (peers.verl_packed's weights:
(L + alpha*L^2)/alpha, so KK balances brs's cost model), dealt to (rank, micro-step) snake-wise as
bench/run deals it, and loaded back into the library (`brs_plan_load`), so one cost model describes
both plans. brs is planned once per sync model (the option changes the plan); verl's split does not
depend on it. Per (distribution, layout): steps where KK has the lower max micro-batch cost, the
lower step time under per-micro-step sync and under per-step sync, and geo-mean ratios brs/KK.

    PYTHONPATH=bindings/python:bench BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \\
        python3 -m brsbench packed_vs_verl [--full] [--verl-path bench/out/peers] [--out FILE]
"""

import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import metrics, studies
from .compare import load_verl
from .datasets import fit_to_batch
from .library import shared
from .peers import snake_deal
from .results import emit

# Steps per (distribution, layout); verl's pure-Python KK takes ~25 s per step at K = 1024.
MODES = {"quick": {"steps": 32, "steps_large_k": 1, "synthetic_n": 20000},
         "full": {"steps": 128, "steps_large_k": 4, "synthetic_n": 100000}}
EPS = 1e-12  # costs are exact in the library; the doubles compare within rounding


@dataclass
class Step:
    brs: tuple[float, float, float]  # max cost, micro-sync time, step-sync time
    kk: tuple[float, float, float]


@dataclass
class Row:
    dataset: str
    config: str
    steps: list[Step] = field(default_factory=list)
    seconds: float = 0.0

    def kk_lower(self, what: int) -> int:
        return sum(s.kk[what] < s.brs[what] * (1 - EPS) for s in self.steps)

    def brs_lower(self, what: int) -> int:
        return sum(s.brs[what] < s.kk[what] * (1 - EPS) for s in self.steps)

    def geo(self, what: int) -> float:
        return math.exp(sum(math.log(s.brs[what] / s.kk[what]) for s in self.steps) / len(self.steps))

    def worst(self, what: int) -> float:
        return max(s.brs[what] / s.kk[what] for s in self.steps)


def verl_split(lengths, samples, k, alpha):
    """verl's KK on the step's samples; the partitions as dataset indices, costliest first."""
    from verl.utils.seqlen_balancing import get_seqlen_balanced_partitions

    scale = round(1 / alpha)
    work = [scale * lengths[i] + lengths[i] * lengths[i] for i in samples]
    parts = get_seqlen_balanced_partitions(work, k, equal_size=False)
    return sorted(([samples[j] for j in part] for part in parts),
                  key=lambda g: -sum(scale * lengths[i] + lengths[i] ** 2 for i in g))


def compare(lib, ds, cfg, steps: int) -> Row:
    n = lib.n
    d = fit_to_batch(ds, cfg.global_batch, steps)
    options = {"batch_size": cfg.batch, "grad_accum": cfg.ga, "dp_size": cfg.dp, "rank": 0,
               "seed": studies.SEED, "packed": 1}
    by_sync = {sync: lib.sampler(d.lengths, dict(options, sync=lib.value("sync", sync)))
               for sync in ("micro_step", "step")}
    micro, whole, theirs = lib.NativePlan(), lib.NativePlan(), lib.NativePlan()
    row = Row(ds.name, str(cfg))
    t0 = time.perf_counter()
    for t in range(min(steps, by_sync["micro_step"].steps_per_epoch())):
        micro.compute(by_sync["micro_step"].handle, 0, t)
        whole.compute(by_sync["step"].handle, 0, t)
        samples = [i for r in range(cfg.dp) for m in range(cfg.ga) for i in micro.indices(r, m)]
        groups = verl_split(d.lengths, samples, cfg.k, metrics.alpha())
        lib.load(theirs, by_sync["micro_step"], snake_deal(groups, cfg), t)
        row.steps.append(Step(
            brs=(micro.get_double(n.PLAN_MAX_COST), micro.get_double(n.PLAN_MICRO_SYNC_TIME),
                 whole.get_double(n.PLAN_STEP_SYNC_TIME)),
            kk=(theirs.get_double(n.PLAN_MAX_COST), theirs.get_double(n.PLAN_MICRO_SYNC_TIME),
                theirs.get_double(n.PLAN_STEP_SYNC_TIME))))
    row.seconds = time.perf_counter() - t0
    return row


HEADER = ("| data | dp x ga x P | steps | KK lower max cost | KK faster, micro-step sync | KK faster, "
          "step sync | brs lower max cost | brs/KK max cost, geo-mean (worst) | brs/KK micro-step "
          "sync time | brs/KK step sync time |")


def markdown(rows: list[Row]) -> str:
    lines = [HEADER, "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r.dataset} | {r.config} | {len(r.steps)} | {r.kk_lower(0)} | {r.kk_lower(1)} | "
                     f"{r.kk_lower(2)} | {r.brs_lower(0)} | {r.geo(0):.5f} ({r.worst(0):.4f}) | "
                     f"{r.geo(1):.5f} ({r.worst(1):.4f}) | {r.geo(2):.5f} ({r.worst(2):.4f}) |")
    everything = Row("all", "all", [s for r in rows for s in r.steps])
    lines.append(f"\nAll rows: {len(everything.steps)} steps; KK has the lower max cost on "
                 f"{everything.kk_lower(0)}, the lower step time on {everything.kk_lower(1)} "
                 f"(per-micro-step sync) and {everything.kk_lower(2)} (per-step sync); brs has the "
                 f"lower max cost on {everything.brs_lower(0)}. Geo-mean brs/KK: max cost "
                 f"{everything.geo(0):.5f}, micro-step sync time {everything.geo(1):.5f}, step sync "
                 f"time {everything.geo(2):.5f}.")
    return "\n".join(lines)


def add_arguments(ap) -> None:
    studies.add_arguments(ap)
    ap.add_argument("--verl-path", type=Path, default=Path("bench/out/peers"))


def run(args) -> int:
    ok, note = load_verl(args.verl_path)
    if not ok:
        print(f"packed_vs_verl: {note}", file=sys.stderr)
        return 2
    lib = shared()
    rows = []
    t0 = time.perf_counter()
    for ds, cfg, steps in studies.cases(args, MODES):
        row = compare(lib, ds, cfg, steps)
        rows.append(row)
        print(f"{ds.name} {cfg}: {len(row.steps)} steps, KK lower max cost on {row.kk_lower(0)} "
              f"({row.seconds:.1f} s)", file=sys.stderr, flush=True)
    emit(markdown(rows) + f"\n\n{note}. Wall time {time.perf_counter() - t0:.0f} s.",
                 args.out)
    return 0

