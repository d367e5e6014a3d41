"""python -m brsbench lengths: one of the training studies' datasets, one length per line (a
lengths file, docs/formats.md), for `python -m brs calibrate --lengths` (bench/train_e2e_gpu).

    python3 -m brsbench lengths lognormal > lognormal.lengths
"""

import sys

from .datasets import E2E_NAMES, dataset_lengths


def add_arguments(p) -> None:
    p.add_argument("name", nargs="?", default="lognormal", choices=E2E_NAMES)
    p.add_argument("--max-length", type=int, default=1024, help="lengths are clipped here")
    p.add_argument("--seed", type=int, default=42, help="of the lognormal lengths")


def run(args) -> int:
    lengths, _ = dataset_lengths(args.name, args.max_length, args.seed)
    sys.stdout.write("".join(f"{n}\n" for n in lengths))
    return 0
