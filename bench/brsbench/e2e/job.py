"""What the one-job e2e studies (online, same_shapes) share: the job's command line
(model shape, datasets, dp x grad_accum x batch size, seed, output directory) and their outputs
(results.json and report.md in that directory)."""

import argparse
from pathlib import Path

from ..results import write_job


def add_arguments(p: argparse.ArgumentParser, datasets: str) -> None:
    """The job's arguments, on the study's parser; the study adds its own."""
    p.add_argument("--shape", default="gpt2-tiny")
    p.add_argument("--datasets", default=datasets, help=f"comma-separated (default {datasets})")
    p.add_argument("--dp", type=int, default=8)
    p.add_argument("--grad-accum", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=4, help="per-device batch size")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", type=Path, required=True)


write = write_job  # results.json and report.md in the job's directory
