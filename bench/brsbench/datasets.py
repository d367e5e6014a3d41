"""The length distributions of the benchmarks: the project's data/*.lengths files, read by the
library's own reader (brs.read_lengths_file), and the seeded lognormal generator every study
draws its synthetic lengths from."""

import math
import random
from dataclasses import dataclass, field
from pathlib import Path

import brs

DATA = Path(__file__).resolve().parents[2] / "data"  # the checkout's data/ directory


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
    """The lengths of a lengths file (docs/formats.md), read by libbrs."""
    lengths, _images = brs.read_lengths_file(path)
    return lengths


def lognormal(rng: random.Random | int, mu: float = 5.0, sigma: float = 1.0, low: int = 16,
              high: int = 1024, n: int | None = None) -> int | list[int]:
    """clamp(round(lognormvariate(mu, sigma)), low, high): one draw (n None) or a list of n,
    from rng (a random.Random, whose stream goes on) or from random.Random(rng) (a seed).
    The defaults are upstream's benchmark distribution: lognormal(5, 1) in [16, 1024]."""
    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    if n is None:
        return min(high, max(low, round(rng.lognormvariate(mu, sigma))))
    return [min(high, max(low, round(rng.lognormvariate(mu, sigma)))) for _ in range(n)]


def lognormal_source(n: int, seed: int) -> str:
    return f"clamp(round(lognormvariate(5,1)),16,1024), n={n}, seed={seed}"


def load_all(data_dir: Path, synthetic_n: int, seed: int) -> list[Dataset]:
    """gsm8k, fortunes, jargon, manpages clipped at 4096 and 32768 (as a pipeline truncates), lognormal."""
    sets = []
    for stem, name in (("gsm8k_train", "gsm8k"), ("fortunes", "fortunes"), ("jargon", "jargon")):
        sets.append(Dataset(name, read_lengths(data_dir / f"{stem}.lengths"), f"data/{stem}.lengths"))
    manpages = read_lengths(data_dir / "manpages.lengths")
    for clip in (4096, 32768):
        sets.append(Dataset(f"manpages@{clip // 1024}k", [min(x, clip) for x in manpages],
                            f"data/manpages.lengths clipped at {clip}"))
    sets.append(Dataset("lognormal", lognormal(seed, n=synthetic_n),
                        lognormal_source(synthetic_n, seed)))
    return sets


# The training benchmarks' datasets (train_e2e, same_shapes, online, lengths).
E2E_NAMES = ("gsm8k", "manpages", "lognormal")


def dataset_lengths(name: str, max_length: int = 1024, seed: int = 42) -> tuple[list[int], str]:
    """(lengths clipped at max_length, where they come from) of one of E2E_NAMES; lognormal
    has 10000 samples."""
    if name == "gsm8k":
        raw, source = read_lengths(DATA / "gsm8k_train.lengths"), "data/gsm8k_train.lengths"
    elif name == "manpages":
        raw = read_lengths(DATA / "manpages.lengths")
        source = f"data/manpages.lengths clipped at {max_length}"
    elif name == "lognormal":
        raw, source = lognormal(seed, n=10000), lognormal_source(10000, seed)
    else:
        raise ValueError(f"unknown dataset {name!r}: one of {', '.join(E2E_NAMES)}")
    return [min(x, max_length) for x in raw], source


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
