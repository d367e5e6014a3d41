"""python -m brsbench train_e2e: measured training throughput of a small decoder with each
sampler, not a modelled one.

    python3 -m brsbench train_e2e                                # CPU, GPT-2-shaped, 2 layers
    python3 -m brsbench train_e2e --shape qwen2.5-0.5b --device cuda --dtype bf16 \
        --datasets lognormal --batch-sizes 4,8,12,16,20,24,32    # a GPU (bench/README.md)

For each dataset and per-device batch size: the plans of a dp x grad_accum job from
transformers' LengthGroupedSampler (group_by_length), upstream's BatchRebalanceSampler, fixed
random batches, brs with the library's default cost model and brs with the cost model
brs.calibrate measured on this model and device (and its max_tokens). The same steps of every
plan (the one holding the longest sample, then the first ones) are TRAINED: real forward,
backward, AdamW steps, each micro-batch timed; the dp-rank step time comes from those times
(brsbench/e2e/summary.py). An OOM is caught, recorded and the sweep goes on. Writes results.json,
report.md and throughput.png under --out. Needs torch, transformers, numpy, the brs package
(BRS_LIBRARY pointing at libbrs.so.1); matplotlib only for the plot.
"""

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch
import transformers

import brs
from brs.calibration import memory as _memory, shapes as _shapes

from ..datasets import dataset_lengths
from ..results import write_json, write_text
from . import measure, plans, summary

BENCH = Path(__file__).resolve().parents[2]  # bench/, whose results/ the default --out is in

DTYPES = {"fp32": torch.float32, "float32": torch.float32, "bf16": torch.bfloat16,
          "bfloat16": torch.bfloat16, "fp16": torch.float16}


def add_arguments(p):
    p.add_argument("--shape", default="gpt2-tiny", help=f"one of {', '.join(_shapes.SHAPES)}")
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default=None, choices=sorted(DTYPES),
                   help="default: bf16 on CUDA, fp32 on CPU")
    p.add_argument("--datasets", default="gsm8k,manpages,lognormal")
    p.add_argument("--max-length", type=int, default=1024,
                   help="lengths are clipped here (the model's positions)")
    p.add_argument("--dp", type=int, default=8)
    p.add_argument("--grad-accum", type=int, default=2)
    p.add_argument("--batch-sizes", default="4", help="per-device batch sizes, e.g. 4,8,12")
    p.add_argument("--steps", type=int, default=3, help="measured optimizer steps per sampler")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--calibrate-repeats", type=int, default=3)
    p.add_argument("--memory-budget", default=None, help="for brs.calibrate, e.g. 70GiB")
    p.add_argument("--cost-model", default=None, metavar="FILE",
                   help="a cost model JSON from `python -m brs calibrate` on this model and "
                   "device, instead of calibrating here")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--time-budget", type=float, default=None,
                   help="seconds; stop starting new measurements after this (results so far "
                   "are written)")
    p.add_argument("--interleave", action=argparse.BooleanOptionalAction, default=None,
                   help="train step k of every sampler before step k+1 of any (default: on "
                   "for CPU, off for CUDA, where each sampler's peak memory must be its own)")
    p.add_argument("--rewrite-report", action="store_true",
                   help="only rewrite report.md and the plot from --out's results.json")
    p.add_argument("--out", default=None, help="default bench/results/train_e2e/<device>")


def device_name(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"


def slug(text):
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in text).strip("_")[:60]


class Clock:
    def __init__(self, budget):
        self.start, self.budget = time.perf_counter(), budget

    def expired(self):
        return self.budget is not None and time.perf_counter() - self.start > self.budget


