"""python -m brsbench cost_model_accuracy: how well a calibrated cost model predicts micro-batch shapes it was not fitted on (CPU).

    BRS_LIBRARY=BUILD/libbrs/libbrs.so.1 PYTHONPATH=bindings/python:bench \
        python3 -m brsbench cost_model_accuracy [-o result.json] [--held-out N]
        [--batches training|mask-free]

For a GPT-2-shaped and a Qwen2-shaped tiny decoder (2 layers, width 128, random weights), on
one torch thread: the default calibration grid of a lognormal length distribution and N
held-out shapes (batch sizes and lengths absent from the grid) are timed together, by
calibrate's own timing (interleaved rounds, the fastest repeat of the thread's CPU time), the
cost model is fitted to the grid's rows by calibrate's own fit, and CostModel.predict is
compared with the held-out rows. Batches are calibrate's own (``--batches training``, the
default: bs rows drawn from the length distribution, padded to L with an attention mask and
labels -100 on padding, docs/calibration.md) or full rectangles without a mask
(``--batches mask-free``, what calibration timed before), for comparison; held-out shapes are
built the same way. Prints the median and 90th-percentile absolute relative
errors, and the same for the per-length weight table cost = intercept + bs*w(L)
(docs/calibration.md) fitted to the same grid, for comparison; writes everything, with the
load average, as JSON. Timings depend on the machine and its load: nothing here is asserted.
"""

import os
import platform
import time

import numpy as np
import torch

from brs import calibration
from brs.calibration import memory as _memory, shapes as _shapes

from .results import write_json

TINY = {
    "gpt2-tiny": ("GPT2Config", dict(n_layer=2, n_embd=128, n_head=4, vocab_size=8192,
                                      n_positions=1024, bos_token_id=0, eos_token_id=0)),
    "qwen2-tiny": ("Qwen2Config", dict(hidden_size=128, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2,
                                        intermediate_size=352, vocab_size=8192,
                                        max_position_embeddings=1024, tie_word_embeddings=True,
                                        hidden_act="silu")),
}


