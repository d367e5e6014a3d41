"""python -m brsbench same_shapes: brs against upstream on the SAME samples, every micro-batch's time MEASURED, not modelled.

    BRS_LIBRARY=build/libbrs/libbrs.so.1 PYTHONPATH=bindings/python \\
        python3 -m brsbench same_shapes --out bench/results/same_shapes \\
        [--calibration training|mask-free]

Per dataset: upstream transformers' BatchRebalanceSampler plans `--steps` steps of a dp x
grad_accum job; brs plans exactly those steps' samples with the cost model calibrated on the
same model (`--cost-model`, or brs.calibrate here: on the training path by default, padded
batches with attention masks as docs/calibration.md describes, or `--calibration mask-free`,
the full rectangles without a mask it timed before) under the sync model given. Every distinct
micro-batch shape (batch size, padded length) of both plans is then trained (forward and
backward) `--repeats` times, as training builds it (the samples of the first micro-batch of
that shape, padded to the longest with an attention mask and labels -100 on padding), in
rounds over the shuffled list of all shapes, so that a change of the machine's load slows
every shape alike; each shape keeps its minimum, the estimator least moved by other work
(interference only ever adds time). Step times follow from those shape times under the sync
model brs planned for (brsbench/e2e/summary.py's definitions): brs's total against upstream's,
and the steps where brs is measured slower by more than the timing's own spread (the median
relative gap between a shape's two fastest repeats).
"""

import platform
import random
import sys
import time

import torch
import transformers

import brs
from brs.calibration import batches as _batches

from ..datasets import dataset_lengths
from . import job, plans


def add_arguments(p):
    job.add_arguments(p, datasets="lognormal,manpages,gsm8k")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--sync", choices=("micro_step", "step"), default="micro_step")
    p.add_argument("--cost-model", default=None, metavar="FILE",
                   help="a cost model from `python -m brs calibrate` on this model (default: "
                   "calibrate here)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--calibration", choices=("training", "mask-free"), default="training",
                   help="without --cost-model: calibrate on padded, masked batches (training's, "
                   "the default) or on full rectangles without a mask (before)")


def mask_free(rows):
    """Full rows of the longest length, no attention mask: what calibration timed before."""
    longest = max(len(r["input_ids"]) for r in rows)
    ids = torch.tensor([(r["input_ids"] * longest)[:longest] for r in rows])
    return {"input_ids": ids, "labels": ids}


def step_time(step_shapes, times, sync):
    """A step's time from its [rank][micro] shapes: the sync model's sum of maxima or max of sums."""
    grid = [[times[shape] for shape in rank] for rank in step_shapes]
    if sync == "step":
        return max(sum(rank) for rank in grid)
    return sum(max(rank[m] for rank in grid) for m in range(len(grid[0])))


def plan_shapes(plan, lengths):
    """plan[step][rank][micro] -> (batch size, padded length)."""
    return [[[(len(mb), max(lengths[i] for i in mb)) for mb in rank] for rank in step]
            for step in plan]


def shape_samples(plans, lengths):
    """{(batch size, padded length): the sample lengths of its first micro-batch}."""
    samples = {}
    for plan in plans:
        for mb in (mb for step in plan for rank in step for mb in rank):
            key = (len(mb), max(lengths[i] for i in mb))
            samples.setdefault(key, [int(lengths[i]) for i in mb])
    return samples


def padded_batch(sample_lengths, vocab, rng):
    """The batch training builds of samples of these lengths (random ids): calibrate's."""
    rows = [{"input_ids": [rng.randrange(1, vocab) for _ in range(n)]} for n in sample_lengths]
    return _batches.default_collate(rows, 0, torch)


def time_shapes(model, samples, repeats, vocab, rng):
    """{shape: [wall seconds per repeat]}: rounds over a freshly shuffled list of all shapes,
    each shape's batch built once, untimed."""
    built = {shape: padded_batch(n, vocab, rng) for shape, n in samples.items()}
    seconds = {shape: [] for shape in samples}
    order = list(samples)
    for _ in range(repeats):
        rng.shuffle(order)
        for shape in order:
            started = time.perf_counter()
            model(**built[shape]).loss.backward()
            seconds[shape].append(time.perf_counter() - started)
            model.zero_grad(set_to_none=True)
    return seconds


