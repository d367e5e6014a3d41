"""The markdown report (report.md) and the summary table of the compare study (bench/run)."""

from pathlib import Path

from . import stats
from .quality import PACKED, Case
from .speed import TARGET_POINTS, TYPICAL, Point


def table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def summary(cases: list[Case], points: list[Point], command: str) -> str:
    text = [table(stats.SUMMARY_HEADER, stats.summary_rows(cases, points))] if cases else []
    up = [p for p in points if p.ratio and p.dist == "uniform" and p.B == 4096]
    if up:
        text.append("\nPlanning time per optimizer step, upstream / brs (C), B = 4096, brs under per-micro-step "
                    "sync; per-step sync: " + ", ".join(
            f"K={p.K}: {p.ratio:,.0f}x ({p.up_ns_step / 1e6:.1f} ms vs {p.c_ns_step / 1e3:.0f} us); "
            f"{p.ratio_step_sync:,.0f}x ({p.c_step_sync_ns_step / 1e3:.0f} us)"
            for p in sorted(up, key=lambda p: p.K)) + ".")
    typical = [p for p in points if (p.B, p.K) == TYPICAL and p.py_iter_ns_step]
    if typical:
        p = typical[0]
        text.append(f"\nbrs through Python at {p.dp}x{p.ga}x{p.B // p.K}: {p.py_iter_ns_step / p.ga / 1e3:.1f} us "
                    f"per micro-batch yielded (C planning {p.c_ns_step / p.ga / 1e3:.1f} us of it).")
    c_rows = [p for p in points if (p.B, p.K) in TARGET_POINTS]
    if c_rows:
        text.append("\nbrs planning time per sample (C, sort included): " + ", ".join(
            f"B={p.B:,}/K={p.K:,} {p.dist} {p.c_ns_sample:.1f} ns"
            for p in sorted(c_rows, key=lambda p: (p.B, p.dist))) + ".")
    text.append("\nbrs and upstream plan the same samples per step; verl is compared with brs_packed (the better "
                "of LPT and KK, not exact in packed mode), group_by_length and random with brs over their own steps.")
    text.append(f"\nRatios: geometric mean (min-max) over distributions x configurations. "
                f"Reproduce: `{command}`.")
    return "\n".join(text)


def _fmt_ms(ns):
    return "" if ns is None else f"{ns / 1e6:.3f}"


def _fmt_overhead(ns):
    """Python iteration minus C planning, per micro-batch; below zero it is lost in timing noise."""
    if ns is None:
        return ""
    return f"{ns / 1e3:.1f}" if ns >= 0 else "~0 (noise)"


def _speed_rows(points: list[Point]) -> list[list]:
    rows = []
    for p in sorted(points, key=lambda p: (p.dist, p.K, p.B)):
        rows.append([p.B, p.K, f"{p.dp}x{p.ga}", p.dist, f"{p.n:,}", f"{p.c_ns_sample:.2f}", _fmt_ms(p.c_ns_step),
                     _fmt_ms(p.c_step_sync_ns_step),
                     _fmt_ms(p.py_plan_ns_step), _fmt_ms(p.py_iter_ns_step),
                     _fmt_overhead(p.py_overhead_ns_micro),
                     "" if p.py_overhead_ns_index is None or p.py_overhead_ns_index < 0
                     else f"{p.py_overhead_ns_index:.0f}",
                     _fmt_ms(p.up_ns_step) or p.up_note,
                     f"{p.ratio:,.0f}x" if p.ratio else "", f"{p.ratio_py:,.0f}x" if p.ratio_py else ""])
    return rows


SPEED_HEADER = ["B", "K", "dp x ga", "lengths", "N", "brs C ns/sample", "brs C ms/step",
                "brs C ms/step, per-step sync",
                "brs Python plan() ms/step (all ranks)", "brs Python iter ms/step (one rank)",
                "Python overhead us/micro-batch", "Python overhead ns/index", "upstream ms/step", "upstream / brs C",
                "upstream / brs Python iter"]


def _quality_rows(cases: list[Case]) -> list[list]:
    rows = []
    for c in cases:
        for name, s in c.scores.items():
            lb = c.packed_lower_bound if name in PACKED else c.lower_bound
            rows.append([str(c.config), c.steps, name, f"{s.peak_tokens:,}", f"{s.efficiency:.3f}",
                         f"{s.micro_sync / lb:.4f}", f"{s.step_sync / lb:.4f}",
                         f"{s.cap_violations}" + (f" (cap {c.cap:,})" if name == "brs_capped" else ""),
                         f"{c.plan_seconds.get(name, 0) * 1e3 / max(1, c.steps):.2f}"])
    return rows


