"""python -m brsbench vlm: vision-language steps, brs with each sample's images against samplers
that see only text lengths.

A vision-language sample costs its text in the LLM plus its images in the vision encoder
(docs/algorithm.md, "Two parts: samples with images"). Two synthetic datasets (vlm_data.py):
"independent" (lognormal text, 0-4 images of realistic resolutions drawn apart from the text)
and "correlated" (the text holds each image's merged patches, as Qwen2-VL's LLM reads them, plus
a caption).

Modelled, one epoch each (dp 4 x grad_accum 2 x per-device batch 8, micro-step sync, seed 42),
every plan described by the library with the same encoder loads (brs_plan_load on a sampler
that has them), so one cost model prices them all:
- brs: planned with the encoder loads (and, in the capped rows, max_tokens and
  max_encoder_tokens);
- brs text-only: the same sampler without loads (max_tokens only), priced with them;
- upstream: transformers' BatchRebalanceSampler (batch_rebalance), which draws each step's
  samples; brs and brs text-only plan exactly those samples;
- group_by_length and random: the library's fixed-size strategies "length_grouped" and "random"
  over the same draw order.
Encoder cost settings: "linear" (an image of p patches costs p units: encoder_weight 1, one
padded text token's cost per patch) and "default" (the library's defaults, encoder_alpha 0.001:
p + 0.001 p^2, the encoder's attention within each image). The text cost is the library's
default (alpha 0.001).

Measured (vlm_measure.py): a tiny Qwen2-VL built from a config (random weights) on this CPU, the
correlated dataset at half resolution; see that module.

    BRS_LIBRARY=<build>/libbrs/libbrs.so.1 PYTHONPATH=bindings/python:bench \\
        python3 -m brsbench vlm --out bench/results/vlm.md [--measure-steps 0]
"""

import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import brs
from brs.native import image_table

from . import vlm_data
from .library import shared
from .peers import Config, upstream_batch_rebalance
from .results import emit

CFG = Config(dp=4, ga=2, batch=8)
SEED = 42
N_SAMPLES = 8000
ENCODER_SETTINGS = {
    "linear": {"encoder_weight": 1.0, "encoder_alpha": 0.0, "encoder_intercept": 0.0},
    "default": {"encoder_weight": 1.0, "encoder_alpha": 0.001, "encoder_intercept": 0.0}}
# The capped rows: max_tokens this many times the least cap that the text planner meets in every
# step of the epoch, and max_encoder_tokens this many times a mean micro-batch's patches (never
# below one sample's). Tighter caps (--cap-factor 1.5) leave a few steps the two-part planner
# finds no split for, which the report counts and leaves out.
CAP_FACTOR = 2.0
STRATEGIES = ("brs", "brs text-only", "upstream", "group_by_length", "random")
SHARE_TARGET, GAIN_TARGET = 0.30, 0.10


@dataclass
class Score:
    """One strategy's epoch as the library describes it (summed over steps, peaks over steps)."""

    micro_sync: float = 0.0
    bound: float = 0.0
    total_cost: float = 0.0
    encoder_cost: float = 0.0
    peak_tokens: int = 0
    peak_patches: int = 0
    over_tokens: int = 0
    over_patches: int = 0
    micro_batches: int = 0
    steps: int = 0
    per_step: list = field(default_factory=list)  # (micro-sync time, every cap kept) per step


@dataclass
class Row:
    dataset: str
    setting: str
    caps: dict
    scores: dict = field(default_factory=dict)
    refused: list = field(default_factory=list)  # steps brs found no split for, within the caps
    witnessed: int = 0  # of those, steps a best-fit packing splits within the caps

    @property
    def share(self) -> float:
        """The encoder's part of the modelled compute of brs's plan."""
        s = self.scores["brs"]
        return s.encoder_cost / s.total_cost


def caps_for(lib, data: vlm_data.VlmData, order, cfg: Config, factor: float) -> dict:
    text = lib.sampler([data.lengths[i] for i in order],
                       {"batch_size": cfg.batch, "grad_accum": cfg.ga, "dp_size": cfg.dp,
                        "shuffle": 0})
    least, _ = text.check_epoch(0)  # the least max_tokens the text planner meets every step
    loads = data.loads
    mean_patches = sum(map(sum, loads)) / len(loads)
    return {"max_tokens": math.ceil(factor * least),
            "max_encoder_tokens": max(max(map(sum, loads)),
                                      math.ceil(factor * cfg.batch * mean_patches))}


