"""python -m brsbench model_families: how well brs.calibrate's training-path fit predicts held-out micro-batch shapes across model families (CPU).

    BRS_LIBRARY=BUILD/libbrs/libbrs.so.1 PYTHONPATH=bindings/python:bench HF_HUB_OFFLINE=1 \\
        python3 -m brsbench model_families [-o bench/results/model_families.md]
        [--families gpt2,qwen2,...] [--held-out 10] [--rounds 4]

For tiny configs (2 layers, width 64, vocabulary 4096, random weights, built from the config:
nothing downloaded) of GPT-2, Qwen2, Llama, Mistral (sliding window 128), Qwen2-MoE (4 experts,
top 2, a shared expert) and Qwen2-VL (the language model's text path, and its vision tower's
encoder part on image calls): calibrate's default grid of a lognormal(5, 0.8) length
distribution (16..512) and held-out shapes (batch sizes and lengths absent from the grid) are
timed in the same interleaved rounds by calibrate's own timing (one torch thread, the thread's
CPU time, calibrate's batches: drawn lengths, attention mask, labels -100 on padding). The grid
rows are fitted two ways, on the same timings:
- before: the fit before this study (fit_three_terms of each shape's fastest repeat), compared
  with the held-out shapes' fastest repeats;
- after: calibrate's fit now (calibration.fit.fit_timings: the fastest or the median repeat,
  whichever the three-term form describes better on the grid), compared with the held-out
  shapes by the estimator it chose (and, for reference, with their fastest repeats).
Qwen2-VL's tower is fitted by calibrate's encoder fit on a grid of image calls and compared with
held-out calls (other sizes and counts). Prints and writes a markdown table (median and p90 of
the absolute relative error per family) and the rows as JSON beside it. Timings depend on the
machine and its load: nothing is asserted.
"""

import os
import platform
import time

import numpy as np
import torch

from brs import CostModel, calibration
from brs.calibration import encoder as _encoder, fit as _fit, memory as _memory, shapes as _shapes

from .cost_model_accuracy import dataset_lengths, errors, held_out_shapes
from .results import write_json, write_text

WIDTH = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
             intermediate_size=176, vocab_size=4096, max_position_embeddings=1024,
             hidden_act="silu")
FAMILIES = {
    "gpt2": ("GPT2Config", dict(n_layer=2, n_embd=64, n_head=4, vocab_size=4096,
                                n_positions=1024, bos_token_id=0, eos_token_id=0)),
    "qwen2": ("Qwen2Config", dict(WIDTH, tie_word_embeddings=True)),
    "llama": ("LlamaConfig", dict(WIDTH)),
    "mistral": ("MistralConfig", dict(WIDTH, sliding_window=128)),
    "qwen2-moe": ("Qwen2MoeConfig", dict(WIDTH, num_experts=4, num_experts_per_tok=2,
                                         moe_intermediate_size=64,
                                         shared_expert_intermediate_size=64)),
    "qwen2-vl": ("Qwen2VLConfig", dict(
        text_config=dict(WIDTH, rope_scaling={"type": "mrope", "mrope_section": [2, 2, 4]}),
        vision_config=dict(depth=1, embed_dim=32, hidden_size=64, num_heads=2, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2, in_channels=3))),
}
#: The encoder's grid and held-out calls: (h, w) grids of patches (multiples of the merge size).
IMAGE_GRID = [(4, 4), (8, 8), (12, 12), (16, 16)]
IMAGE_COUNTS = [1, 2]
IMAGE_HELD_OUT = [((6, 6), 3), ((10, 10), 1), ((10, 14), 2), ((14, 14), 3), ((6, 20), 2),
                  ((20, 20), 1)]


def predict(coef, rows):
    bs = np.array([r["batch_size"] for r in rows], dtype=float)
    length = np.array([r["length"] for r in rows], dtype=float)
    return _fit.design(bs, length) @ np.asarray(coef)


