"""python -m brsbench vocabulary: the shapes / step-time Pareto of max_shapes, modelled.

max_shapes bounds the distinct (batch size, padded length) shapes of the whole run: the sampler
chooses a vocabulary once from the data (brs_sampler_shape_vocabulary) and plans every step
within it. This study counts, on each dataset of the bench (brsbench.datasets.load_all: gsm8k,
fortunes, jargon, manpages clipped at 4096 and 32768, lognormal(5, 1) in [16, 1024]), the UNION
of distinct shapes over all dp ranks and EPOCHS epochs, and the modelled per-micro-step sync step
time (mean over steps; the library's default cost model), as a ratio to brs unbounded with the
same padding. Topology dp 4 x grad_accum 2 x per-device batch 8 (brsbench.shapes.CFG), seed 42.

Samplers: brs unbounded; brs max_shapes in MAX_SHAPES; brs max_shapes=TARGET with
max_shapes_search=SEARCH (the vocabulary's search); brs with the library's length-bucket
ladder (length_buckets="auto", as brsbench.shapes measures it); transformers' upstream
BatchRebalanceSampler (epoch e is its own set_epoch(e): seed 42 + e) and group_by_length
(LengthGroupedSampler as the Trainer deals it, a generator seeded 42 + e for epoch e), both from
brsbench.peers. Two paddings: pad_to_multiple_of 64 (brs's option; the peers' collator pads to
64) and none. brs's plans are the sampler's own (Plan.micro_sync_time, MicroBatch.padded_length:
the library's description with its padding, buckets and vocabulary); the peers' are described by
the library with the collator's padding (brs_plan_load, brsbench.shapes.describer). Each sampler
draws its own samples, as in brsbench.shapes: the means compare the same dataset, not the same
steps.

    PYTHONPATH=bindings/python:bench BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \\
        python3 -m brsbench vocabulary [--out FILE.md] [--plot FILE.png]
"""

import sys
import time
from pathlib import Path

import brs

from .datasets import load_all
from .library import shared
from .peers import length_grouped, upstream_batch_rebalance
from .results import emit
from .shapes import CFG, MULTIPLE, SEED, describer

EPOCHS = 3
MAX_SHAPES = (8, 16, 32, 64)
PADDINGS = ((MULTIPLE, f"padded to {MULTIPLE}"), (1, "unpadded"))
TARGET = 16  # the max_shapes the summary paragraph is about
SEARCH = 5000  # max_shapes_search of the row that shows what the search buys at TARGET
WITHIN = 0.05  # "within 5% of brs unbounded"


class Tally:
    """The union of shapes over ranks and epochs, the per-step micro-sync times, the tokens."""

    def __init__(self, longest: int):
        self.shapes, self.times, self.padded, self.real = set(), [], 0, 0
        self.longest, self.at_longest = longest, 0  # steps with a micro-batch padded to longest

    def add(self, plan) -> None:
        self.times.append(plan.micro_sync_time)
        self.padded += plan.total_padded_tokens
        self.real += plan.total_real_tokens
        top = 0
        for rank in plan.micro_batches:
            for mb in rank:
                length = mb.padded_tokens // mb.num_samples
                self.shapes.add((mb.num_samples, length))
                top = max(top, length)
        self.at_longest += top >= self.longest

    @property
    def mean_time(self) -> float:
        return sum(self.times) / len(self.times)


