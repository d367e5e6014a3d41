"""What the per-step studies (same_samples, packed_vs_verl) share: their command line, the
datasets they walk."""

import argparse
from pathlib import Path

from .datasets import Dataset, load_all
from .peers import Config
from .quality import CONFIGS

SEED = 42  # of the synthetic lengths and of every sampler the studies build
LARGE_K = 256  # from here on a layout gets the mode's "steps_large_k" steps, not its "steps"


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """--full, --data, --out and --only, on the study's parser; a study adds its own options."""
    ap.add_argument("--full", action="store_true", help="more steps and a larger synthetic set")
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    ap.add_argument("--only", help="comma-separated dataset names (development)")


def cases(args: argparse.Namespace, modes: dict) -> list[tuple[Dataset, Config, int]]:
    """(distribution, layout, steps) for every distribution (those named by --only when given)
    and layout, with the study's modes[quick or full] step counts."""
    mode = modes["full" if args.full else "quick"]
    names = args.only.split(",") if args.only else None
    return [(ds, cfg, mode["steps_large_k"] if cfg.k >= LARGE_K else mode["steps"])
            for ds in load_all(args.data, mode["synthetic_n"], SEED)
            if names is None or ds.name in names for cfg in CONFIGS]