QUALITY_HEADER = ["dp x ga x P", "steps", "sampler", "peak padded tokens", "padding efficiency",
                  "micro-sync time / LB", "step-sync time / LB", "micro-batches over cap",
                  "planning ms/step (Python)"]


def _target_points(points: list[Point]) -> str:
    rows = []
    for b, k in TARGET_POINTS:
        for p in points:
            if (p.B, p.K) == (b, k):
                rows.append([f"B={b:,} / K={k:,}", p.dist, f"{p.n:,}", f"{p.c_ns_sample:.2f}", _fmt_ms(p.c_ns_step),
                             f"{p.py_iter_ns_step / p.B:.2f}" if p.py_iter_ns_step else ""])
    return table(["configuration", "lengths", "N", "brs C ns/sample", "brs C ms/step",
                  "brs Python ns/sample (iter)"], rows)


def _sweep(sweep: list[Point]) -> str:
    rows = [[f"{p.n:,}", f"{p.n * 4 / 1024:,.0f} KiB", f"{p.c_ns_step / 1e6:.3f}", f"{p.c_ns_sample:.2f}"]
            for p in sweep]
    return table(["N (dataset)", "lengths array", "brs C ms/step", "brs C ns/sample"], rows)


def write(out: Path, *, cases: list[Case], points: list[Point], sweep: list[Point], env: dict,
          notes: list[str], plots: list[Path], command: str) -> Path:
    parts = [f"# brs against upstream, group_by_length, random and verl: step time, memory and "
             f"planning speed ({env['mode']} mode)", "",
             "Generated by `bench/run` (the study `python -m brsbench compare`); every peer runs from "
             "its installed package in the same run.", "",
             table(["", ""], [[k, v] for k, v in env.items()]), "", "## Summary", "",
             summary(cases, points, command), "", "## Targets", ""]
    if cases or points:
        parts.append(table(["target", "measured", "met"],
                           [[t.text, t.value + (f" ({t.why})" if t.why else ""),
                             {True: "yes", False: "**no**", None: "n/a"}[t.met]]
                            for t in stats.targets(cases, points)] if cases and points else []))
    parts += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    if points:
        parts += ["", "## Planning time per sample at the target points", "", _target_points(points), "",
                  "## Planning speed and scale", "",
                  "Times are the fastest of several repetitions (medians in results.json). Dataset "
                  "size N = steps x B, drawn by plan_speed (uniform: U[1,4096]; longtail: "
                  "round(exp(6 + 1.5 z)) in [1, 65536]).", "", table(SPEED_HEADER, _speed_rows(points))]
    if sweep:
        b, k = sweep[0].B, sweep[0].K
        parts += ["", f"### Dataset size (C, B={b:,}, K={k}, uniform)", "",
                  "A step gathers its B lengths from random positions of the whole array: once the "
                  "array outgrows the CPU caches, each sample costs a cache miss.", "", _sweep(sweep)]
    if cases:
        parts += ["", "## Per-step comparison with upstream (same samples per step)", "",
                  table(["distribution", "dp x ga x P", "steps", "brs max cost > upstream",
                         "brs micro-sync > upstream", "brs step-sync > upstream",
                         "brs/upstream micro-sync (epoch)", "brs/upstream step-sync (epoch)"],
                        [[c.dataset, str(c.config), c.steps, c.brs_max_cost_above_upstream,
                          c.brs_micro_above_upstream, c.brs_step_above_upstream,
                          f"{c.scores['brs'].micro_sync / c.scores['upstream'].micro_sync:.4f}",
                          f"{c.scores['brs'].step_sync / c.scores['upstream'].step_sync:.4f}"]
                         for c in cases])]
        parts += ["", "## Plan quality per distribution", ""]
        for name in dict.fromkeys(c.dataset for c in cases):
            cs = [c for c in cases if c.dataset == name]
            sizes = sorted({c.n for c in cs})
            parts += [f"### {name} (n = {', '.join(f'{n:,}' for n in sizes)})", ""]
            case_notes = [f"{c.config}: {n}" for c in cs for n in c.notes]
            parts += [f"- {n}" for n in case_notes] + ([""] if case_notes else [])
            parts += [table(QUALITY_HEADER, _quality_rows(cs)), ""]
    if plots:
        parts += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    path = out / "report.md"
    path.write_text("\n".join(parts) + "\n")
    return path
