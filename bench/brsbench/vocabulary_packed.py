"""python -m brsbench vocabulary_packed: max_shapes in packed mode, modelled.

In packed mode a micro-batch is one row, whose tensors are (1, padded row total); max_shapes
bounds the distinct row totals of the whole run to the vocabulary's rows (the padded cap's row
and the ones that pad the sampled rows least; docs/algorithm.md, "Shape vocabulary"). This study
plans, on each dataset of the bench (brsbench.datasets.load_all), EPOCHS epochs of packed steps
(dp 4 x grad_accum 2 x per-device batch 8, seed 42, max_tokens CAP or the longest sample padded
where that is longer, pad_to_multiple_of 64) with
brs unbounded and with max_shapes in MAX_SHAPES, and reports the union of distinct row totals
over all ranks and epochs, the mean modelled per-micro-step sync step time as a ratio to brs
unbounded (the padding tokens the vocabulary adds priced as one-token samples), and the padded
tokens over the real ones. The plans are the sampler's own (Plan.micro_sync_time,
MicroBatch.padded_tokens); nothing is timed.

    PYTHONPATH=bindings/python:bench BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \\
        python3 -m brsbench vocabulary_packed [--out FILE.md]
"""

import statistics
import sys
import time
from pathlib import Path

import brs

from .datasets import load_all
from .results import emit
from .shapes import CFG, MULTIPLE, SEED

EPOCHS = 3
MAX_SHAPES = (1, 4, 8, 16)
CAP = 16384


def cap_of(lengths):
    return max(CAP, -(-max(lengths) // MULTIPLE) * MULTIPLE)


def tally(lengths, max_shapes):
    """(distinct row totals over ranks and epochs, mean micro-sync time, padded / real)."""
    sampler = brs.BatchRebalanceSampler(
        lengths, per_device_batch_size=CFG.batch, grad_accum=CFG.ga, dp_size=CFG.dp, rank=0,
        seed=SEED, packed=True, max_tokens=cap_of(lengths), pad_to_multiple_of=MULTIPLE,
        max_shapes=max_shapes or None)
    rows, times, padded, real = set(), [], 0, 0
    for epoch in range(EPOCHS):
        for step in range(sampler.steps_per_epoch):
            plan = sampler.plan(step, epoch=epoch)
            times.append(plan.micro_sync_time)
            padded += plan.total_padded_tokens
            real += plan.total_real_tokens
            rows.update(mb.padded_tokens for rank in plan.micro_batches for mb in rank)
    return len(rows), statistics.fmean(times), padded / real


def markdown(results, invocation, seconds):
    head = "| dataset | max_tokens | " + " | ".join(
        ["brs unbounded"] + [f"max_shapes={k}" for k in MAX_SHAPES]) + " |"
    lines = ["# max_shapes in packed mode (modelled)", "",
             f"`{invocation}` ({seconds:.0f} s). dp {CFG.dp} x grad_accum {CFG.ga} x per-device "
             f"batch {CFG.batch}, packed, pad_to_multiple_of {MULTIPLE}, seed "
             f"{SEED}, {EPOCHS} epochs. Each cell: distinct row totals over all ranks and epochs; "
             "mean modelled step time (micro_step sync) / brs unbounded's; padded / real tokens.",
             "", head, "|---" * (len(MAX_SHAPES) + 3) + "|"]
    for name, cap, cells in results:
        base = cells[0][1]
        lines.append(f"| {name} | {cap} | " + " | ".join(
            f"{shapes} rows; {time / base:.3f}; {pad:.3f}" for shapes, time, pad in cells) + " |")
    return "\n".join(lines) + "\n"


def add_arguments(ap) -> None:
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--synthetic-n", type=int, default=8000)
    ap.add_argument("--only", help="comma-separated dataset names (development)")
    ap.add_argument("--out", type=Path, help="also write the markdown to this file")


def run(args) -> int:
    t0, results = time.perf_counter(), []
    names = args.only.split(",") if args.only else None
    for ds in load_all(args.data, args.synthetic_n, SEED):
        if names is None or ds.name in names:
            results.append((ds.name, cap_of(ds.lengths),
                            [tally(ds.lengths, k) for k in (0,) + MAX_SHAPES]))
            print(f"{ds.name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    emit(markdown(results, getattr(args, "invocation", "python3 -m brsbench vocabulary_packed"),
                  time.perf_counter() - t0), args.out)
    return 0
