"""The length distributions of the benchmark: the real files in data/ and the reference's synthetic one."""

import math
import random
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Dataset:
    name: str
    lengths: list[int]
    source: str
    notes: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.lengths)


def read_lengths(path: Path) -> list[int]:
    """One positive integer per line (the format of data/*.lengths)."""
    with open(path) as f:
        return [int(line) for line in f if line.strip()]


def lognormal_lengths(n: int, seed: int) -> list[int]:
    """The upstream benchmark's synthetic lengths: clamp(round(lognormvariate(5, 1)), 16, 1024)."""
    rng = random.Random(seed)
    return [min(1024, max(16, round(rng.lognormvariate(5.0, 1.0)))) for _ in range(n)]


def load_all(data_dir: Path, synthetic_n: int, seed: int) -> list[Dataset]:
    """gsm8k, fortunes, jargon, manpages clipped at 4096 and 32768 (as a pipeline truncates), lognormal."""
    sets = []
    for stem, name in (("gsm8k_train", "gsm8k"), ("fortunes", "fortunes"), ("jargon", "jargon")):
        sets.append(Dataset(name, read_lengths(data_dir / f"{stem}.lengths"), f"data/{stem}.lengths"))
    manpages = read_lengths(data_dir / "manpages.lengths")
    for clip in (4096, 32768):
        sets.append(Dataset(f"manpages@{clip // 1024}k", [min(x, clip) for x in manpages],
                            f"data/manpages.lengths clipped at {clip}"))
    sets.append(Dataset("lognormal", lognormal_lengths(synthetic_n, seed),
                        f"clamp(round(lognormvariate(5,1)),16,1024), n={synthetic_n}, seed={seed}"))
    return sets


def fit_to_batch(ds: Dataset, batch: int, min_steps: int) -> Dataset:
    """Tile a dataset that is too small for `min_steps` optimizer steps of `batch` samples.

    Tiling repeats the whole file (copy c of sample i is index c*n + i), so the distribution is
    unchanged and the run stays deterministic; the report says where it was needed.
    """
    need = batch * min_steps
    if ds.n >= need:
        return ds
    copies = math.ceil(need / ds.n)
    note = f"tiled x{copies} ({ds.n} -> {ds.n * copies} samples) to get {min_steps}+ steps of B={batch}"
    return Dataset(ds.name, ds.lengths * copies, ds.source, ds.notes + [note])
