"""Under torchrun (2 gloo processes): rank 1 raises while rank 0 waits in a collective.

    torchrun --nproc_per_node=2 ddp_failing_rank.py

What test_torchrun.py checks with it: the run ends (rank 0 is not left waiting for the rest
of the group timeout) and the launcher's report names rank 1, its exit code and its traceback.
"""

from brs_testing import process_group


def main():
    with process_group() as dist:
        if dist.get_rank() == 1:
            raise ValueError("rank 1 fails on purpose")
        dist.all_gather_object([None] * dist.get_world_size(), "rank 0 waits here")


if __name__ == "__main__":
    main()