def longest(lengths, multiple) -> int:
    """The dataset's longest sample rounded up to the multiple: the longest padded length."""
    return -(-max(lengths) // multiple) * multiple


def peer_tally(lib, lengths, multiple, epoch_plans) -> Tally:
    """A peer's epochs (plan[step][rank][micro] each) described by the library with the padding
    its collator applies."""
    native, tally = describer(lib, lengths, multiple, (), {}), Tally(longest(lengths, multiple))
    described = lib.NativePlan()
    for run_plan in epoch_plans:
        for step, rank_mbs in enumerate(run_plan):
            lib.load(described, native, rank_mbs, step)
            tally.add(described.snapshot())
    return tally


def brs_sampler(lengths, **options):
    return brs.BatchRebalanceSampler(lengths, per_device_batch_size=CFG.batch, grad_accum=CFG.ga,
                                     dp_size=CFG.dp, rank=0, seed=SEED, **options)


def brs_tally(lengths, **options) -> tuple[Tally, list | None]:
    """brs's own plans of every step of EPOCHS epochs; and its vocabulary (None: unbounded)."""
    sampler = brs_sampler(lengths, **options)
    tally = Tally(longest(lengths, options.get("pad_to_multiple_of", 1)))
    for epoch in range(EPOCHS):
        for step in range(sampler.steps_per_epoch):
            tally.add(sampler.plan(step, epoch=epoch))
    vocabulary = sampler.shape_vocabulary()
    if vocabulary is not None:  # the vocabulary's promise, checked on what was planned
        assert tally.shapes <= set(map(tuple, vocabulary)), (options, tally.shapes)
        assert len(vocabulary) <= options["max_shapes"], (options, vocabulary)
    return tally, vocabulary


def check_description(lib, lengths, multiple) -> None:
    """brs unbounded's own step times equal the library's description of its loaded plan (the
    peers' path), on epoch 0: the two paths agree."""
    sampler = brs_sampler(lengths, pad_to_multiple_of=multiple)
    native, described = describer(lib, lengths, multiple, (), {}), lib.NativePlan()
    for step in range(sampler.steps_per_epoch):
        own = sampler.plan(step)
        lib.load(described, native, [[mb.indices for mb in rank] for rank in own.micro_batches],
                 step)
        loaded = described.snapshot().micro_sync_time
        assert abs(loaded - own.micro_sync_time) <= 1e-9 * own.micro_sync_time, (step, loaded)


def rows_of(lib, ds) -> dict:
    """{padding label: [(sampler, union shapes, mean micro-sync step time, padded, real)]}."""
    lengths = ds.lengths
    upstream = [upstream_batch_rebalance(lengths, CFG, SEED + e)[0].plan for e in range(EPOCHS)]
    grouped = [length_grouped(lengths, CFG, SEED + e).plan for e in range(EPOCHS)]
    out = {}
    for multiple, label in PADDINGS:
        check_description(lib, lengths, multiple)
        rows = []
        variants = [("brs unbounded", {})]
        variants += [(f"brs max_shapes={m}", {"max_shapes": m}) for m in MAX_SHAPES]
        variants += [(f"brs max_shapes={TARGET}, search {SEARCH}",
                      {"max_shapes": TARGET, "max_shapes_search": SEARCH})]
        variants += [("brs ladder", {"length_buckets": "auto"})]
        for name, options in variants:
            tally, _ = brs_tally(lengths, pad_to_multiple_of=multiple, **options)
            rows.append((name, tally))
        rows.append(("upstream", peer_tally(lib, lengths, multiple, upstream)))
        rows.append(("group_by_length", peer_tally(lib, lengths, multiple, grouped)))
        out[label] = [(name, len(t.shapes), t.mean_time, t.padded, t.real,
                       t.at_longest / len(t.times)) for name, t in rows]
    return out


def ratio(rows, name) -> tuple[int, float]:
    base = rows[0][2]
    row = next(r for r in rows if r[0] == name)
    return row[1], row[2] / base


def markdown(results, invocation: str, seconds: float) -> str:
    lines = ["# Shape vocabulary (max_shapes): shapes against modelled step time", "",
             f"Command: `{invocation}` (PYTHONPATH=bindings/python:bench, BRS_LIBRARY at the "
             "build; 2-core shared CPU).", "",
             f"dp {CFG.dp} x grad_accum {CFG.ga} x per-device batch {CFG.batch}, seed {SEED}, "
             f"{EPOCHS} epochs. shapes = distinct (batch size, padded length) over all "
             f"{CFG.dp} ranks and {EPOCHS} epochs (union); step time = mean over steps of the "
             "per-micro-step sync time in the library's default cost model, over brs "
             "unbounded's with the same padding; padded/real = padded over real tokens; steps "
             "padded to the longest = share of steps with a micro-batch padded to the dataset's "
             "longest sample (rounded to the multiple). Peers are padded by their collator as "
             "brs is; each sampler draws its own samples "
             "(module docstring: brsbench/vocabulary.py).", ""]
    for _, label in PADDINGS:
        lines += [f"## {label}", "",
                  "| dataset | sampler | shapes (4 ranks, 3 epochs) | step time vs brs unbounded "
                  "| padded/real | steps padded to the longest |", "|---|---|---:|---:|---:|---:|"]
        for ds_name, tables in results:
            rows = tables[label]
            for name, shapes, mean, padded, real, at_longest in rows:
                lines.append(f"| {ds_name} | {name} | {shapes} | {mean / rows[0][2]:.3f} | "
                             f"{padded / real:.3f} | {at_longest:.1%} |")
        lines.append("")
    lines += ["## max_shapes=16", "", summary(results), "",
              "![shapes against step time](vocabulary.png)", "",
              f"Wall time {seconds:.0f} s.", ""]
    return "\n".join(lines)


def summary(results) -> str:
    """Where max_shapes=TARGET is within WITHIN of brs unbounded and below upstream's step time,
    and where it is not, by how much: one sentence per padding, from the numbers above."""
    target = f"brs max_shapes={TARGET}"
    out = []
    for _, label in PADDINGS:
        good, bad = [], []
        for ds_name, tables in results:
            rows = tables[label]
            shapes, mine = ratio(rows, target)
            up_shapes, up = ratio(rows, "upstream")
            base_shapes, base_longest = rows[0][1], rows[0][5]
            at_longest = next(r for r in rows if r[0] == target)[5]
            what = (f"{ds_name} {mine:.3f} ({shapes} shapes; unbounded {base_shapes}, "
                    f"upstream {up:.3f} with {up_shapes}; steps padded to the longest "
                    f"{at_longest:.0%}, unbounded {base_longest:.0%})")
            misses = []
            if mine > 1 + WITHIN:
                misses.append(f"{(mine - 1) * 100:.1f}% above brs unbounded")
            if mine >= up:
                misses.append(f"{(mine / up - 1) * 100:.1f}% above upstream")
            (bad if misses else good).append(what + ("" if not misses else
                                                     ": " + ", ".join(misses)))
        sentence = f"**{label}**: max_shapes={TARGET} is within {WITHIN:.0%} of brs unbounded " \
                   f"and below upstream on {len(good)} of {len(results)} datasets"
        sentence += (": " + "; ".join(good) + "." if good else ".")
        if bad:
            sentence += " Not on " + "; ".join(bad) + "."
        out.append(sentence)
    return "\n\n".join(out)


def plot(results, path: Path) -> Path:
    from .plots import DPI, plt

    fig, axes = plt.subplots(1, len(PADDINGS), figsize=(13, 5), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    searched = f"brs max_shapes={TARGET}, search {SEARCH}"
    markers = {"brs ladder": "s", searched: "D", "upstream": "^", "group_by_length": "v"}
    for ax, (_, label) in zip(axes.flat, PADDINGS):
        for i, (ds_name, tables) in enumerate(results):
            rows, color = tables[label], colors[i % len(colors)]
            base = rows[0][2]
            curve = sorted((r[1], r[2] / base, r[0]) for r in rows if r[0].startswith("brs ")
                           and r[0] not in markers)
            ax.plot([c[0] for c in curve], [c[1] for c in curve], "o-", color=color, ms=4,
                    label=f"{ds_name}: brs (max_shapes 8..64, unbounded)")
            for x, y, name in curve:
                if name == f"brs max_shapes={TARGET}":
                    ax.plot(x, y, "o", color=color, ms=9, mfc="none")
            for name, marker in markers.items():
                shapes, r = ratio(rows, name)
                ax.plot(shapes, r, marker, color=color, ms=7,
                        label=name if i == 0 else None, mfc="none" if name != "upstream" else color)
        ax.axhline(1 + WITHIN, color="black", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"distinct shapes, union of {CFG.dp} ranks x {EPOCHS} epochs")
        ax.set_ylabel("step time / brs unbounded (mean, modelled)")
        ax.set_title(f"{label}; circled: max_shapes={TARGET}; dotted: +{WITHIN:.0%}", fontsize=9)
        ax.grid(True, which="both", lw=0.3)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def add_arguments(ap) -> None:
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--synthetic-n", type=int, default=8000)
    ap.add_argument("--only", help="comma-separated dataset names (development)")
    ap.add_argument("--out", type=Path, help="also write the markdown to this file")
    ap.add_argument("--plot", type=Path, help="the PNG of shapes against step time")


def run(args) -> int:
    lib, t0, results = shared(), time.perf_counter(), []
    names = args.only.split(",") if args.only else None
    for ds in load_all(args.data, args.synthetic_n, SEED):
        if names is None or ds.name in names:
            results.append((ds.name, rows_of(lib, ds)))
            print(f"{ds.name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    if args.plot:
        plot(results, args.plot)
    emit(markdown(results, getattr(args, "invocation", "python3 -m brsbench vocabulary"),
                  time.perf_counter() - t0), args.out)
    return 0
