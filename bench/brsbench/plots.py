"""PNG plots of the results (matplotlib, no display needed). Small files: they are committed."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .quality import Case  # noqa: E402
from .speed import Point  # noqa: E402

DPI = 72
COLORS = {"brs": "tab:green", "brs_capped": "tab:olive", "upstream": "tab:red",
          "group_by_length": "tab:blue", "random": "tab:gray", "brs_packed": "tab:green",
          "verl_kk": "tab:purple", "brs_own_shuffle": "tab:cyan"}


def _save(fig, path: Path) -> Path:
    """The end of every plot: laid out, written, its memory freed."""
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _grouped_bars(ax, cases: list[Case], bars: list[tuple[str, str, object]]) -> None:
    """One group of bars a case, one bar (label, color, value of a case) each."""
    width = 0.8 / len(bars)
    for j, (label, color, value) in enumerate(bars):
        xs = [i + (j - (len(bars) - 1) / 2) * width for i in range(len(cases))]
        ax.bar(xs, [value(c) for c in cases], width, label=label, color=color)
    ax.set_xticks(range(len(cases)), [str(c.config) for c in cases], fontsize=7)


def _per_dataset(cases: list[Case], path: Path, bars, ylabel: str, title: str,
                 hline: float | None = None, rows: int | None = None) -> Path:
    """A panel a dataset, three a row (`rows` of them, or as many as the datasets fill)."""
    names = list(dict.fromkeys(c.dataset for c in cases))
    cols = 3
    rows = rows or (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(12, 3.2 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        _grouped_bars(ax, [c for c in cases if c.dataset == name], bars)
        if hline is not None:
            ax.axhline(hline, color="black", lw=0.8, ls=":")
        ax.set_title(name, fontsize=9)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return _save(fig, path)


def _sampler_bars(samplers: list[str], value) -> list[tuple[str, str, object]]:
    """A bar a sampler, value(case, sampler) high."""
    return [(s, COLORS[s], lambda c, s=s: value(c, s)) for s in samplers]


def step_time(cases: list[Case], out: Path, attr: str, label: str) -> Path:
    samplers = ["brs", "upstream", "group_by_length", "random"]
    return _per_dataset(cases, out / f"step_time_{attr}.png",
                        _sampler_bars(samplers,
                                      lambda c, s: getattr(c.scores[s], attr) / c.lower_bound),
                        "epoch step time / lower bound",
                        f"Epoch step time, {label} (1.0 = brs lower bound; lower is better)", 1.0)


def peak_tokens(cases: list[Case], out: Path) -> Path:
    samplers = ["brs", "brs_capped", "upstream", "group_by_length", "random"]
    return _per_dataset(cases, out / "peak_tokens.png",
                        _sampler_bars(samplers, lambda c, s: c.scores[s].peak_tokens
                                      / c.scores["brs"].peak_tokens),
                        "peak padded tokens / brs", "Peak padded tokens per micro-batch "
                        "(memory proxy; relative to brs; lower is better)", 1.0)


def brs_vs_upstream(cases: list[Case], out: Path) -> Path:
    """The ratios that decide the step-time target: below 1.0 brs is better."""
    metrics = [("micro-sync", "tab:green", "micro_sync"), ("step-sync", "tab:olive", "step_sync"),
               ("peak tokens", "tab:orange", "peak_tokens")]
    bars = [(label, color, lambda c, attr=attr: getattr(c.scores["brs"], attr)
             / getattr(c.scores["upstream"], attr)) for label, color, attr in metrics]
    return _per_dataset(cases, out / "brs_vs_upstream.png", bars, "brs / upstream",
                        "brs / upstream BatchRebalanceSampler on the same steps (below 1.0: brs "
                        "better)", 1.0, rows=2)


def per_step_max_cost(case: Case, out: Path) -> Path:
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for name in ("random", "group_by_length", "upstream", "brs"):
        ax.plot(case.scores[name].max_cost, label=name, color=COLORS[name], lw=1)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("largest micro-batch cost")
    ax.set_yscale("log")
    ax.set_title(f"Largest micro-batch cost per step, {case.dataset} {case.config} "
                 "(brs and upstream plan the same samples per step)", fontsize=9)
    ax.legend(fontsize=7)
    return _save(fig, out / "per_step_max_cost.png")


def planning_time(points: list[Point], out: Path) -> Path:
    grid = [p for p in points if p.dist == "uniform"]
    ks = sorted({p.K for p in grid})
    fig, (ax_b, ax_k) = plt.subplots(1, 2, figsize=(12, 4.5))
    cmap = plt.get_cmap("viridis")
    for i, k in enumerate(ks):
        ps = sorted((p for p in grid if p.K == k), key=lambda p: p.B)
        color = cmap(i / max(1, len(ks) - 1))
        ax_b.plot([p.B for p in ps], [p.c_ns_step / 1e6 for p in ps], "o-", color=color, label=f"brs C, K={k}")
        ax_b.plot([p.B for p in ps], [p.py_iter_ns_step / 1e6 for p in ps], ".:", color=color)
        up = [p for p in ps if p.up_ns_step]
        if up:
            ax_b.plot([p.B for p in up], [p.up_ns_step / 1e6 for p in up], "x--", color=color,
                      label=f"upstream, K={k}")
    bs = sorted({p.B for p in grid})
    for i, b in enumerate(bs):
        ps = sorted((p for p in grid if p.B == b), key=lambda p: p.K)
        if len(ps) < 2:
            continue
        color = plt.get_cmap("plasma")(i / max(1, len(bs) - 1))
        ax_k.plot([p.K for p in ps], [p.c_ns_step / 1e6 for p in ps], "o-", color=color, label=f"brs C, B={b}")
        up = [p for p in ps if p.up_ns_step]
        if up:
            ax_k.plot([p.K for p in up], [p.up_ns_step / 1e6 for p in up], "x--", color=color)
    for ax, xl in ((ax_b, "B (samples per step)"), (ax_k, "K (micro-batches per step)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xl)
        ax.set_ylabel("planning time per step (ms)")
        ax.grid(True, which="both", lw=0.3)
        ax.legend(fontsize=6)
    ax_b.set_title("vs B (solid brs C, dotted brs via Python, dashed upstream)", fontsize=9)
    ax_k.set_title("vs K (solid brs C, dashed upstream)", fontsize=9)
    return _save(fig, out / "planning_time.png")


def all_plots(cases: list[Case], points: list[Point], out: Path) -> list[Path]:
    paths = []
    if cases:
        paths.append(brs_vs_upstream(cases, out))
        paths.append(step_time(cases, out, "micro_sync", "per-micro-step sync (FSDP / ZeRO-3)"))
        paths.append(step_time(cases, out, "step_sync", "per-step sync (DDP with no_sync)"))
        paths.append(peak_tokens(cases, out))
        show = next((c for c in cases if c.dataset.startswith("manpages") and str(c.config) == "8x2x8"),
                    cases[0])
        paths.append(per_step_max_cost(show, out))
    if points:
        paths.append(planning_time(points, out))
    return paths
