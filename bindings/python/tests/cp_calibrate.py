"""torchrun --nproc_per_node=4 (gloo, CPU): brs.calibrate(..., cp_size=4) times brs's reference
CP decoder at degrees 1, 2 and 4 and rank 0 saves the fitted cost model to argv[1]."""

import sys

import torch.distributed as dist

import brs

LENGTHS = [64, 96, 128, 192, 256, 320, 384, 512]


def main(out):
    dist.init_process_group("gloo")
    cm = brs.calibrate("reference", LENGTHS, cp_size=4, seq_lens=LENGTHS, repeats=1)
    if dist.get_rank() == 0:
        cm.save(out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
