"""dp=2 x tp=2 under torchrun --nproc_per_node=4 (gloo): what every rank's sampler yields.

    torchrun --nproc_per_node=4 run_replicas.py --out DIR

Two sources of the data-parallel topology: a torch DeviceMesh with dimensions ("dp", "tp"),
and the mesh accelerate's ParallelismConfig(dp_shard_size=2, tp_size=2) builds. Writes
DIR/rank<r>.json: the topologies found and the micro-batches of 2 epochs.
"""

import argparse
import os

import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

import _teardown
from _support import scaled_lengths, write_json
from brs import BatchRebalanceSampler
from brs.integrations import data_parallel_rank

NUM_SAMPLES = 48
PER_DEVICE = 2
GRAD_ACCUM = 2
EPOCHS = 2


def sampler_for(dp_size, rank):
    return BatchRebalanceSampler(scaled_lengths(NUM_SAMPLES), per_device_batch_size=PER_DEVICE,
                                 grad_accum=GRAD_ACCUM, dp_size=dp_size, rank=rank, seed=11)


def mesh_epochs():
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    dp_size, rank = data_parallel_rank(mesh)
    sampler = sampler_for(dp_size, rank)
    epochs = []
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        epochs.append(list(sampler))
    return {"dp_size": dp_size, "dp_rank": rank, "tp_rank": mesh["tp"].get_local_rank(),
            "epochs": epochs}


def accelerate_topology():
    """accelerate's ParallelismConfig and the device mesh it builds (its "dp" is flattened).

    accelerate refuses tensor parallelism on CPU processes (MULTI_CPU) in Accelerator(), so the
    config's own mesh is handed to accelerate_data_parallel in the two attributes it reads.
    """
    import types

    from accelerate.parallelism_config import ParallelismConfig
    from brs.integrations import accelerate_data_parallel

    config = ParallelismConfig(dp_shard_size=2, tp_size=2)
    mesh = config.build_device_mesh("cpu")
    accelerator_view = types.SimpleNamespace(parallelism_config=config, torch_device_mesh=mesh,
                                             num_processes=dist.get_world_size(),
                                             process_index=dist.get_rank())
    dp_size, rank = accelerate_data_parallel(accelerator_view)
    return {"dp_size": dp_size, "dp_rank": rank, "mesh_dims": list(mesh.mesh_dim_names),
            "tp_rank": mesh["tp"].get_local_rank(),
            "flattened_dp": list(data_parallel_rank(mesh, "dp"))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    options = parser.parse_args()
    dist.init_process_group("gloo")
    result = {"mesh": mesh_epochs(), "accelerate": accelerate_topology()}
    write_json(os.path.join(options.out, f"rank{dist.get_rank()}.json"), result)


if __name__ == "__main__":
    _teardown.run(main)
