"""python -m brsbench shapes: how many distinct tensor shapes each sampler makes a rank run in an
epoch, and what bounding them costs in step time, in the library's cost model.

Every new (batch size, padded length) can cost a one-time price on a GPU (a cuDNN plan, a
torch.compile recompilation, a CUDA graph capture). Samplers, on one epoch of each dataset (dp 4 x
grad_accum 2 x per-device batch 8, seed 42): upstream (transformers' BatchRebalanceSampler) and
group_by_length (LengthGroupedSampler as the Trainer deals it), each as is and padded to a multiple
of 64 by the collator; brs as is, with pad_to_multiple_of 64, and with the library's bucket ladder
(length_buckets="auto", 4 steps per doubling; alone, and rounded to 64). Every plan is described by
the library with the padding its collator applies (brs_plan_load on a sampler with that padding),
so cost, padded tokens and shapes are those of the tensors built.

Columns: shapes = distinct (batch size, padded tokens) of the rank with most (what
brs_sampler_shapes counts); time = summed per-micro-step sync time over the epoch, relative to brs
without padding; padding = padded / real tokens; a GPU scenario (GPU_MODEL below: the one H200
run's warm fit and its +117 ms first run of a shape, applied to these plans, not measured here):
epoch seconds with a micro-step waiting whenever a rank meets a shape new to it. Peers draw other
samples than brs in each step; the epoch totals compare the same dataset. "ladder/8" is the
library's ladder with 8 steps per doubling (brs_sampler_bucket_ladder).

    PYTHONPATH=bindings/python:bench BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \\
        python3 -m brsbench shapes [--out FILE] [--compile-steps N]

--compile-steps N (default 0: off) also runs rank 0's first N optimizer steps of each sampler
through a one-layer GPT-2 under torch.compile (dynamic=False, and the default automatic dynamic
shapes) on the CPU of the lognormal dataset, counting compilations (torch._dynamo's
frames compiled) and the measured seconds with and without them.
"""

import sys
import time
from pathlib import Path

import brs

from .datasets import load_all
from .library import shared
from .peers import Config, length_grouped, upstream_batch_rebalance
from .results import emit

CFG = Config(dp=4, ga=2, batch=8)
SEED = 42
MULTIPLE = 64


# A GPU scenario, not a measurement of this project: the one H200 run's warm micro-batches fit
# 67 ms + 7.7 ms per 1K padded tokens, and the first run of a new shape cost 117 ms more
# (bench/results/train_e2e/cuda-NVIDIA_H200, re-analysed). As a cost model: seconds per unit
# 7.7e-6 (one padded token), intercept 67 ms in those units, alpha 1.1e-4 (the warm shapes').
GPU_SECONDS_PER_UNIT = 7.7e-6
GPU_MODEL = {"alpha": 1.1e-4, "intercept": 0.067 / GPU_SECONDS_PER_UNIT}
GPU_FIRST_SHAPE_SECONDS = 0.117


def describer(lib, lengths, multiple, buckets, model):
    native = lib.sampler(lengths, {"batch_size": CFG.batch, "grad_accum": CFG.ga,
                                   "dp_size": CFG.dp, "seed": SEED,
                                   "pad_to_multiple_of": multiple})
    native.set_length_buckets(list(buckets))
    for name, value in model.items():
        native.set_double(lib.key(name), value)
    return native


def describe(lib, lengths, run_plan, multiple=1, buckets=()):
    """(max shapes over ranks, micro-sync time, padded tokens, real tokens, GPU scenario
    seconds) of an epoch plan described by the library with the collator's padding. In the GPU
    scenario a micro-step in which any rank meets a shape new to it waits for that first run."""
    native = describer(lib, lengths, multiple, buckets, {})
    gpu = describer(lib, lengths, multiple, buckets, GPU_MODEL)
    plan = lib.NativePlan()
    shapes = [set() for _ in range(CFG.dp)]
    time_total = gpu_seconds = padded = real = 0
    for step, rank_mbs in enumerate(run_plan):
        lib.load(plan, gpu, rank_mbs, step)
        gpu_seconds += plan.snapshot().micro_sync_time * GPU_SECONDS_PER_UNIT
        lib.load(plan, native, rank_mbs, step)
        snapshot = plan.snapshot()
        time_total += snapshot.micro_sync_time
        for micro in range(CFG.ga):
            new = False
            for rank, micro_batches in enumerate(snapshot.micro_batches):
                mb = micro_batches[micro]
                shape = (mb.num_samples, mb.padded_tokens)
                new |= shape not in shapes[rank]
                shapes[rank].add(shape)
                padded += mb.padded_tokens
                real += mb.real_tokens
            gpu_seconds += GPU_FIRST_SHAPE_SECONDS if new else 0.0
    return max(len(s) for s in shapes), time_total, padded, real, gpu_seconds


def ladder(lengths, steps_per_doubling):
    """The library's bucket ladder with another number of steps per doubling."""
    return shared().sampler(lengths, {}).bucket_ladder(steps_per_doubling)


def brs_plan(lengths, **options):
    sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=CFG.batch,
                                        grad_accum=CFG.ga, dp_size=CFG.dp, rank=0, seed=SEED,
                                        **options)
    steps = [[[mb.indices for mb in rank] for rank in sampler.plan(t).micro_batches]
             for t in range(sampler.steps_per_epoch)]
    return steps, sampler.length_buckets