def planner(data, order, cfg: Config, options: dict, loads=None):
    """brs.BatchRebalanceSampler over data's samples in ``order``, planning them as drawn (no
    shuffle): step t holds order[t*B:(t+1)*B]; its positions index ``order``. ``loads``: the
    whole dataset's encoder loads (None: text only)."""
    return brs.BatchRebalanceSampler(
        [data.lengths[i] for i in order], per_device_batch_size=cfg.batch, grad_accum=cfg.ga,
        dp_size=cfg.dp, rank=0, seed=SEED, shuffle=False, drop_last=True, sync="micro_step",
        encoder_loads=None if loads is None else [loads[i] for i in order], **options)


def describer(lib, data, cfg: Config, model: dict):
    """A native sampler over the whole dataset with its encoder loads and ``model``, no cap:
    brs_plan_load on it describes any strategy's micro-batches with the same cost model."""
    native = lib.sampler(data.lengths, {"batch_size": cfg.batch, "grad_accum": cfg.ga,
                                        "dp_size": cfg.dp})
    for name, value in model.items():
        native.set_double(lib.key(name), value)
    native.set_encoder_loads(image_table(data.loads, len(data.lengths)))
    return native


def planned_epoch(sampler, order, steps):
    """plan[step][rank][micro] = dataset indices, as the sampler plans each step; None for a
    step it refuses (no split within the caps found)."""
    out = []
    for t in range(steps):
        try:
            plan = sampler.plan(t)
        except ValueError:  # BRS_ERR_CAP_INFEASIBLE: the caps are kept, not bent
            out.append(None)
            continue
        out.append([[[order[i] for i in mb.indices] for mb in rank]
                    for rank in plan.micro_batches])
    return out


def describe(lib, describer, epoch, caps: dict, steps) -> Score:
    """The library's description of ``steps`` of an epoch plan with the encoder loads;
    micro-batches over ``caps`` counted (the describer itself has no cap, so any plan loads)."""
    plan, score = lib.NativePlan(), Score()
    for step in steps:
        lib.load(plan, describer, epoch[step], step)
        p = plan.snapshot()
        score.micro_sync += p.micro_sync_time
        score.bound += p.time_lower_bound
        score.total_cost += p.total_cost
        score.encoder_cost += p.encoder_cost
        score.peak_tokens = max(score.peak_tokens, p.max_padded_tokens)
        score.peak_patches = max(score.peak_patches, p.max_encoder_tokens)
        over = 0
        for mb in (mb for rank in p.micro_batches for mb in rank):
            score.micro_batches += 1
            score.over_tokens += bool(caps) and mb.padded_tokens > caps["max_tokens"]
            score.over_patches += bool(caps) and mb.encoder_tokens > caps["max_encoder_tokens"]
            over += bool(caps) and (mb.padded_tokens > caps["max_tokens"]
                                    or mb.encoder_tokens > caps["max_encoder_tokens"])
        score.per_step.append((p.micro_sync_time, over == 0))
        score.steps += 1
    return score


def split_exists(data, samples, k: int, caps: dict) -> bool:
    """Whether a longest-text-first best fit puts ``samples`` into k micro-batches within both
    caps: a witness that a step the planner refused can be split (False proves nothing)."""
    bins = [[0, 0, 0] for _ in range(k)]  # patches, samples, longest text
    loads = data.loads
    for i in sorted(samples, key=lambda i: -data.lengths[i]):
        best, slack = None, None
        for b in bins:
            patches, count = b[0] + sum(loads[i]), b[1] + 1
            padded = count * max(b[2], data.lengths[i])
            if patches <= caps["max_encoder_tokens"] and padded <= caps["max_tokens"]:
                left = (2 - patches / caps["max_encoder_tokens"]
                        - padded / caps["max_tokens"])
                if slack is None or left < slack:
                    best, slack = b, left
        if best is None:
            return False
        best[0] += sum(loads[i])
        best[1] += 1
        best[2] = max(best[2], data.lengths[i])
    return True


def plans_of(data, order, steps, cfg: Config, model: dict, caps: dict) -> dict:
    """Every library-planned strategy's epoch over the same draw ``order``."""
    text_caps = {"max_tokens": caps["max_tokens"]} if caps else {}
    made = {"brs": planner(data, order, cfg, {**model, **caps}, data.loads),
            "brs text-only": planner(data, order, cfg, {**model, **text_caps})}
    for name, strategy in (("group_by_length", "length_grouped"), ("random", "random")):
        made[name] = planner(data, order, cfg, {**model, "strategy": strategy})
    return {name: planned_epoch(sampler, order, steps) for name, sampler in made.items()}