def evaluate_text(name, model, vocab, held_out_count, rounds):
    device, lengths = torch.device("cpu"), dataset_lengths()
    grid = calibration.grid.build(_shapes.max_positions(model), lengths, device, None, None)
    shapes = held_out_shapes(grid, held_out_count)
    made = calibration.batches.Batches(lengths, vocab, 0, None, device, torch)
    train = calibration.timing.TrainingStep(model, None, None, torch)
    load_before = os.getloadavg()[0]
    rows, clock = calibration.timing.measure(sorted(grid + shapes, key=lambda s: s[0] * s[1]),
                                             made, rounds, train, _memory.PeakProbe(device),
                                             device, False, torch)
    fitted = [r for r in rows if (r["batch_size"], r["length"]) in set(grid)]
    held = [r for r in rows if (r["batch_size"], r["length"]) in set(shapes)]
    before = _fit.fit_three_terms([r["batch_size"] for r in fitted],
                                  [r["length"] for r in fitted],
                                  [r["seconds"] for r in fitted], robust=True)
    after = _fit.fit_timings(fitted)
    truth = {e: np.array(_fit.estimator_values(held, e)) for e in _fit.ESTIMATORS}
    coef = {k: (f["c0"], f["c1"], f["c2"]) for k, f in (("before", before), ("after", after))}
    return {"family": name, "grid_shapes": len(grid), "held_out_shapes": len(held),
            "clock": clock, "load_average": [load_before, os.getloadavg()[0]],
            "before": dict(errors(predict(coef["before"], held), truth["min"]), r2=before["r2"],
                           alpha=before["c2"] / before["c1"]),
            "after": dict(errors(predict(coef["after"], held), truth[after["estimator"]]),
                          r2=after["r2"], alpha=after["c2"] / after["c1"],
                          estimator=after["estimator"], residuals=after["residuals"]),
            "after_vs_fastest": errors(predict(coef["after"], held), truth["min"]),
            "median_spread": float(np.median([r["spread"] for r in rows])),
            "grid": fitted, "held": held}


def evaluate_encoder(model, rounds, seconds_per_unit):
    device = torch.device("cpu")
    hook = _encoder.qwen2_vl(model)
    grid = _encoder.grid(IMAGE_GRID, IMAGE_COUNTS, device)
    held_shapes = [(count, size) for size, count in IMAGE_HELD_OUT]
    shapes = sorted(set(grid) | set(held_shapes),
                    key=lambda s: (s[0] * _encoder.patch_count(s[1]), str(s)))
    rows, _, _ = _encoder.measure(hook, shapes, rounds, device, False, torch)
    fitted = [r for r, s in zip(rows, shapes) if s in set(grid)]
    held = [r for r, s in zip(rows, shapes) if s not in set(grid)]
    fit = _encoder.fit(fitted, seconds_per_unit)
    cm = CostModel(0.0, seconds_per_unit=seconds_per_unit, encoder_weight=fit["encoder_weight"],
                   encoder_alpha=fit["encoder_alpha"], encoder_intercept=fit["encoder_intercept"])
    call = fit["record"]["seconds_per_call"]
    predicted = np.array([call + seconds_per_unit * (cm.encoder_weight * r["patches"]
                                                     + cm.encoder_alpha * r["squares"]
                                                     + cm.encoder_intercept * r["images"])
                          for r in held])
    return {"encoder": dict(errors(predicted, np.array([r["seconds"] for r in held])),
                            r2=fit["record"]["r2"], encoder_weight=cm.encoder_weight,
                            encoder_alpha=cm.encoder_alpha,
                            encoder_intercept=cm.encoder_intercept),
            "encoder_grid": fitted, "encoder_held": held}


