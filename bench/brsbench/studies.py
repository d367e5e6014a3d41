"""What the per-step studies (same_samples, packed_vs_verl) share: their command line, the
datasets they walk and where their table goes."""

import argparse
from pathlib import Path

from .datasets import Dataset, load_all


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    """--full, --data, --out and --only; a study adds its own options."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("--full", action="store_true", help="more steps and a larger synthetic set")
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    ap.add_argument("--only", help="comma-separated dataset names (development)")
    return ap


def datasets(args: argparse.Namespace, synthetic_n: int, seed: int) -> list[Dataset]:
    """The benchmark's distributions, those named by --only when given."""
    names = args.only.split(",") if args.only else None
    return [ds for ds in load_all(args.data, synthetic_n, seed) if names is None or ds.name in names]


def emit(table: str, out: Path | None) -> None:
    """The table on standard output, and in --out when given."""
    print(table)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(table + "\n")
