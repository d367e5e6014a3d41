"""python -m brsbench.equal_memory: brs against upstream batch_rebalance at the SAME memory peak.

Upstream front-loads work into the first micro-step, which can cost it many times brs's peak
padded tokens; brs without a cap keeps its own (lower) peak. Given upstream's peak as max_tokens,
brs may use that memory too; this compares the epoch step times then, on the same steps upstream
drew (every distribution x configuration of the quality benchmark, first STEPS steps).

    PYTHONPATH=bindings/python:bench BRS_LIBRARY=<build>/libbrs/libbrs.so.1 python3 -m brsbench.equal_memory
"""

import sys
from pathlib import Path

from . import metrics, peers
from .datasets import fit_to_batch, load_all
from .quality import CONFIGS

STEPS = 40
SEED = 42


def compare(ds, cfg):
    d = fit_to_batch(ds, cfg.global_batch, 8)
    upstream, step_samples = peers.upstream_batch_rebalance(d.lengths, cfg, SEED)
    steps = min(len(step_samples), STEPS)
    theirs = metrics.score("upstream", upstream.plan[:steps], d.lengths)
    order = [i for step in step_samples[:steps] for i in step]
    try:
        run = peers.brs_epoch(d.lengths, cfg, name="brs", order=order,
                              max_tokens=theirs.peak_tokens)
    except peers.BrsInfeasible:
        return None
    ours = metrics.score("brs", run.plan[:steps], d.lengths)
    return (ours.micro_sync / theirs.micro_sync, ours.step_sync / theirs.step_sync,
            ours.peak_tokens / theirs.peak_tokens, theirs.peak_tokens)


def main():
    print("| data | dp x ga x P | max_tokens = upstream peak | step time brs/upstream, per-micro-step sync"
          " | per-step sync | peak brs/upstream |")
    print("|---|---|---|---|---|---|")
    worse = cases = 0
    for ds in load_all(Path("data"), 20000, 0):
        for cfg in CONFIGS:
            r = compare(ds, cfg)
            if r is None:
                print(f"| {ds.name} | {cfg} | (some step cannot meet upstream's peak with K "
                      "micro-batches) | | | |")
                continue
            micro, step, peak, cap = r
            cases += 1
            worse += micro > 1 + 1e-9 or step > 1 + 1e-9
            print(f"| {ds.name} | {cfg} | {cap} | {micro:.3f} | {step:.3f} | {peak:.3f} |")
    print(f"\nbrs slower than upstream at equal memory in {worse} of {cases} cases")


if __name__ == "__main__":
    sys.exit(main())
