"""What the one-job e2e benchmarks (online.py, same_shapes.py) share: the job's command line
(model shape, datasets, dp x grad_accum x batch size, seed, output directory) and their outputs
(results.json and report.md in that directory)."""

import argparse
import json
from pathlib import Path


def parser(description: str, datasets: str) -> argparse.ArgumentParser:
    """The job's arguments; the caller adds its own and parses."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--shape", default="gpt2-tiny")
    p.add_argument("--datasets", default=datasets, help=f"comma-separated (default {datasets})")
    p.add_argument("--dp", type=int, default=8)
    p.add_argument("--grad-accum", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=4, help="per-device batch size")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", type=Path, required=True)
    return p


def write(out: Path, results: dict, report: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "report.md").write_text(report)
