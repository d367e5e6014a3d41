"""Under torchrun (2 gloo processes): each rank builds its sampler with ANOTHER seed.

    torchrun --nproc_per_node=2 ddp_mismatch.py OUT_DIR

The first iteration must raise RuntimeError on every rank (no hang, no silent divergence);
each rank writes what it raised to OUT_DIR/rank<r>.txt.
"""

import pathlib
import sys

from brs import BatchRebalanceSampler
from brs_testing import leave_after_teardown, process_group, random_lengths


def main(out):
    with process_group() as dist:
        rank = dist.get_rank()
        sampler = BatchRebalanceSampler(random_lengths(64, seed=1), per_device_batch_size=2,
                                        seed=rank)
        try:
            next(iter(sampler))
            outcome = "no error"
        except RuntimeError as exc:
            outcome = f"RuntimeError: {exc}"
        (pathlib.Path(out) / f"rank{rank}.txt").write_text(outcome)


if __name__ == "__main__":
    main(sys.argv[1])
    leave_after_teardown()