def upstream_draw(data, cfg: Config):
    """Upstream's epoch plan and its draw order (the concatenated samples of its steps)."""
    run, step_samples = upstream_batch_rebalance(data.lengths, cfg, SEED)
    return run.plan, [i for samples in step_samples for i in samples]


def modelled_row(lib, data, describer, order, upstream, cfg, setting, caps) -> Row:
    """One (dataset, encoder cost, caps) row: every strategy over the steps brs planned."""
    row = Row(data.name, setting, caps)
    plans = plans_of(data, order, len(upstream), cfg, ENCODER_SETTINGS[setting], caps)
    plans["upstream"] = upstream
    row.refused = [t for t, step in enumerate(plans["brs"]) if step is None]
    b = cfg.global_batch
    row.witnessed = sum(split_exists(data, order[t * b:(t + 1) * b], cfg.k, caps)
                        for t in row.refused)
    kept = [t for t in range(len(upstream)) if t not in set(row.refused)]
    for name in STRATEGIES:
        row.scores[name] = describe(lib, describer, plans[name], caps, kept)
    ours = row.scores["brs"]
    assert ours.over_tokens == 0 and ours.over_patches == 0, "brs broke a cap"
    return row


def modelled_rows(lib, datasets, cfg: Config, cap_factor: float, log) -> list[Row]:
    rows = []
    for data in datasets:
        upstream, order = upstream_draw(data, cfg)
        for setting, model in ENCODER_SETTINGS.items():
            described = describer(lib, data, cfg, model)
            for caps in ({}, caps_for(lib, data, order, cfg, cap_factor)):
                row = modelled_row(lib, data, described, order, upstream, cfg, setting, caps)
                rows.append(row)
                gain = row.scores["brs text-only"].micro_sync / row.scores["brs"].micro_sync
                log(f"{data.name} {setting} {'capped' if caps else 'no caps'}: encoder share "
                    f"{row.share:.0%}, text-only / brs {gain:.3f}, refused {len(row.refused)} "
                    f"(split exists: {row.witnessed})")
    return rows


def modelled_markdown(rows: list[Row]) -> str:
    lines = ["| dataset | encoder cost | caps (text tokens, patches) | encoder share | "
             + " | ".join(f"{s} / brs" for s in STRATEGIES[1:]) + " | brs / bound |",
             "|---|---|---|---:|" + "---:|" * (len(STRATEGIES) - 1) + "---:|"]
    for row in rows:
        ours = row.scores["brs"]
        caps = f"{row.caps['max_tokens']}, {row.caps['max_encoder_tokens']}" if row.caps else "-"
        ratios = " | ".join(f"{row.scores[s].micro_sync / ours.micro_sync:.3f}"
                            for s in STRATEGIES[1:])
        lines.append(f"| {row.dataset} | {row.setting} | {caps} | {row.share:.0%} | {ratios} | "
                     f"{ours.micro_sync / ours.bound:.3f} |")
    return "\n".join(lines)