def own_spread(seconds):
    """The median relative gap between each shape's two fastest repeats."""
    gaps = sorted((s[1] - s[0]) / s[0] for s in (sorted(v) for v in seconds.values()) if len(s) > 1)
    return gaps[len(gaps) // 2] if gaps else float("nan")


def compare(name, lengths, args, model, vocab, cost_model, rng):
    up_plan, samples = plans.upstream(lengths, args.dp, args.grad_accum, args.batch_size,
                                      args.seed)
    if up_plan is None:
        raise SystemExit("this transformers has no BatchRebalanceSampler")
    up_plan, samples = up_plan[:args.steps], samples[:args.steps]
    ours = plans.brs_plan(lengths, args.dp, args.grad_accum, args.batch_size, samples,
                          cost_model=cost_model, sync=args.sync)
    up_shapes, our_shapes = plan_shapes(up_plan, lengths), plan_shapes(ours, lengths)
    distinct = sorted({mb for plan in (up_shapes, our_shapes) for step in plan for rank in step
                       for mb in rank})
    samples = shape_samples((up_plan, ours), lengths)
    started = time.perf_counter()
    seconds = time_shapes(model, {shape: samples[shape] for shape in distinct}, args.repeats,
                          vocab, rng)
    best = {shape: min(v) for shape, v in seconds.items()}
    spread = own_spread(seconds)
    up_steps = [step_time(s, best, args.sync) for s in up_shapes]
    our_steps = [step_time(s, best, args.sync) for s in our_shapes]
    modelled = {shape: cost_model.cost(*shape) for shape in distinct}
    modelled_ratio = (sum(step_time(s, modelled, args.sync) for s in our_shapes) /
                      sum(step_time(s, modelled, args.sync) for s in up_shapes))
    slower = [t for t, (a, b) in enumerate(zip(our_steps, up_steps)) if a > b * (1 + spread)]
    return {"dataset": name, "steps": len(up_steps), "distinct_shapes": len(distinct),
            "timing_seconds": time.perf_counter() - started, "own_spread": spread,
            "brs_total": sum(our_steps), "upstream_total": sum(up_steps),
            "ratio": sum(our_steps) / sum(up_steps), "modelled_ratio": modelled_ratio,
            "steps_brs_slower_beyond_spread": slower,
            "steps_brs_slower_at_all": sum(a > b for a, b in zip(our_steps, up_steps)),
            "brs_steps": our_steps, "upstream_steps": up_steps,
            "shapes": [[bs, length, v] for (bs, length), v in seconds.items()]}


def markdown(results):
    lines = [f"# Same samples, measured: brs against upstream ({results['shape']}, "
             f"{results['threads']} thread, sync {results['sync']})", "",
             f"Command: `{results['command']}`", "",
             f"Cost model ({results['calibration']} calibration): alpha "
             f"{results['cost_model']['alpha']:.4g}, intercept "
             f"{results['cost_model']['intercept']:.4g}; load average {results['load_average']} "
             f"at start, {results['load_average_end']} at the end; torch {results['torch']}, "
             f"transformers {results['transformers']}.", "",
             "| dataset | steps | distinct shapes | brs / upstream, total measured step time | "
             "(modelled) | steps brs slower (at all / beyond the spread) | timing spread |",
             "|---|---|---|---|---|---|---|"]
    for r in results["datasets"]:
        lines.append(f"| {r['dataset']} | {r['steps']} | {r['distinct_shapes']} | "
                     f"{r['ratio']:.3f} | {r['modelled_ratio']:.3f} | "
                     f"{r['steps_brs_slower_at_all']} / "
                     f"{len(r['steps_brs_slower_beyond_spread'])} | {r['own_spread']:.1%} |")
    return "\n".join(lines) + "\n"


def run(args):
    config, model, allocator = job.cpu_model(args.shape, args.threads)
    datasets = {n: dataset_lengths(n)[0] for n in args.datasets.split(",")}
    if args.cost_model:
        cost_model = brs.CostModel.load(args.cost_model)
    else:
        cost_model = brs.calibrate(model, [x for v in datasets.values() for x in v],
                                   collate_fn=mask_free if args.calibration == "mask-free"
                                   else None, progress=False)
    rng = random.Random(args.seed)
    results = {"command": args.invocation, "shape": args.shape,
               "calibration": "file" if args.cost_model else args.calibration,
               "threads": args.threads, "sync": args.sync, "repeats": args.repeats,
               "torch": torch.__version__, "transformers": transformers.__version__,
               "python": platform.python_version(), "allocator": allocator,
               "load_average": job.load_average(),
               "cost_model": cost_model.to_dict(), "datasets": []}
    for name, lengths in datasets.items():
        results["datasets"].append(compare(name, lengths, args, model, config.vocab_size,
                                           cost_model, rng))
        r = results["datasets"][-1]
        print(f"{name}: brs/upstream {r['ratio']:.3f}, slower on {r['steps_brs_slower_at_all']}"
              f" steps ({len(r['steps_brs_slower_beyond_spread'])} beyond the spread "
              f"{r['own_spread']:.1%})", file=sys.stderr, flush=True)
    results["load_average_end"] = job.load_average()
    job.write(args.out, results, markdown(results))
    print(markdown(results))
    return 0