def evaluate(name, held_out_count, rounds):
    import transformers

    class_name, kwargs = FAMILIES[name]
    config = getattr(transformers, class_name)(**kwargs)
    started = time.perf_counter()
    model = _shapes.build_model(config).train()
    vocab = _shapes_vocab(config)
    result = evaluate_text(name, model, vocab, held_out_count, rounds)
    analytic = CostModel.from_config(config)
    result["analytic_alpha"] = analytic.alpha
    if hasattr(config, "vision_config"):
        fitted = _fit.fit_timings(result["grid"])  # the text part's unit, as calibrate fits it
        result.update(evaluate_encoder(model, rounds, fitted["c1"]))
        result["encoder"]["analytic_encoder_weight"] = analytic.encoder_weight
    result["seconds"] = time.perf_counter() - started
    return result


#: The records of the cost_model_accuracy study (width 128, 2 layers, on a quieter machine):
#: refitted here by both fits, nothing timed.
RECORDS = ("bench/results/cost_model_accuracy/cost_model_accuracy_cpu.json",
           "bench/results/cost_model_accuracy/cost_model_accuracy_cpu_mask_free.json")


def refit_records(paths=RECORDS):
    """The committed cost_model_accuracy records refitted by the fit before (minima) and now
    (fit_timings), each against the held-out shapes by its own estimator (medians from the
    rows' spread: median / minimum - 1)."""
    import json

    out = []
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            record = json.load(f)
        for r in record["results"]:
            grid, held = r["grid"], r["held_out"]
            before = _fit.fit_three_terms([g["batch_size"] for g in grid],
                                          [g["length"] for g in grid],
                                          [g["seconds"] for g in grid], robust=True)
            after = _fit.fit_timings(grid)
            spread = np.array([g["spread"] for g in grid])
            residual = (predict((before["c0"], before["c1"], before["c2"]), grid)
                        / np.array([g["seconds"] for g in grid]) - 1)
            out.append({"record": os.path.basename(path), "model": r["model"],
                        "batches": r["batches"], "load_average": [
                            record.get("load_average_before"), record.get("load_average_after")],
                        "spread_residual_correlation": float(np.corrcoef(spread, residual)[0, 1]),
                        "before": dict(errors(predict((before["c0"], before["c1"], before["c2"]),
                                                      held),
                                              np.array(_fit.estimator_values(held, "min"))),
                                       r2=before["r2"]),
                        "after": dict(errors(predict((after["c0"], after["c1"], after["c2"]),
                                                     held),
                                             np.array(_fit.estimator_values(
                                                 held, after["estimator"]))),
                                      r2=after["r2"], estimator=after["estimator"])})
    return out


def _shapes_vocab(config):
    return int(getattr(getattr(config, "text_config", None) or config, "vocab_size"))


def add_arguments(parser) -> None:
    parser.add_argument("-o", "--output", default="bench/results/model_families.md")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--held-out", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=4)


def pct(x):
    return f"{x:.1%}"