def dataset_lengths(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return np.clip(np.round(rng.lognormal(5.0, 0.8, n)), 16, 512).astype(int)


def held_out_shapes(grid, count, seed=1):
    """Shapes whose batch size and length both differ from every grid shape's, <= the CPU cap."""
    rng = np.random.default_rng(seed)
    sizes = {bs for bs, _ in grid}
    lengths = {length for _, length in grid}
    shapes = set()
    while len(shapes) < count:
        bs = int(rng.choice([b for b in (3, 5, 6, 7, 10, 12) if b not in sizes]))
        length = int(rng.integers(16, 513))
        if length not in lengths and bs * length <= calibration.grid.CPU_MAX_GRID_TOKENS:
            shapes.add((bs, length))
    return sorted(shapes, key=lambda s: (s[0] * s[1], s))


def weight_table_predictor(rows):
    """cost = c0 + bs*w(L): one weight per grid length and a shared intercept, fitted by least
    squares on relative error; w interpolated linearly between grid lengths."""
    lengths = sorted({r["length"] for r in rows})
    design = np.zeros((len(rows), 1 + len(lengths)))
    y = np.array([r["seconds"] for r in rows])
    for i, r in enumerate(rows):
        design[i, 0] = 1.0
        design[i, 1 + lengths.index(r["length"])] = r["batch_size"]
    coef, *_ = np.linalg.lstsq(design / y[:, None], np.ones_like(y), rcond=None)
    weights = np.maximum.accumulate(coef[1:])  # monotone in L, as the planner needs

    def predict(bs, length):
        return coef[0] + bs * np.interp(length, lengths, weights)
    return predict


def errors(predicted, measured):
    rel = np.abs(np.asarray(predicted) - measured) / measured
    return {"median": float(np.median(rel)), "p90": float(np.quantile(rel, 0.9)),
            "max": float(rel.max())}


def mask_free(rows):
    """Full rows of the longest length, no attention mask: the batch calibration timed before
    it took the training path."""
    longest = max(len(r["input_ids"]) for r in rows)
    ids = torch.tensor([(r["input_ids"] * longest)[:longest] for r in rows])
    return {"input_ids": ids, "labels": ids}


def evaluate(name, held_out_count, rounds, batches):
    """Calibrate on the default grid with the held-out shapes timed in the same interleaved
    rounds (so both see the same machine), fit on the grid rows only, predict the rest."""
    class_name, kwargs = TINY[name]
    import transformers

    model = _shapes.build_model(getattr(transformers, class_name)(**kwargs)).train()
    device, lengths = torch.device("cpu"), dataset_lengths()
    started = time.perf_counter()
    grid = calibration.grid.build(_shapes.max_positions(model), lengths, device, None, None)
    shapes = held_out_shapes(grid, held_out_count)
    load_before = os.getloadavg()[0]
    made = calibration.batches.Batches(lengths, kwargs["vocab_size"], 0,
                                       mask_free if batches == "mask-free" else None, device,
                                       torch)
    train = calibration.timing.TrainingStep(model, None, None, torch)
    rows, clock = calibration.timing.measure(sorted(grid + shapes, key=lambda s: s[0] * s[1]),
                                             made, rounds, train, _memory.PeakProbe(device),
                                             device, False, torch)
    fitted = [r for r in rows if (r["batch_size"], r["length"]) in set(grid)]
    held = [r for r in rows if (r["batch_size"], r["length"]) in set(shapes)]
    timing = calibration.record.timing_info(clock, rounds, rows, load_before,
                                            os.getloadavg()[0], [])
    cm = calibration.result.cost_model(fitted, lengths, None, "none", "", name, device, timing)
    measured = np.array([r["seconds"] for r in held])
    bs = np.array([r["batch_size"] for r in held])
    length = np.array([r["length"] for r in held])
    table = weight_table_predictor(fitted)
    return {"model": name, "batches": batches, "alpha": cm.alpha, "intercept": cm.intercept,
            "first_shape_seconds": cm.first_shape_seconds,
            "seconds_per_unit": cm.seconds_per_unit, "r2": cm.r2,
            "worst_residual": cm.worst_residual, "grid_shapes": len(grid), "timing": cm.timing,
            "three_term": errors(cm.predict(bs, length), measured),
            "weight_table": errors(table(bs, length), measured),
            "grid": cm.timings,
            "held_out": [dict(r, predicted=float(cm.predict(r["batch_size"], r["length"])))
                         for r in held],
            "seconds": time.perf_counter() - started}


def add_arguments(parser) -> None:
    parser.add_argument("-o", "--output", default="cost_model_accuracy.json")
    parser.add_argument("--held-out", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=calibration.run.DEFAULT_REPEATS)
    parser.add_argument("--models", default=",".join(TINY))
    parser.add_argument("--batches", choices=("training", "mask-free"), default="training",
                        help="calibrate's training-path batches, or the mask-free rectangles "
                        "it timed before (for comparison)")


def run(args) -> int:
    torch.set_num_threads(1)
    allocator = _memory.keep_freed_memory()  # as brs.calibrate does on CPU
    load_before = os.getloadavg()
    results = [evaluate(name, args.held_out, args.rounds, args.batches)
               for name in args.models.split(",")]
    report = {"machine": platform.machine(), "cpus": len(os.sched_getaffinity(0)),
              "torch": torch.__version__, "allocator": allocator, "load_average_before": load_before,
              "load_average_after": os.getloadavg(), "results": results}
    for r in results:
        print(f"{r['model']:>11}: alpha {r['alpha']:.4g}, intercept {r['intercept']:.4g}, R^2 "
              f"{r['r2']:.4f}, {r['grid_shapes']} grid shapes, {len(r['held_out'])} held out, "
              f"{r['batches']} batches, first shape +{r['first_shape_seconds'] * 1e3:.2f} ms "
              f"({r['seconds']:.0f} s)")
        for form in ("three_term", "weight_table"):
            e = r[form]
            print(f"{'':>13}{form:>12}: median {e['median']:.1%}  p90 {e['p90']:.1%}  "
                  f"max {e['max']:.1%}")
    print(f"load average {load_before[0]:.2f} before, {report['load_average_after'][0]:.2f} "
          f"after, on {report['cpus']} CPUs; wrote {args.output}")
    write_json(args.output, report, indent=2)
    return 0
