"""The benchmark's length distributions: the project's data/ files and upstream's synthetic one.

    python3 bench/e2e/lengths.py lognormal > lognormal.lengths   # one length per line
"""

import random
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data"
NAMES = ("gsm8k", "manpages", "lognormal")


def _read(name):
    return [int(x) for x in (DATA / name).read_text().split()]


def dataset_lengths(name, max_length=1024, seed=42):
    """(lengths clipped at max_length, where they come from)."""
    if name == "gsm8k":
        raw, source = _read("gsm8k_train.lengths"), "data/gsm8k_train.lengths"
    elif name == "manpages":
        raw = _read("manpages.lengths")
        source = f"data/manpages.lengths clipped at {max_length}"
    elif name == "lognormal":
        # Upstream's benchmark distribution: clamp(round(lognormvariate(5, 1)), 16, 1024).
        rng = random.Random(seed)
        raw = [min(1024, max(16, round(rng.lognormvariate(5.0, 1.0)))) for _ in range(10000)]
        source = f"clamp(round(lognormvariate(5,1)),16,1024), n=10000, seed={seed}"
    else:
        raise ValueError(f"unknown dataset {name!r}: one of {', '.join(NAMES)}")
    return [min(x, max_length) for x in raw], source


if __name__ == "__main__":
    lengths, _ = dataset_lengths(sys.argv[1] if len(sys.argv) > 1 else "lognormal")
    sys.stdout.write("".join(f"{n}\n" for n in lengths))
