"""python -m brsbench same_samples: brs against upstream on the SAME samples, both sync models.

Every step brs plans is also given to upstream transformers' own BatchRebalanceSampler's split
of a step (brs.peers.assign, the function its sampler calls per optimizer step), and upstream's
micro-batches are loaded back into the library (`brs_plan_load`), so both plans are described by
the library's one cost model: step time under each sync model, peak padded tokens, the certified
lower bound. Then the same step is planned again with max_tokens = upstream's peak of that step
(the equal-memory run): brs's step time must not exceed upstream's on any step.

    PYTHONPATH=bindings/python:bench BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \\
        python3 -m brsbench same_samples [--full] [--out FILE]
"""

import math
import sys
import time
from dataclasses import dataclass, field

from . import studies
from .datasets import fit_to_batch
from .library import Library, shared
from .results import emit

SYNCS = ("micro_step", "step")
# Steps per (distribution, layout): upstream's hill climbing costs seconds per step at K = 1024.
MODES = {"quick": {"steps": 24, "steps_large_k": 2, "synthetic_n": 20000},
         "full": {"steps": 128, "steps_large_k": 8, "synthetic_n": 100000}}


@dataclass
class StepPair:
    brs_time: float
    up_time: float
    brs_peak: int
    up_peak: int
    bound: float
    capped_time: float


@dataclass
class Row:
    dataset: str
    config: str
    sync: str
    pairs: list[StepPair] = field(default_factory=list)
    seconds: float = 0.0

    def _geo(self, values):
        return math.exp(sum(math.log(v) for v in values) / len(values))

    def summary(self) -> dict:
        p = self.pairs
        faster_no_more_mem = sum(q.up_time < q.brs_time * (1 - 1e-12) and q.up_peak <= q.brs_peak
                                 for q in p)
        slower = sum(q.brs_time > q.up_time * (1 + 1e-12) for q in p)
        capped_slower = sum(q.capped_time > q.up_time * (1 + 1e-12) for q in p)
        return {
            "steps": len(p), "up_faster_no_more_mem": faster_no_more_mem, "brs_slower": slower,
            "time_ratio": self._geo([q.brs_time / q.up_time for q in p]),
            "time_ratio_worst": max(q.brs_time / q.up_time for q in p),
            "peak_ratio": self._geo([q.brs_peak / q.up_peak for q in p]),
            "time_over_bound": self._geo([q.brs_time / q.bound for q in p]),
            "time_over_bound_worst": max(q.brs_time / q.bound for q in p),
            "up_over_bound": self._geo([q.up_time / q.bound for q in p]),
            "capped_slower": capped_slower,
            "capped_ratio": self._geo([q.capped_time / q.up_time for q in p]),
        }


def compare(lib: Library, ds, cfg, sync: str, steps: int) -> Row:
    from brs import peers

    n = lib.n
    d = fit_to_batch(ds, cfg.global_batch, steps)
    sync_value = lib.value("sync", sync)
    options = {"batch_size": cfg.batch, "grad_accum": cfg.ga, "dp_size": cfg.dp, "rank": 0,
               "seed": studies.SEED, "sync": sync_value}
    sampler = lib.sampler(d.lengths, options)
    upstream = peers.batch_rebalance(d.lengths, effective_batch_size=cfg.global_batch,
                                     dp_size=cfg.dp, grad_accum=cfg.ga, seed=studies.SEED)
    ours, theirs, equal = lib.NativePlan(), lib.NativePlan(), lib.NativePlan()
    time_key = n.PLAN_STEP_SYNC_TIME if sync == "step" else n.PLAN_MICRO_SYNC_TIME
    row = Row(ds.name, str(cfg), sync)
    t0 = time.perf_counter()
    for t in range(min(steps, sampler.steps_per_epoch())):
        ours.compute(sampler.handle, 0, t)
        samples = [i for r in range(cfg.dp) for m in range(cfg.ga) for i in ours.indices(r, m)]
        rank_mbs = peers.assign(upstream, samples, [d.lengths[i] for i in samples])
        lib.load(theirs, sampler, rank_mbs, t)
        up_peak = theirs.get_int(n.PLAN_MAX_PADDED_TOKENS)
        # the step's samples alone (the cap must hold every sample of the sampler's dataset)
        capped = lib.sampler([d.lengths[i] for i in samples],
                             dict(options, shuffle=0, max_tokens=up_peak))
        equal.compute(capped.handle, 0, 0)
        row.pairs.append(StepPair(
            brs_time=ours.get_double(time_key), up_time=theirs.get_double(time_key),
            brs_peak=ours.get_int(n.PLAN_MAX_PADDED_TOKENS), up_peak=up_peak,
            bound=ours.get_double(n.PLAN_TIME_LOWER_BOUND), capped_time=equal.get_double(time_key)))
    row.seconds = time.perf_counter() - t0
    return row


HEADER = ("| data | dp x ga x P | sync | steps | upstream faster at no more peak memory | brs slower "
          "| brs/upstream step time, geo-mean (worst) | brs/upstream peak tokens | brs time / bound, "
          "geo-mean (worst) | upstream time / bound | equal memory: brs slower | equal memory: "
          "brs/upstream time |")


def markdown(rows: list[Row]) -> str:
    lines = [HEADER, "|" + "---|" * 12]
    total = {"steps": 0, "up_faster_no_more_mem": 0, "brs_slower": 0, "capped_slower": 0}
    for r in rows:
        s = r.summary()
        for k in total:
            total[k] += s[k]
        lines.append(
            f"| {r.dataset} | {r.config} | {r.sync} | {s['steps']} | {s['up_faster_no_more_mem']} | "
            f"{s['brs_slower']} | {s['time_ratio']:.4f} ({s['time_ratio_worst']:.4f}) | "
            f"{s['peak_ratio']:.3f} | {s['time_over_bound']:.4f} ({s['time_over_bound_worst']:.4f}) | "
            f"{s['up_over_bound']:.4f} | {s['capped_slower']} | {s['capped_ratio']:.4f} |")
    lines.append(f"\nAll rows: {total['steps']} steps; upstream faster at no more peak memory on "
                 f"{total['up_faster_no_more_mem']}, brs slower at all on {total['brs_slower']}, "
                 f"brs slower at equal memory (max_tokens = upstream's peak) on "
                 f"{total['capped_slower']}.")
    return "\n".join(lines)


add_arguments = studies.add_arguments


def run(args) -> int:
    lib = shared()
    rows = []
    t0 = time.perf_counter()
    for ds, cfg, steps in studies.cases(args, MODES):
        for sync in SYNCS:
            row = compare(lib, ds, cfg, sync, steps)
            rows.append(row)
            print(f"{ds.name} {cfg} {sync}: {row.summary()} ({row.seconds:.1f} s)",
                  file=sys.stderr, flush=True)
    emit(markdown(rows) + f"\n\nWall time {time.perf_counter() - t0:.0f} s.", args.out)
    return 0


if __name__ == "__main__":  # the older form, `python -m brsbench.same_samples`, in README.md
    from .__main__ import main

    sys.exit(main(["same_samples", *sys.argv[1:]]))
