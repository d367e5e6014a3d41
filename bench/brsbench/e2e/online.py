"""python -m brsbench online: online calibration measured on the CPU e2e: the refit model against the one it replaced.

    BRS_LIBRARY=build/libbrs/libbrs.so.1 PYTHONPATH=bindings/python \\
        python3 -m brsbench online --out bench/results/train_e2e/cpu-online

Per dataset, a dp x grad_accum job (one process standing in for every rank, as
train_e2e) over upstream's steps:
1. before the switch: brs plans `--fit-steps` steps with the model a Trainer starts from (the
   analytic model of the model's config, CostModel.from_config); each is trained and every
   micro-batch timed into the online calibration's own statistics
   (brs/calibration/online.py), which are fitted and rounded as at an epoch boundary;
2. after it: the next `--steps` steps are planned with both models (the same samples) and
   trained interleaved, step k of one plan then step k of the other.
Reported: each model's error predicting the micro-batches of part 2 (median and 90th
percentile of |predicted - measured| / measured; the starting model prices in token units, so
it gets its best single scale, the online model its own seconds); the dp-rank step time of the
online plans against the starting plans, both sync models, with 95% bootstrap intervals over
the (paired) steps (summary.ratio_interval).
"""

import platform
import sys
import time

import numpy as np
import torch

import brs
from brs.calibration import online as online_fit
from brs.cost_model import from_seconds

from ..datasets import dataset_lengths
from . import job, measure, plans, summary


def add_arguments(p):
    job.add_arguments(p, datasets="lognormal,gsm8k")
    p.add_argument("--fit-steps", type=int, default=4)
    p.add_argument("--steps", type=int, default=12)


def online_model(run, start):
    """The online calibration's fit of the micro-batches `run` timed, rounded as it stores it."""
    stats = online_fit.Statistics()
    for bs, length, seconds in summary.micro_samples(run):
        stats.add(bs, length, bs * length, seconds)
    fit = stats.fit()
    if isinstance(fit, str):
        raise SystemExit(f"online fit failed: {fit}")
    *coefficients, r2, rel_rms = fit
    alpha, intercept, seconds_per_unit = from_seconds(coefficients)
    return brs.CostModel(online_fit.stored("alpha", alpha),
                         online_fit.stored("intercept", intercept), start.max_tokens, r2=r2,
                         worst_residual=rel_rms, source="calibrated",
                         seconds_per_unit=seconds_per_unit)


def prediction_error(model, samples, own_scale):
    bs, length, seconds = (np.array(x, float) for x in zip(*samples))
    cost = model.cost(bs, length)
    scale = model.seconds_per_unit if own_scale else float(np.median(seconds / cost))
    rel = np.abs(scale * cost - seconds) / seconds
    return {"median": float(np.median(rel)), "p90": float(np.quantile(rel, 0.9)),
            "scale": "own (seconds_per_unit)" if own_scale else "best single scale"}


def compare(name, lengths, args, model, vocab, start):
    total = args.fit_steps + args.steps
    _, samples = plans.upstream(lengths, args.dp, args.grad_accum, args.batch_size, args.seed)
    samples = samples[:total]
    before = plans.brs_plan(lengths, args.dp, args.grad_accum, args.batch_size, samples,
                            cost_model=start)
    device = torch.device("cpu")
    fitting = measure.Session(model, before, lengths, vocab, device, args.seed)
    for t in range(args.fit_steps):
        fitting.step(t)
    online = online_model(fitting.result(), start)
    after = plans.brs_plan(lengths, args.dp, args.grad_accum, args.batch_size, samples,
                           cost_model=online)
    sessions = {"start": measure.Session(model, before, lengths, vocab, device, args.seed),
                "online": measure.Session(model, after, lengths, vocab, device, args.seed)}
    for t in range(args.fit_steps, total):
        for session in sessions.values():
            session.step(t)
    runs = {k: s.result() for k, s in sessions.items()}
    held_out = [x for run in runs.values() for x in summary.micro_samples(run)]
    ratios = {}
    for sync, index in (("micro_step", 0), ("step", 1)):
        point, low, high = summary.ratio_interval(runs["online"], runs["start"], index)
        ratios[sync] = {"tokens_per_s_ratio": point, "low": low, "high": high,
                        "verdict": summary.verdict(low, high, args.steps)}
    return {"dataset": name, "start_model": start.to_dict(), "online_model": online.to_dict(),
            "error_start": prediction_error(start, held_out, own_scale=False),
            "error_online": prediction_error(online, held_out, own_scale=True),
            "error_online_best_scale": prediction_error(online, held_out, own_scale=False),
            "step_time": {k: [float(np.mean(x)) for x in summary.step_times(r)]
                          for k, r in runs.items()},
            "online_vs_start": ratios, "runs": runs}


def markdown(results):
    lines = [f"# Online calibration on the CPU e2e ({results['shape']}, dp={results['dp']} x "
             f"grad_accum {results['grad_accum']}, per-device batch {results['batch_size']})", "",
             f"Command: `{results['command']}`", "",
             f"Load average {results['load_average']} at start, {results['load_average_end']} at "
             f"the end; {results['allocator']}; torch {results['torch']}.", "",
             "| dataset | start model (alpha, intercept) | online model after "
             f"{results['fit_steps']} steps | prediction error, start (median / p90) | online "
             "(own seconds) | online (best scale) | dp-rank step time start -> online, "
             "micro-step sync | real tok/s online / start, micro-step sync [95%] | step sync "
             "[95%] |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results["datasets"]:
        s, o = r["start_model"], r["online_model"]
        e = [r[k] for k in ("error_start", "error_online", "error_online_best_scale")]
        st = r["step_time"]
        cells = [f"{x['tokens_per_s_ratio']:.3f}x [{x['low']:.3f}, {x['high']:.3f}] "
                 f"{x['verdict']}" for x in r["online_vs_start"].values()]
        lines.append(f"| {r['dataset']} | {s['alpha']:.3g}, {s['intercept']:.3g} | "
                     f"{o['alpha']:.3g}, {o['intercept']:.3g} (R^2 {o['r2']:.4f}) | " +
                     " | ".join(f"{x['median']:.1%} / {x['p90']:.1%}" for x in e) +
                     f" | {st['start'][0] * 1e3:.0f} -> {st['online'][0] * 1e3:.0f} ms | " +
                     " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run(args):
    config, model, allocator = job.cpu_model(args.shape, 1)
    start = brs.CostModel.from_config(config)  # what the Trainer plans with by default
    results = {"command": args.invocation, "shape": args.shape,
               "dp": args.dp, "grad_accum": args.grad_accum, "batch_size": args.batch_size,
               "fit_steps": args.fit_steps, "steps": args.steps, "allocator": allocator,
               "torch": torch.__version__, "python": platform.python_version(),
               "load_average": job.load_average(), "datasets": []}
    t0 = time.perf_counter()
    for name in args.datasets.split(","):
        lengths, _ = dataset_lengths(name, 1024, args.seed)
        results["datasets"].append(compare(name, lengths, args, model, config.vocab_size, start))
        print(f"{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    results["load_average_end"] = job.load_average()
    job.write(args.out, results, markdown(results))
    print(markdown(results))
    return 0

