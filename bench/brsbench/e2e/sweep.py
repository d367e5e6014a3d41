"""python -m brsbench sweep: the batch-size sweep of one or more train_e2e results.json, in the terms of upstream's claims.

    python3 -m brsbench sweep RESULTS.json [MORE.json ...] [--plot sweep.png] [--fits-gib 32]
        [--dataset lognormal]

transformers' batch_rebalance PR claimed, on 2x RTX 5090 (32 GB) with a Qwen2.5-0.5B and lognormal
lengths: 30-40% lower peak memory than group_by_length at equal batch, a largest batch of 14 instead
of 8, and 1.26x real tokens/s when each runs at its own largest batch. This prints the same three
columns for every sampler of a measured sweep (per-device batch sizes until OOM), all as ratios to
group_by_length, plus the largest batch whose MEASURED peak stays within --fits-gib (32: the card of
that claim), and optionally plots real tokens/s and peak memory against the batch size.
"""

import json
from pathlib import Path

SAMPLERS = ("group_by_length", "upstream", "random", "brs", "brs_calibrated")
BASE = "group_by_length"


def sweep(result_sets, dataset):
    """{sampler: {batch: summary dict, or 'oom'}} over the dataset's blocks of every set."""
    out = {s: {} for s in SAMPLERS}
    for results in result_sets:
        for block in (b for b in results["runs"] if b["dataset"] == dataset):
            for name, run in block["samplers"].items():
                if "summary" in run:
                    out[name][block["batch_size"]] = run["summary"]
                elif "oom" in run:
                    out[name][block["batch_size"]] = "oom"
    return out


def _ran(points):
    return {p: s for p, s in points.items() if s != "oom"}


def _largest(points, limit_bytes=None):
    ran = [p for p, s in _ran(points).items()
           if limit_bytes is None or s["peak_bytes"] <= limit_bytes]
    return max(ran) if ran else None


def _range(values):
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}x" if abs(hi - lo) < 0.005 else f"{lo:.2f}-{hi:.2f}x"


def claims_table(points, fits_gib):
    """Markdown: one row per sampler, the claim's columns as ratios to group_by_length."""
    base = _ran(points[BASE])
    limit = fits_gib * 2**30
    base_top = _largest(points[BASE])
    lines = [f"| sampler | peak memory / {BASE}'s at equal batch | largest batch run (first OOM) "
             f"| real tok/s at own largest / {BASE}'s at its own | largest batch within "
             f"{fits_gib:g} GiB measured |",
             "|---|---|---|---|---|"]
    for name in SAMPLERS:
        ran = _ran(points[name])
        if not ran:
            continue
        mem = [ran[p]["peak_bytes"] / base[p]["peak_bytes"] for p in ran if p in base]
        top = _largest(points[name])
        ooms = [p for p, s in points[name].items() if s == "oom"]
        first_oom = f" (OOM at {min(ooms)})" if ooms else " (no OOM)"
        speed = ran[top]["real_tokens_per_s"] / base[base_top]["real_tokens_per_s"]
        fits = _largest(points[name], limit)
        lines.append(f"| {name} | {_range(mem)} | {top}{first_oom} | {speed:.2f}x (P={top} vs "
                     f"{base_top}) | {fits if fits is not None else '-'} |")
    return "\n".join(lines)


def plot(points, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name in SAMPLERS:
        ran = sorted(_ran(points[name]).items())
        if not ran:
            continue
        ps = [p for p, _ in ran]
        line, = left.plot(ps, [s["real_tokens_per_s"] for _, s in ran], marker="o", label=name)
        right.plot(ps, [s["peak_bytes"] / 2**30 for _, s in ran], marker="o", label=name,
                   color=line.get_color())
        for p in (p for p, s in points[name].items() if s == "oom"):
            right.plot([p], [0], marker="x", color=line.get_color(), markersize=10)
    left.set(xlabel="per-device batch size", ylabel="real tokens/s (micro-step sync)")
    right.set(xlabel="per-device batch size (x on the axis: OOM)", ylabel="peak allocated GiB")
    left.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def add_arguments(p):
    p.add_argument("results", nargs="+", type=Path)
    p.add_argument("--plot", type=Path, default=None)
    p.add_argument("--fits-gib", type=float, default=32.0)
    p.add_argument("--dataset", default="lognormal")


def run(args):
    sets = [json.loads(path.read_text()) for path in args.results]
    points = sweep(sets, args.dataset)
    print(claims_table(points, args.fits_gib))
    if args.plot:
        first = sets[0]
        plot(points, args.plot, f"{first['shape']} ({first['dtype']}), {first['device']}, "
             f"dp={first['dp']} simulated, grad_accum {first['grad_accum']}")
    return 0