def rows_of(lib, ds):
    """Every sampler of the dataset: (name, shapes, time, padded, real)."""
    lengths = ds.lengths
    upstream, _ = upstream_batch_rebalance(lengths, CFG, SEED)
    grouped = length_grouped(lengths, CFG, SEED)
    out = []
    for name, run_plan in (("upstream", upstream.plan), ("group_by_length", grouped.plan)):
        out.append((name, *describe(lib, lengths, run_plan)))
        out.append((f"{name}, pad 64", *describe(lib, lengths, run_plan, MULTIPLE)))
    variants = (("brs", {}), ("brs, pad 64", {"pad_to_multiple_of": MULTIPLE}),
                ("brs, ladder", {"length_buckets": "auto"}),
                ("brs, ladder/8", {"length_buckets": ladder(lengths, 8)}),
                ("brs, ladder + pad 64", {"length_buckets": "auto",
                                          "pad_to_multiple_of": MULTIPLE}))
    for name, options in variants:
        run_plan, buckets = brs_plan(lengths, **options)
        out.append((name, *describe(lib, lengths, run_plan,
                                    options.get("pad_to_multiple_of", 1), buckets)))
    return out


def markdown(results):
    lines = ["| dataset | sampler | shapes/rank | step time vs brs | padding (padded/real) "
             "| GPU scenario: epoch s (first runs incl.) | vs brs, pad 64 |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for ds_name, rows in results:
        base = next(r for r in rows if r[0] == "brs")[2]
        gpu_base = next(r for r in rows if r[0] == "brs, pad 64")[5]
        for name, shapes, time_total, padded, real, gpu in rows:
            lines.append(f"| {ds_name} | {name} | {shapes} | {time_total / base:.3f} | "
                         f"{padded / real:.3f} | {gpu:.1f} | {gpu / gpu_base:.3f} |")
    return "\n".join(lines)


def compile_rows(lengths, steps):
    """(sampler, mode, compilations, seconds measured, seconds of the steps without the first
    run of each shape) for rank 0's first `steps` optimizer steps under torch.compile."""
    import torch
    import torch._dynamo
    from transformers import GPT2Config, GPT2LMHeadModel

    upstream, _ = upstream_batch_rebalance(lengths, CFG, SEED)
    plans = {"upstream, pad 64": (upstream.plan, MULTIPLE),
             "brs, pad 64": (brs_plan(lengths, pad_to_multiple_of=MULTIPLE)[0], MULTIPLE),
             "brs, ladder + pad 64": (brs_plan(lengths, length_buckets="auto",
                                               pad_to_multiple_of=MULTIPLE)[0], MULTIPLE)}
    out = []
    for name, (run_plan, multiple) in plans.items():
        for mode, dynamic in (("dynamic=False", False), ("default", None)):
            torch.manual_seed(0)
            config = GPT2Config(n_layer=1, n_embd=64, n_head=2, vocab_size=256, n_positions=1088)
            model = torch.compile(GPT2LMHeadModel(config), dynamic=dynamic)
            torch._dynamo.reset()
            torch._dynamo.utils.counters.clear()
            seen, total, warm = set(), 0.0, 0.0
            for rank_mbs in run_plan[:steps]:
                for mb in rank_mbs[0]:
                    longest = max(lengths[i] for i in mb)
                    width = -(-longest // multiple) * multiple
                    ids = torch.randint(0, 256, (len(mb), width))
                    started = time.perf_counter()
                    model(input_ids=ids, labels=ids).loss.backward()
                    elapsed = time.perf_counter() - started
                    total += elapsed
                    if (len(mb), width) in seen:
                        warm += elapsed
                    seen.add((len(mb), width))
            compiled = torch._dynamo.utils.counters["stats"]["unique_graphs"]
            out.append((name, mode, compiled, total, warm))
            print(f"compile: {name} {mode}: {compiled} graphs, {total:.1f} s", file=sys.stderr,
                  flush=True)
    return out


def compile_markdown(rows, steps):
    lines = [f"Rank 0's first {steps} optimizer steps of lognormal, one-layer GPT-2 (n_embd 64) "
             "under torch.compile on this CPU; forward and backward of each micro-batch.", "",
             "| sampler | torch.compile | graphs compiled | seconds, all | seconds, repeated "
             "shapes only |", "|---|---|---:|---:|---:|"]
    for name, mode, compiled, total, warm in rows:
        lines.append(f"| {name} | {mode} | {compiled} | {total:.1f} | {warm:.1f} |")
    lines += ["", CACHE_NOTE]
    return "\n".join(lines)


CACHE_NOTE = ("Compile seconds depend on inductor's on-disk cache, which each run fills for the "
              "next (the first row pays most): compare graph counts, not seconds.")


def add_arguments(ap) -> None:
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--synthetic-n", type=int, default=8000)
    ap.add_argument("--compile-steps", type=int, default=0)
    ap.add_argument("--out", type=Path, help="also write the tables to this file")


def run(args) -> int:
    lib, t0, results = shared(), time.perf_counter(), []
    datasets = load_all(args.data, args.synthetic_n, SEED)
    for ds in datasets:
        results.append((ds.name, rows_of(lib, ds)))
        print(f"{ds.name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    text = markdown(results)
    if args.compile_steps:
        lognormal = next(ds for ds in datasets if ds.name == "lognormal")
        text += "\n\n" + compile_markdown(compile_rows(lognormal.lengths, args.compile_steps),
                                         args.compile_steps)
    text += f"\n\nWall time {time.perf_counter() - t0:.0f} s.\n"
    emit(text, args.out)
    return 0