def peaks_markdown(rows: list[Row]) -> str:
    """Per strategy: peak padded text tokens / peak patches of one micro-batch, and (capped
    rows) the micro-batches over each cap."""
    lines = ["| dataset | encoder cost | caps | " + " | ".join(STRATEGIES) + " |",
             "|---|---|---|" + "---|" * len(STRATEGIES)]
    for row in rows:
        cells = []
        for name in STRATEGIES:
            s = row.scores[name]
            cell = f"{s.peak_tokens} / {s.peak_patches}"
            if row.caps:
                cell += f" ({s.over_tokens} / {s.over_patches} over)"
            cells.append(cell)
        lines.append(f"| {row.dataset} | {row.setting} | {'yes' if row.caps else '-'} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def slower_where_text_only_fits(row: Row) -> tuple[int, int]:
    """(steps where brs text-only keeps every cap, of those where brs is slower): the planner
    starts from the text planner's split, so brs is never slower where that split fits."""
    pairs = [(ours[0], theirs[0]) for ours, theirs in
             zip(row.scores["brs"].per_step, row.scores["brs text-only"].per_step) if theirs[1]]
    return len(pairs), sum(a > b * (1 + 1e-9) for a, b in pairs)


def target_lines(rows: list[Row]) -> list[str]:
    """The targets, checked on every row where the encoder carries enough of the compute."""
    heavy = [r for r in rows if r.share >= SHARE_TARGET]
    gains = [(r, 1 - r.scores["brs"].micro_sync / r.scores["brs text-only"].micro_sync)
             for r in heavy]
    met = [g for g in gains if g[1] >= GAIN_TARGET]
    over = sum(r.scores["brs"].over_tokens + r.scores["brs"].over_patches for r in rows)
    lines = [f"- Encoder share >= {SHARE_TARGET:.0%} in {len(heavy)} of {len(rows)} rows "
             f"(shares {min(r.share for r in rows):.0%} to {max(r.share for r in rows):.0%})."]
    if gains:
        lines.append(f"- brs's modelled step time at least {GAIN_TARGET:.0%} below brs "
                     f"text-only's in {len(met)} of {len(heavy)} of those rows ("
                     + "; ".join(f"{r.dataset} / {r.setting} / {'capped' if r.caps else 'no caps'}"
                                 f" {g:+.1%}" for r, g in gains) + ").")
    lines.append(f"- brs micro-batches over a cap: {over} (asserted 0).")
    for row in (r for r in rows if r.caps):
        fits, slower = slower_where_text_only_fits(row)
        lines.append(f"- {row.dataset} / {row.setting} / capped: brs text-only keeps both caps "
                     f"in {fits} of {row.scores['brs'].steps} steps, brs slower than it in "
                     f"{slower} of those; brs found no split in {len(row.refused)} of "
                     f"{row.scores['brs'].steps + len(row.refused)} steps (left out of both "
                     f"tables), of which a longest-text-first best fit splits "
                     f"{row.witnessed} within both caps.")
    return lines


def header(args) -> str:
    import brs

    command = ("BRS_LIBRARY=" + os.environ.get("BRS_LIBRARY", "") + " PYTHONPATH="
               + os.environ.get("PYTHONPATH", "") + " " + args.invocation)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return "\n".join([
        "# brs with encoder loads on vision-language steps", "",
        f"    {command}", "",
        f"libbrs {brs.__version__ if hasattr(brs, '__version__') else '?'}, Python "
        f"{platform.python_version()}, {platform.machine()} with {os.cpu_count()} CPUs, "
        f"load average at start {load}. Configuration dp {CFG.dp} x grad_accum {CFG.ga} x "
        f"per-device batch {CFG.batch}, micro-step sync, seed {SEED}.", "", ""])


def add_arguments(ap) -> None:
    ap.add_argument("--n", type=int, default=N_SAMPLES, help="samples per dataset")
    ap.add_argument("--measure-steps", type=int, default=12,
                    help="steps measured on the tiny model (0: modelled part only)")
    ap.add_argument("--cap-factor", type=float, default=CAP_FACTOR,
                    help="capped rows: max_tokens this times the least the text planner meets, "
                         "max_encoder_tokens this times a mean micro-batch's patches")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds of the measured steps")
    ap.add_argument("--measure-model", metavar="alpha=A,intercept=I,encoder_alpha=E,"
                    "encoder_intercept=F", help="plan the measured steps with this cost model "
                    "instead of one fitted on this machine (the report prints the fitted one)")
    ap.add_argument("--raw", type=Path, help="write every measured micro-batch (samples, "
                    "modelled cost, seconds per round) to this JSON file")
    ap.add_argument("--out", type=Path, help="also write the report to this file")


def run(args) -> int:
    t0 = time.perf_counter()

    def log(message):
        print(f"[{time.perf_counter() - t0:5.0f} s] {message}", file=sys.stderr, flush=True)

    lib = shared()
    text = header(args)
    datasets = [vlm_data.independent(args.n, SEED), vlm_data.correlated(args.n, SEED)]
    rows = modelled_rows(lib, datasets, CFG, args.cap_factor, log)
    text += "\n".join([
        "## Modelled", "",
        *(f"- {vlm_data.describe(d)}; {d.source}" for d in datasets), "",
        "Mean step time (summed per-micro-step sync time over the epoch) of each strategy over "
        "brs's, with the encoder share of brs's modelled compute and brs's time over the sum of "
        "the certified time_lower_bound:", "",
        modelled_markdown(rows), "",
        "Peak padded text tokens / peak image patches of one micro-batch over the epoch (capped "
        "rows: micro-batches over the text / patch cap):", "",
        peaks_markdown(rows), "",
        *target_lines(rows), ""])
    if args.measure_steps:
        from . import vlm_measure

        pinned = vlm_measure.parse_model(args.measure_model) if args.measure_model else None
        text += "\n" + vlm_measure.section(lib, CFG, SEED, args.measure_steps, args.rounds,
                                           pinned, log, args.raw)
    text += f"\nWall time {time.perf_counter() - t0:.0f} s.\n"
    emit(text, args.out)
    return 0