def measure_block(model, name, lengths, args, calibrated, device, vocab, clock, skip):
    """One (dataset, batch size): every sampler's chosen steps trained and timed.

    Interleaved (--interleave, the CPU default): round k trains step k of every sampler in turn,
    so that a machine whose load changes over minutes slows all samplers alike. Sequential
    (the CUDA default): one sampler after the other, so that each one's peak memory is its own.
    """
    batch = args.batch
    all_plans = plans.all_plans(lengths, args.dp, args.grad_accum, batch, args.seed, calibrated)
    block = {"dataset": name, "batch_size": batch, "samplers": {}}
    live = {}
    for sampler, plan in all_plans.items():
        if isinstance(plan, str) or sampler in skip:
            block["samplers"][sampler] = {"skipped": plan if isinstance(plan, str) else
                                          f"skipped: OOM at a smaller batch ({skip[sampler]})"}
        else:
            live[sampler] = (plan, plans.chosen_steps(plan, lengths, args.steps))
    order = ([[(s, k) for s in live] for k in range(args.steps)] if args.interleave
             else [[(s, k) for k in range(args.steps)] for s in live])
    sessions = {}
    for group in order:
        for sampler, k in group:
            if sampler in block["samplers"] or k >= len(live[sampler][1]):
                continue
            if clock.expired():
                block["samplers"][sampler] = {"skipped": "skipped: --time-budget spent"}
                continue
            plan, steps = live[sampler]
            session = sessions.get(sampler) or sessions.setdefault(
                sampler, measure.Session(model, plan, lengths, vocab, device, args.seed))
            failed = measure.guarded(lambda: session.step(steps[k]), device)
            if failed:
                skip[sampler] = f"P={batch}"
                block["samplers"][sampler] = failed
                sessions.pop(sampler).result()
                measure.free_cached(device)
                print(f"  {name} P={batch} {sampler}: OOM", file=sys.stderr, flush=True)
            if not args.interleave and k == len(steps) - 1 and sampler in sessions:
                _finish(block, name, batch, sampler, sessions.pop(sampler), device)
    for sampler, session in sessions.items():
        _finish(block, name, batch, sampler, session, device)
    return block


def _finish(block, name, batch, sampler, session, device):
    run = session.result()
    measure.free_cached(device)
    if not run["micro"]:
        block["samplers"].setdefault(sampler, {"skipped": "skipped: --time-budget spent"})
        return
    run["summary"] = summary.describe(run)
    block["samplers"][sampler] = run
    s = run["summary"]
    print(f"  {name} P={batch} {sampler}: step {s['step_time_micro_sync'] * 1e3:.0f} ms, "
          f"{s['real_tokens_per_s']:.0f} real tok/s", file=sys.stderr, flush=True)