def report(args, results, meta):
    lines = ["# Cost model across model families (CPU)", "",
             "    BRS_LIBRARY=build/libbrs/libbrs.so.1 PYTHONPATH=bindings/python:bench "
             "HF_HUB_OFFLINE=1 \\", f"        {args.invocation}", "",
             f"{meta['cpu']}, {meta['cpus']} CPUs, torch {meta['torch']}, transformers "
             f"{meta['transformers']}, one torch thread; load average {meta['load_before']:.2f} "
             f"before, {meta['load_after']:.2f} after; {meta['seconds']:.0f} s in all. "
             f"Allocator: {meta['allocator']}.", "",
             "Held-out error: |predicted - measured| / measured over held-out shapes (batch "
             "sizes 3, 5, 6, 7, 10, 12 and lengths absent from the grid), timed in the same "
             "interleaved rounds as the grid. *Before*: the fit of each shape's fastest repeat, "
             "against the held-out fastest repeats. *After*: calibrate's fit now "
             "(fit_timings: the fastest or the median repeat, whichever the three-term form "
             "describes better on the grid), against the held-out shapes by the estimator it "
             "chose; the last column is the same fit against the held-out fastest repeats. "
             "Target: median <= 5%, p90 <= 12%.", "",
             "| family | grid / held out | before: median / p90 | R^2 | after: median / p90 | "
             "R^2 | estimator (grid residual min / median) | after vs fastest: median / p90 "
             "| alpha fitted (analytic) | median spread |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        b, a, f = r["before"], r["after"], r["after_vs_fastest"]
        res = a["residuals"]
        lines.append(
            f"| {r['family']} | {r['grid_shapes']} / {r['held_out_shapes']} | "
            f"{pct(b['median'])} / {pct(b['p90'])} | {b['r2']:.4f} | {pct(a['median'])} / "
            f"{pct(a['p90'])} | {a['r2']:.4f} | {a['estimator']} ({pct(res['min'])} / "
            f"{pct(res['median'])}) | {pct(f['median'])} / {pct(f['p90'])} | "
            f"{a['alpha']:.3g} ({r['analytic_alpha']:.3g}) | {r['median_spread']:.1%} |")
    for r in results:
        if "encoder" in r:
            e = r["encoder"]
            lines += ["", f"{r['family']} vision tower (encoder part, {len(r['encoder_grid'])} "
                      f"grid calls, {len(r['encoder_held'])} held out): median {pct(e['median'])}"
                      f", p90 {pct(e['p90'])}, R^2 {e['r2']:.4f}; encoder_weight "
                      f"{e['encoder_weight']:.3g} (analytic {e['analytic_encoder_weight']:.3g}), "
                      f"encoder_alpha {e['encoder_alpha']:.3g}, encoder_intercept "
                      f"{e['encoder_intercept']:.3g}."]
    if meta.get("refits"):
        lines += ["", "The records of `python3 -m brsbench cost_model_accuracy` (width 128, 2 "
                  "layers, vocabulary 8192, timed on a quieter machine, "
                  "bench/results/cost_model_accuracy/), refitted by both fits (nothing timed; a "
                  "row's median is its minimum x (1 + spread)); the correlation is that of each "
                  "grid shape's spread with its residual under the fit of minima:", "",
                  "| record | model | batches | before: median / p90 | R^2 | after: median / "
                  "p90 | R^2 | estimator | corr(spread, residual) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in meta["refits"]:
            b, a = r["before"], r["after"]
            lines.append(f"| {r['record']} | {r['model']} | {r['batches']} | {pct(b['median'])}"
                         f" / {pct(b['p90'])} | {b['r2']:.4f} | {pct(a['median'])} / "
                         f"{pct(a['p90'])} | {a['r2']:.4f} | {a['estimator']} | "
                         f"{r['spread_residual_correlation']:.2f} |")
    lines += ["", f"Rows (every shape's fastest and median repeat): "
              f"{os.path.basename(json_path(args.output))}.", ""]
    return "\n".join(lines)


def json_path(output):
    return os.path.splitext(output)[0] + ".json"


def run(args) -> int:
    import transformers

    torch.set_num_threads(1)
    allocator = _memory.keep_freed_memory()  # as brs.calibrate does on CPU
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    results = []
    for name in args.families.split(","):
        results.append(evaluate(name, args.held_out, args.rounds))
        r = results[-1]
        print(f"{name:>10}: before {pct(r['before']['median'])} / {pct(r['before']['p90'])}, "
              f"after {pct(r['after']['median'])} / {pct(r['after']['p90'])} "
              f"({r['after']['estimator']}), {r['seconds']:.0f} s", flush=True)
    meta = {"cpu": platform.processor() or platform.machine(), "cpus": len(os.sched_getaffinity(0)),
            "torch": torch.__version__, "transformers": transformers.__version__,
            "allocator": allocator, "load_before": load_before,
            "load_after": os.getloadavg()[0], "seconds": time.perf_counter() - started}
    try:
        with open("/proc/cpuinfo") as f:
            meta["cpu"] = next(line.split(":", 1)[1].strip() for line in f
                               if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    meta["refits"] = refit_records()
    text = report(args, results, meta)
    print(text)
    write_text(args.output, text)
    write_json(json_path(args.output), {"meta": meta, "results": results}, indent=1)
    return 0
