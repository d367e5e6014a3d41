"""The measured part of brsbench.vlm: plans of the same samples run through a tiny Qwen2-VL.

The model is built from a config (transformers' Qwen2VLForConditionalGeneration: 2 text layers
of width 128, a 2-layer vision tower of width 64, random weights, nothing downloaded) and runs
on this CPU with one torch thread. Its inputs are what Qwen2-VL's processor would give:
pixel_values of each image's patches (3 x 2 x 14 x 14 values each, random), image_grid_thw, and
input_ids holding each image's merged patches (patches / 4 image tokens between the vision
markers) before a caption of random tokens. The dataset is vlm_data.correlated at half
resolution (patch counts a quarter of the modelled one's), the only layout Qwen2-VL can read
(its text holds every image's tokens), small enough for a CPU.

1. Calibration: forward + backward of micro-batches drawn from the dataset (1 to 24 samples,
   text within a budget), fitted by least squares (of the relative error, coefficients >= 0)
   to the library's cost form: seconds per unit times intercept + bs*L + alpha*bs*L^2 + sum
   over images of (encoder_weight*p + encoder_alpha*p^2). --measure-model pins a model
   instead.
2. Planning: upstream draws the epoch's steps (its own cost model); brs with loads and brs
   text-only plan exactly those samples with the fitted model.
3. Timing: every micro-batch of every rank of the chosen steps, for each strategy, timed
   (forward + backward, gradients dropped), the strategies taking turns micro-batch by
   micro-batch, all of it repeated for several rounds. A step's time is composed under
   per-micro-step sync (sum over micro-steps of the slowest rank), the ranks run one after the
   other on this CPU.
"""

import os
import random
import statistics
import time

import numpy as np

from . import vlm_data

MEASURE_N = 2000  # samples of the measured dataset; upstream draws its steps from all of them
SCALE = 2  # resolutions halved per side for the CPU
STRATEGIES = ("brs", "brs text-only", "upstream")
VOCAB = 512
IMAGE_TOKEN, VISION_START, VISION_END, VIDEO_TOKEN = VOCAB - 3, VOCAB - 2, VOCAB - 1, VOCAB - 4
PATCH_VALUES = 3 * 2 * 14 * 14  # channels x temporal patch x patch x patch, per patch
MODEL_OPTIONS = ("alpha", "intercept", "encoder_weight", "encoder_alpha", "encoder_intercept")


def tiny_model(seed: int):
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    torch.manual_seed(seed)
    config = Qwen2VLConfig(
        text_config=dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=256,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=32768, bos_token_id=1, eos_token_id=2,
                         pad_token_id=0,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                          "mrope_section": [4, 6, 6]}),
        vision_config=dict(depth=2, embed_dim=64, hidden_size=128, num_heads=4, mlp_ratio=2),
        image_token_id=IMAGE_TOKEN, vision_start_token_id=VISION_START,
        vision_end_token_id=VISION_END, video_token_id=VIDEO_TOKEN)
    return Qwen2VLForConditionalGeneration(config)