def run(args):
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if args.interleave is None:
        args.interleave = device.type != "cuda"
    dtype = DTYPES[args.dtype] if args.dtype else (
        torch.bfloat16 if device.type == "cuda" else torch.float32)
    out = Path(args.out or BENCH / "results" / "train_e2e" / slug(
        "cuda-" + device_name(device) if device.type == "cuda" else "cpu"))
    out.mkdir(parents=True, exist_ok=True)
    if args.rewrite_report:
        results = json.loads((out / "results.json").read_text())
        write(results, cost_models(_shapes.shape_config(results["shape"]),
                                   brs.CostModel.from_dict(results["calibration"])), out)
        return 0
    clock = Clock(args.time_budget)
    # every sampler trains under it, as brs.calibrate measures
    # (brs.calibration.memory.keep_freed_memory)
    allocator = _memory.keep_freed_memory() if device.type == "cpu" else None
    config = _shapes.shape_config(args.shape)
    model = _shapes.build_model(config, device=device, dtype=dtype, attention="sdpa")
    model.config.use_cache = False
    vocab = config.vocab_size
    try:
        datasets = {n: dataset_lengths(n, args.max_length, args.seed)
                    for n in args.datasets.split(",")}
    except ValueError as exc:
        raise SystemExit(f"--datasets: {exc}") from None

    started = time.perf_counter()
    if args.cost_model:
        calibrated = brs.CostModel.load(args.cost_model)
    else:
        calib_lengths = [x for lengths, _ in datasets.values() for x in lengths]
        calibrated = brs.calibrate(model, calib_lengths, repeats=args.calibrate_repeats,
                                   memory_budget=args.memory_budget, progress=False)
    calibrate_seconds = time.perf_counter() - started
    print(f"cost model ({args.cost_model or 'calibrated here'}) in {calibrate_seconds:.0f} s: alpha {calibrated.alpha:.3g}, intercept "
          f"{calibrated.intercept:.3g}, max_tokens {calibrated.max_tokens}, R^2 "
          f"{calibrated.r2:.3f}", file=sys.stderr, flush=True)
    models = cost_models(config, calibrated)

    results = {"command": args.invocation,
               "device": device_name(device), "device_type": device.type,
               "device_memory_bytes": (torch.cuda.get_device_properties(device).total_memory
                                       if device.type == "cuda" else None),
               "torch": torch.__version__, "cuda": torch.version.cuda,
               "transformers": transformers.__version__, "brs_library": brs.library_version,
               "python": platform.python_version(), "allocator": allocator,
               "shape": args.shape,
               "dtype": str(dtype).replace("torch.", ""), "dp": args.dp,
               "grad_accum": args.grad_accum, "steps": args.steps, "interleave": args.interleave,
               "threads":
               torch.get_num_threads(), "load_average": _load(),
               "datasets": {n: s for n, (_, s) in datasets.items()},
               "calibration": calibrated.to_dict(), "calibrate_seconds": calibrate_seconds,
               "runs": []}
    try:
        for name, (lengths, _) in datasets.items():
            skip = {}
            for batch in [int(b) for b in args.batch_sizes.split(",")]:
                if clock.expired():
                    break
                args.batch = batch
                results["runs"].append(measure_block(model, name, lengths, args, calibrated,
                                                     device, vocab, clock, skip))
                save_so_far(results, models, out)  # what is measured survives a killed run
    finally:
        save_so_far(results, models, out)
    return 0


def cost_models(config, calibrated):
    return {"fixed (0.001)": brs.CostModel.fixed(),
            "analytic (from_config)": brs.CostModel.from_config(config),
            "calibrated": calibrated}


def _load():
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def save_so_far(results, models, out):
    results["load_average_end"] = _load()
    write(results, models, out)


def write(results, models, out):
    samples = [s for block in results["runs"] for r in block["samplers"].values()
               if "summary" in r for s in summary.micro_samples(r)]
    results["model_error"] = summary.model_error(samples, models) if samples else {}
    write_json(out / "results.json", results)
    has_plot = summary.plot(results, out / "throughput.png")
    cal = results["calibration"]
    report = [f"# End-to-end training: {results['shape']} ({results['dtype']}) on "
              f"{results['device']}", "",
              f"torch {results['torch']} (CUDA {results['cuda']}), transformers "
              f"{results['transformers']}, libbrs {results['brs_library']}, dp={results['dp']} "
              f"simulated, grad_accum {results['grad_accum']}, {results['steps']} measured "
              f"steps per sampler, torch threads {results['threads']}, load average at start "
              f"{results['load_average']}.", "", f"Command: `{results['command']}`", "",
              f"Calibrated: alpha {cal['alpha']:.4g}, intercept {cal['intercept']:.4g}, "
              f"max_tokens {cal['max_tokens']}, R^2 {cal['r2']:.3f}, worst residual "
              f"{cal['worst_residual']:.1%} ({results['calibrate_seconds']:.0f} s).", "",
              summary.markdown(results), "## Cost model vs measured micro-batch time", "",
              summary.error_markdown(results["model_error"]), ""]
    if has_plot:
        report += ["![throughput](throughput.png)", ""]
    write_text(out / "report.md", "\n".join(report))
    print(f"wrote {out}/results.json, report.md" + (", throughput.png" if has_plot else ""),
          file=sys.stderr)

