"""What the one-job e2e studies (online, same_shapes) share: the job's command line
(model shape, datasets, dp x grad_accum x batch size, seed, output directory), the model they
train on CPU, the machine's load they record, and their outputs (results.json and report.md in
that directory)."""

import argparse
import os
from pathlib import Path

import torch
from brs.calibration import memory as _memory, shapes as _shapes

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


def cpu_model(shape: str, threads: int):
    """The job's model on CPU in training mode, on `threads` threads, with the allocator kept
    as brs.calibrate measures on CPU: (its config, the model, the allocator's description)."""
    torch.set_num_threads(threads)
    allocator = _memory.keep_freed_memory()
    config = _shapes.shape_config(shape)
    model = _shapes.build_model(config, device="cpu", dtype=torch.float32)
    model.config.use_cache = False
    model.train()
    return config, model, allocator


def load_average():
    """The machine's load averages, rounded; None where the platform has none."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


write = write_job  # results.json and report.md in the job's directory
