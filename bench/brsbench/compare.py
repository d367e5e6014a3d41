"""python -m brsbench compare: libbrs against the peers on every distribution and layout.

Quality (the datasets x configurations of quality.py, every peer described by the library) and
planning speed (bench/plan_speed.c, the Python package and upstream on the same lengths); writes
report.md, the PNG plots and results.json under --out and prints the summary tables. bench/run
builds the library and the C timer, installs verl and runs this with --plan-speed and --verl-path.
"""

import datetime
import importlib.metadata
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from . import datasets, plots, quality, report, speed
from .results import write_json

MODES = {
    # min_steps: tile small datasets to at least this many steps of the largest batch;
    # upstream_budget_s: longest upstream planning time per step that is measured.
    # verl_max_k: largest K where verl's Karmarkar-Karp runs (pure Python, ~25 s per step at K=1024).
    "quick": {"min_steps": 4, "synthetic_n": 20000, "upstream_budget_s": 15.0, "verl_max_k": 64},
    "full": {"min_steps": 16, "synthetic_n": 100000, "upstream_budget_s": 180.0, "verl_max_k": 10**9},
}
SEED = 42  # upstream's default seed; every sampler gets it


def add_arguments(ap) -> None:
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="4+ steps each, upstream timed up to 15 s per step (default)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="16+ steps each, a 100k-sample synthetic set, upstream up to 180 s")
    ap.set_defaults(mode="quick")
    ap.add_argument("--out", type=Path, default=Path("bench/out"))
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--plan-speed", type=Path, required=True, help="the compiled bench/plan_speed.c")
    ap.add_argument("--verl-path", type=Path, help="a --target dir with verl and what it imports")
    ap.add_argument("--build-info", default="", help="library path and build type, for the report")
    ap.add_argument("--only", choices=["quality", "speed"], help="run one half (development)")
    ap.add_argument("--command", default=None,
                    help="the command line, for the report (default: this one)")


def _version(pkg):
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load_verl(path: Path | None) -> tuple[bool, str]:
    """verl is imported from its own --target dir, appended last so it shadows nothing installed."""
    if path is None or not path.is_dir():
        return False, "verl not installed (bench/run installs it with pip --target; see bench/README.md)"
    sys.path.append(str(path))
    try:
        import verl.utils.seqlen_balancing  # noqa: F401
    except Exception as err:  # any import failure means: no verl row, and the report says why
        return False, f"verl.utils.seqlen_balancing does not import: {type(err).__name__}: {err}"
    version = (path / "verl" / "version" / "version").read_text().strip()
    return True, f"verl {version} (pip install --no-deps into {path}, with ray, tensordict, msgpack, " \
                 "protobuf, pyvers, omegaconf)"


def _commit() -> str:
    """The checkout the library and bench were built from (+dirty when it has local changes)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "libbrs", "include"],
                               capture_output=True, text=True).stdout.strip()
        return head + (" + uncommitted changes in libbrs/ or include/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def environment(args, verl_note: str) -> dict:
    import brs

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    return {
        "mode": args.mode, "date (UTC)": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "machine": f"{cpu}, {os.cpu_count()} cores (shared: timings are noisy)",
        "python": platform.python_version(), "libbrs": f"{args.build_info}", "commit": _commit(),
        "brs (Python)": getattr(brs, "__version__", "?"),
        "transformers": _version("transformers"), "torch": _version("torch"),
        "accelerate": _version("accelerate"), "verl": verl_note,
    }


NOTES = [
    "Cost model for every sampler: cost(bs, L) = bs*L + 0.001*bs*L^2 (upstream's fixed model, brs's "
    "default alpha; intercept 0); packed: sum(L) + 0.001*sum(L^2).",
    "Same steps: brs, brs_capped, brs_packed and verl_kk plan exactly the samples upstream drew for "
    "each step (brs is given lengths in upstream's order with shuffle off), so the per-step max-cost "
    "comparison is exact. brs_own_shuffle is brs with its own seeded permutation, as a user runs it.",
    "LB: the sum over the scored steps of brs Plan.time_lower_bound on those same samples, a proven "
    "lower bound for brs and upstream; group_by_length and random draw other step contents, so for "
    "them it is the same epoch's bound, not a strict one. Packed rows use brs_packed's bounds.",
    "transformers' BatchRebalanceSampler has no max_tokens parameter in any release (5.17.0, 5.19.0, "
    "5.21.1, 5.22.2, 5.23.0, 5.24.0, 5.25.0 checked; it first appears in 5.17.0): the 'upstream with "
    "max_tokens' peer cannot be run; upstream with defaults is counted against brs's cap instead.",
    "Cap (brs_capped): max(longest sample, 2 * P * mean length), raised by 25% where some step could "
    "not be split into K micro-batches under it (brs reports that as an error; never a silent drop).",
    "group_by_length: LengthGroupedSampler(P*G) + DataLoader(batch_size=P) + accelerate's "
    "BatchSamplerShard, as the Trainer builds it, with a seeded generator. random: DistributedSampler "
    "+ BatchSampler(P) per rank. verl_kk: KK into K partitions by packed workload (exact integers), "
    "dealt to (rank, micro-step) snake-wise by cost.",
    "Planning times in the quality tables are whole-epoch Python times per step (brs: Sampler.plan of "
    "every rank; upstream: iterating rank 0, whose _assign plans all ranks).",
]


def run(args) -> int:
    args.command = args.command or args.invocation
    cfg = MODES[args.mode]
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    verl_ok, verl_note = load_verl(args.verl_path)
    t0 = time.perf_counter()
    cases, points, sweep = [], [], []
    if args.only != "speed":
        sets = datasets.load_all(args.data, cfg["synthetic_n"], SEED)
        cases = quality.run_all(sets, seed=SEED, min_steps=cfg["min_steps"],
                                verl_max_k=cfg["verl_max_k"] if verl_ok else 0)
    t_quality = time.perf_counter() - t0
    if args.only != "quality":
        points = speed.run_all(args.plan_speed, out, quick=args.mode == "quick",
                               upstream_budget_s=cfg["upstream_budget_s"])
        sweep = speed.dataset_size_sweep(args.plan_speed, quick=args.mode == "quick")
    env = environment(args, verl_note)
    env["wall time"] = f"quality {t_quality:.0f} s, speed {time.perf_counter() - t0 - t_quality:.0f} s"
    notes = NOTES + ([f"verl_kk not run: {verl_note}"] if not verl_ok else
                     [f"verl_kk run where K <= {cfg['verl_max_k']} only: its pure-Python KK takes ~25 s per "
                      "step at K=1024 on this machine; bench/run --full runs it everywhere"]
                     if cfg["verl_max_k"] < 10**9 else [])
    pngs = plots.all_plots(cases, points, out)
    path = report.write(out, cases=cases, points=points, sweep=sweep, env=env, notes=notes,
                        plots=pngs, command=args.command)
    write_json(out / "results.json", (
        {"env": env, "speed": [asdict(p) for p in points], "sweep": [asdict(p) for p in sweep],
         "quality": [{"dataset": c.dataset, "config": str(c.config), "steps": c.steps, "cap": c.cap,
                      "lower_bound": c.lower_bound,
                      "scores": {k: {f: v for f, v in asdict(s).items() if not f.endswith("steps")
                                     and f != "max_cost"} for k, s in c.scores.items()}}
                     for c in cases]}))
    print(report.summary(cases, points, args.command))
    print(f"\nreport: {path}", file=sys.stderr)
    return 0

