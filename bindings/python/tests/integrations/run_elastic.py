"""One leg of an elastic run under torchrun: iterate a brs sampler, save where it stopped.

    torchrun --nproc_per_node=R run_elastic.py --out DIR --name LEG [--load STATE] [--stop-at S]

64 samples, per-device batch 2, grad_accum 8 / R (global batch 16). Starts at the position
of the state file --load (saved by another leg, maybe on another number of ranks), iterates
epoch 0 up to optimizer step S (else to its end), and writes DIR/LEG-rank<r>.json: the
micro-batches iterated ({"step", "indices"}) and the sampler's state_dict at the end.
"""

import argparse
import os

import torch.distributed as dist

import _teardown
from _support import read_json, scaled_lengths, write_json
from brs import BatchRebalanceSampler

NUM_SAMPLES = 64
PER_DEVICE = 2
GLOBAL_BATCH = 16


def sampler_for(world):
    return BatchRebalanceSampler(scaled_lengths(NUM_SAMPLES), per_device_batch_size=PER_DEVICE,
                                 grad_accum=GLOBAL_BATCH // (PER_DEVICE * world), seed=5)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--load")
    parser.add_argument("--stop-at", type=int)
    options = parser.parse_args()
    dist.init_process_group("gloo")
    sampler = sampler_for(dist.get_world_size())
    if options.load:
        sampler.load_state_dict(read_json(options.load)["state"])
    stop = options.stop_at if options.stop_at is not None else sampler.steps_per_epoch
    batches, consumed = [], sampler.state_dict()["step"] * sampler.grad_accum
    for indices in sampler:
        step = consumed // sampler.grad_accum
        if step >= stop:
            break
        batches.append({"step": step, "indices": indices})
        consumed += 1
    write_json(os.path.join(options.out, f"{options.name}-rank{dist.get_rank()}.json"),
               {"batches": batches, "state": sampler.state_dict(consumed=consumed),
                "dp_size": sampler.dp_size})


if __name__ == "__main__":
    _teardown.run(main)