def sample_ids(caption: int, images, seed: int) -> list[int]:
    """A sample's input_ids: each image's tokens between the markers, then the caption."""
    ids = []
    for h, w in images:
        ids += [VISION_START] + [IMAGE_TOKEN] * (h * w // 4) + [VISION_END]
    rng = random.Random(seed)
    return ids + [rng.randrange(3, VIDEO_TOKEN) for _ in range(caption)]


def batch(samples, seed: int) -> dict:
    """Model inputs of one micro-batch; samples = [(input_ids, [(h, w), ...]), ...], padded on
    the right to the longest as a collator pads."""
    import torch

    width = max(len(ids) for ids, _ in samples)
    input_ids = torch.zeros(len(samples), width, dtype=torch.long)
    mask = torch.zeros_like(input_ids)
    for row, (ids, _) in enumerate(samples):
        input_ids[row, :len(ids)] = torch.tensor(ids)
        mask[row, :len(ids)] = 1
    inputs = {"input_ids": input_ids, "attention_mask": mask,
              "labels": input_ids.masked_fill(mask == 0, -100),
              "mm_token_type_ids": (input_ids == IMAGE_TOKEN).int()}
    grids = [(1, h, w) for _, images in samples for h, w in images]
    if grids:
        patches = sum(h * w for _, h, w in grids)
        generator = torch.Generator().manual_seed(seed)
        inputs["pixel_values"] = torch.randn(patches, PATCH_VALUES, generator=generator)
        inputs["image_grid_thw"] = torch.tensor(grids)
    return inputs


def run_once(model, inputs) -> float:
    """Seconds of one forward + backward (gradients of the previous one dropped first)."""
    model.zero_grad(set_to_none=True)
    started = time.perf_counter()
    model(**inputs).loss.backward()
    return time.perf_counter() - started


def dataset_batch(data, indices, seed: int) -> dict:
    """Model inputs of the dataset's samples ``indices``; a sample's tokens depend on its index
    alone, so every strategy runs the same sample alike."""
    samples = []
    for i in indices:
        caption = data.lengths[i] - data.image_tokens(i)
        samples.append((sample_ids(caption, data.grids[i], i), data.grids[i]))
    return batch(samples, seed)


# ---------------------------------------------------------------------------- calibration

CALIBRATION_SIZES = (1, 2, 3, 4, 6, 8, 12, 16, 24)  # samples per calibration micro-batch
CALIBRATION_BUDGET = 8000  # padded text tokens a drawn micro-batch stays within
CALIBRATION_REPEATS = 5  # timed runs of each, the least kept: a shared machine only adds time
MAX_OPTION = 1000.0  # the library's bound on alpha, encoder_weight and encoder_alpha


def calibration_batches(data, seed: int) -> list[list[int]]:
    """Micro-batches drawn from the dataset as plans form them: for each size, samples short
    enough that the padded text stays within a budget, so the fit sees the mixes of text and
    images (many small samples, a few long ones) that the plans run. One draw of each size
    among the samples without images, two among all: in this dataset text and patches grow
    together, and the text alone tells them apart."""
    rng = random.Random(seed)
    out = []
    for size in CALIBRATION_SIZES:
        fitting = [i for i, n in enumerate(data.lengths) if n * size <= CALIBRATION_BUDGET]
        text_only = [i for i in fitting if not data.grids[i]]
        out += [rng.sample(text_only, size), rng.sample(fitting, size),
                rng.sample(fitting, size)]
    return out


def features(data, indices) -> list[float]:
    """The fit's columns for one micro-batch: 1, padded text tokens (bs*L), bs*L^2, patches,
    sum of p^2 over its images."""
    longest = max(data.lengths[i] for i in indices)
    patches = [p for i in indices for p in data.loads[i]]
    return [1.0, len(indices) * longest, len(indices) * longest * longest,
            float(sum(patches)), float(sum(p * p for p in patches))]


def nonnegative_fit(x: np.ndarray, y: np.ndarray, seconds=None) -> np.ndarray:
    """Least squares of the error relative to ``seconds`` (y unless given: a small micro-batch
    counts as much as a large one) with every coefficient >= 0: a negative one is dropped and
    the rest refitted (the library takes no negative cost)."""
    weight = 1 / (y if seconds is None else seconds)
    x, y = x * weight[:, None], y * weight
    active = list(range(x.shape[1]))
    while True:
        coef, *_ = np.linalg.lstsq(x[:, active], y, rcond=None)
        if (coef >= 0).all():
            out = np.zeros(x.shape[1])
            out[active] = coef
            return out
        active.pop(int(np.argmin(coef)))


def calibrate(model, data, seed: int, repeats: int, log) -> dict:
    """The fitted cost model (library options and seconds per unit) and how well it fits:
    seconds = c0 + c1 bs*L + c2 bs*L^2 + c3 p + c4 p^2 (p over the images), in units of c1
    (one padded text token): intercept c0/c1, alpha c2/c1, encoder_weight c3/c1 (a patch is
    not a token: here the text's time is mostly attention, the vision tower's mostly per
    patch), encoder_alpha c4/c1. The fit with encoder_weight 1, the library's default, is
    made beside it for comparison."""
    rows, seconds = [], []
    for indices in calibration_batches(data, seed):
        inputs = dataset_batch(data, indices, seed)
        run_once(model, inputs)  # warm: allocator and kernels
        seconds.append(min(run_once(model, inputs) for _ in range(repeats)))
        rows.append(features(data, indices))
    x, y = np.array(rows), np.array(seconds)
    c = per_token_fit(x, y)
    # encoder_weight 1: a patch one padded token (columns 1 and 3 summed)
    tied_x = np.column_stack([x[:, 0], x[:, 1] + x[:, 3], x[:, 2], x[:, 4]])
    tied = nonnegative_fit(tied_x, y)
    predicted = x @ c
    fit = {"shapes": len(y), "seconds_per_unit": float(c[1]),
           "options": {name: min(MAX_OPTION, round(float(value / c[1]), 6)) for name, value in
                       (("alpha", c[2]), ("intercept", c[0]), ("encoder_weight", c[3]),
                        ("encoder_alpha", c[4]), ("encoder_intercept", 0.0))},
           "r2": float(1 - ((y - predicted) ** 2).sum() / ((y - y.mean()) ** 2).sum()),
           "mean_error": mean_error(predicted, y), "weight_one_error": mean_error(tied_x @ tied, y)}
    log(f"calibration: {fit}")
    return fit


def per_token_fit(x, y):
    """The nonnegative fit, with a per-token term of at least c2 / MAX_OPTION: the library's
    unit is one padded token, so a text cost of attention alone is not a cost it can take."""
    c = nonnegative_fit(x, y)
    if c[1] * MAX_OPTION >= c[2]:
        return c
    floor = c[2] / MAX_OPTION
    rest = nonnegative_fit(np.delete(x, 1, axis=1), y - floor * x[:, 1], y)
    return np.insert(rest, 1, floor)


def mean_error(predicted, measured) -> float:
    return float(np.mean(np.abs(predicted - measured) / measured))


# ---------------------------------------------------------------------------- plans and timing

def measured_plans(lib, data, cfg, seed: int, fit: dict, steps: int):
    """Each strategy's plan of the chosen steps (upstream's draw), the chosen steps, and the
    fitted model's description of every plan (vlm.Score per strategy)."""
    from . import vlm

    upstream, order = vlm.upstream_draw(data, cfg)
    plans = {"upstream": upstream}
    options = fit["options"]
    for name, loads in (("brs", data.loads), ("brs text-only", None)):
        sampler = vlm.planner(data, order, cfg, options, loads)
        plans[name] = vlm.planned_epoch(sampler, order, len(upstream))
    # Evenly spread over the epoch, so that no stretch of the draw decides alone.
    chosen = sorted({round(k * (len(upstream) - 1) / max(steps - 1, 1)) for k in range(steps)})
    describer = vlm.describer(lib, data, cfg, options)
    scores = {name: vlm.describe(lib, describer, plans[name], {}, chosen) for name in STRATEGIES}
    costs = {name: micro_costs(lib, describer, plans[name], chosen) for name in STRATEGIES}
    return plans, chosen, scores, costs


def micro_costs(lib, describer, epoch, chosen):
    """costs[step index][rank][micro]: the fitted model's cost of each measured micro-batch."""
    plan, out = lib.NativePlan(), []
    for step in chosen:
        lib.load(plan, describer, epoch[step], step)
        out.append([[mb.cost for mb in rank] for rank in plan.snapshot().micro_batches])
    return out


def prediction_error(costs, times):
    """(median absolute relative error, Spearman) of the model's costs against every measured
    micro-batch (its median over rounds), at the seconds per unit that fits them best (the
    median of measured / cost), so that a pinned model is judged as a fitted one is."""
    predicted, measured = [], []
    for name in STRATEGIES:
        for step_costs, step_times in zip(costs[name], times[name]):
            for rank_costs, rank_times in zip(step_costs, step_times):
                predicted += rank_costs
                measured += [statistics.median(t) for t in rank_times]
    p, m = np.array(predicted), np.array(measured)
    p = p * np.median(m / p)
    rank = lambda v: np.argsort(np.argsort(v))
    return float(np.median(np.abs(p - m) / m)), float(np.corrcoef(rank(p), rank(m))[0, 1])


def time_plans(model, data, plans, chosen, cfg, rounds: int, log) -> dict:
    """times[strategy][step index][rank][micro] = seconds of each round. The strategies take
    turns micro-batch by micro-batch, the first one rotating, so that a shared machine's
    changing load falls on all of them alike."""
    times = {name: [[[[] for _ in range(cfg.ga)] for _ in range(cfg.dp)] for _ in chosen]
             for name in STRATEGIES}
    slots = [(rank, micro) for rank in range(cfg.dp) for micro in range(cfg.ga)]
    for r in range(rounds):
        for j, step in enumerate(chosen):
            for n, (rank, micro) in enumerate(slots):
                turn = (r + j + n) % len(STRATEGIES)
                for name in STRATEGIES[turn:] + STRATEGIES[:turn]:
                    indices = plans[name][step][rank][micro]
                    inputs = dataset_batch(data, indices, seed=step * 1000 + rank * 10 + micro)
                    times[name][j][rank][micro].append(run_once(model, inputs))
        log(f"timing round {r + 1}/{rounds} done")
    return times


def step_time(ranks) -> float:
    """Per-micro-step sync: each micro-step waits for its slowest rank."""
    return sum(max(rank[m] for rank in ranks) for m in range(len(ranks[0])))


def step_times(times, pick) -> list[float]:
    """Per step, the composed time from per-micro-batch values chosen by ``pick``."""
    return [step_time([[pick(t) for t in rank] for rank in step]) for step in times]


def ratio_interval(ours: list[float], base: list[float], resamples=2000, seed=0):
    """sum(ours) / sum(base) and its 95% bootstrap interval, steps resampled in pairs (the two
    ran the same samples)."""
    rng = np.random.default_rng(seed)
    a, b = np.array(ours), np.array(base)
    draws = rng.integers(0, len(a), (resamples, len(a)))
    ratios = a[draws].sum(1) / b[draws].sum(1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return a.sum() / b.sum(), float(low), float(high)


MIN_STEPS_FOR_VERDICT = 4  # fewer steps give a bootstrap of too few distinct resamples


def verdict(low: float, high: float, steps: int) -> str:
    """What an interval of a peer's time over brs's says about brs."""
    if steps < MIN_STEPS_FOR_VERDICT:
        return f"too few steps ({steps})"
    return "brs faster" if low > 1 else "brs slower" if high < 1 else "indistinguishable"


def section(lib, cfg, seed: int, steps: int, rounds: int, pinned: dict | None, log,
            raw=None) -> str:
    """The measured section; ``pinned`` (the four cost options) replaces the calibration, so
    that a re-run plans exactly the same micro-batches. ``raw``: a path for every measured
    micro-batch (samples, modelled cost, seconds of each round) as JSON."""
    import torch
    import transformers
    from brs.calibration.memory import keep_freed_memory

    torch.set_num_threads(1)  # one thread: stable times on a shared machine
    memory = keep_freed_memory()
    model = tiny_model(seed)
    data = vlm_data.correlated(MEASURE_N, seed, SCALE)
    if pinned:
        fit = {"options": pinned, "pinned": True}
    else:
        fit = calibrate(model, data, seed, CALIBRATION_REPEATS, log)
    plans, chosen, scores, costs = measured_plans(lib, data, cfg, seed, fit, steps)
    load = os.getloadavg()[0]
    times = time_plans(model, data, plans, chosen, cfg, rounds, log)
    fit["load"] = (load, os.getloadavg()[0])
    fit["error"], fit["spearman"] = prediction_error(costs, times)
    if raw:
        write_raw(raw, fit, chosen, plans, costs, times)
    peaks = {name: peak_of(data, plans[name], chosen) for name in STRATEGIES}
    return markdown(fit, data, chosen, cfg, scores, peaks, times, rounds, memory,
                    f"torch {torch.__version__}, transformers {transformers.__version__}")


def write_raw(path, fit, chosen, plans, costs, times) -> None:
    import json

    micro_batches = [{"strategy": name, "step": step, "rank": rank, "micro": micro,
                      "samples": plans[name][step][rank][micro],
                      "cost": costs[name][j][rank][micro],
                      "seconds": times[name][j][rank][micro]}
                     for name in STRATEGIES for j, step in enumerate(chosen)
                     for rank in range(len(times[name][j]))
                     for micro in range(len(times[name][j][rank]))]
    path.write_text(json.dumps({"model": fit, "steps": chosen,
                                "micro_batches": micro_batches}, indent=1))


def model_line(fit) -> str:
    """The cost model brs planned the measured steps with, as --measure-model takes it."""
    o = fit["options"]
    pin = ",".join(f"{name}={o[name]}" for name in MODEL_OPTIONS)
    if fit.get("pinned"):
        return f"Cost model pinned: `--measure-model {pin}`."
    return (f"Cost model fitted on this machine ({fit['shapes']} micro-batches drawn from the "
            f"dataset, {len(CALIBRATION_SIZES)} sizes from {CALIBRATION_SIZES[0]} to "
            f"{CALIBRATION_SIZES[-1]} samples within {CALIBRATION_BUDGET} padded tokens, min "
            f"of {CALIBRATION_REPEATS} runs; R^2 {fit['r2']:.4f}, mean error "
            f"{fit['mean_error']:.1%}; "
            f"{fit['seconds_per_unit'] * 1e6:.2f} us per unit): `--measure-model {pin}` plans "
            f"these micro-batches again. A patch costs {o['encoder_weight']} padded text "
            f"tokens here; with encoder_weight 1 (the library's default) the best fit's mean "
            f"error is {fit['weight_one_error']:.1%}.")


def parse_model(text: str) -> dict:
    """--measure-model: name=value for each of MODEL_OPTIONS, comma-separated."""
    pairs = dict(item.split("=", 1) for item in text.split(","))
    if set(pairs) != set(MODEL_OPTIONS):
        raise ValueError(f"--measure-model needs exactly {', '.join(MODEL_OPTIONS)}")
    return {name: float(pairs[name]) for name in MODEL_OPTIONS}


def peak_of(data, epoch, chosen) -> str:
    """Peak padded text tokens / peak patches of one micro-batch over the chosen steps."""
    mbs = [mb for step in chosen for rank in epoch[step] for mb in rank]
    tokens = max(len(mb) * max(data.lengths[i] for i in mb) for mb in mbs)
    patches = max(sum(sum(data.loads[i]) for i in mb) for mb in mbs)
    return f"{tokens} / {patches}"


def markdown(fit, data, chosen, cfg, scores, peaks, times, rounds, memory, versions) -> str:
    lines = [
        "## Measured on this CPU", "",
        f"Tiny Qwen2-VL from a config (vlm_measure.py), one torch thread, {versions}; "
        f"{memory or 'glibc allocator as is'}. Data: {vlm_data.describe(data)}; {data.source}. "
        f"Steps {chosen} of upstream's epoch, each strategy's {cfg.k} micro-batches of each, "
        f"{rounds} rounds; 1-minute load average {fit['load'][0]:.1f} before the timing, "
        f"{fit['load'][1]:.1f} after (this process alone: 1).", "",
        model_line(fit) + f" Against the {len(STRATEGIES) * len(chosen) * cfg.k} measured "
        f"micro-batches (median of rounds, best seconds per unit): median error "
        f"{fit['error']:.1%}, Spearman {fit['spearman']:.3f}.", ""]
    ours = scores["brs"]
    lines.append(f"Encoder share of brs's modelled compute on these steps: "
                 f"{ours.encoder_cost / ours.total_cost:.0%}.")
    lines += ["", "Step times composed from each micro-batch's time: the ratio of each round "
              "alone (median and range over rounds), and from each micro-batch's median and "
              "minimum over the rounds (the minimum is what a shared machine's load distorts "
              "least), with 95% bootstrap intervals over the steps (paired: the same samples).",
              "", "| strategy | modelled step time / brs | measured / brs: rounds, median (range) "
              "| from medians [95%] | from minima [95%] | step, median s | peak text "
              "tokens / patches |", "|---|---:|---|---|---|---:|---|"]
    for name in STRATEGIES:
        s = scores[name]
        lines.append(f"| {name} | {s.micro_sync / ours.micro_sync:.3f} | "
                     f"{round_ratios(times, name, rounds)} | "
                     f"{interval_cell(times, name, statistics.median)} | "
                     f"{interval_cell(times, name, min)} | "
                     f"{statistics.median(step_times(times[name], statistics.median)):.2f} | "
                     f"{peaks[name]} |")
    return "\n".join(lines) + "\n"


def round_ratios(times, name, rounds) -> str:
    """The strategy's summed step time over brs's, each round alone."""
    ratios = [sum(step_times(times[name], lambda t, r=r: t[r]))
              / sum(step_times(times["brs"], lambda t, r=r: t[r])) for r in range(rounds)]
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"


def interval_cell(times, name, pick) -> str:
    if name == "brs":
        return "1"
    point, low, high = ratio_interval(step_times(times[name], pick),
                                      step_times(times["brs"], pick))
    return f"{point:.3f} [{low:.3f}, {high:.3f}] {verdict(low, high, len(times[name]))}"
