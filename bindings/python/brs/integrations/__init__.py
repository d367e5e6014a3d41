"""Integrations of brs.BatchRebalanceSampler with training frameworks.

- ``brs.integrations.accelerate.prepare_dataloader(accelerator, dataloader)``: HuggingFace
  accelerate, for hand-written training loops.
- ``brs.integrations.transformers.BatchRebalanceTrainer`` / ``BatchRebalanceMixin``: the
  transformers Trainer (and trainers derived from it, such as TRL's).
- ``brs.integrations.lightning.LightningBatchSampler`` / ``RebalanceCallback``: PyTorch
  Lightning.
- ``brs.integrations.data_parallel_rank(mesh)`` / ``accelerate_data_parallel(accelerator)``:
  the sampler's dp_size and rank from a torch DeviceMesh or an accelerate ParallelismConfig,
  when tensor, context or sequence parallelism splits the model across ranks.

The submodules import their framework; this package imports nothing heavy, so ``import brs``
stays light. Guides: docs/trainer.md, docs/lightning.md. One module per framework; what
several of them share is private here: _loader.py (the brs sampler under a framework's
DataLoader, its collator's padding, a calibration over it), _sync_choice.py (the sync model a
framework runs), _memory_budget.py (max_tokens from the device's memory) and _metrics.py (the
``brs/`` metrics of a step).

The data-parallel rank and size of this process, when the model itself is split across ranks:
with tensor, context or sequence parallelism the ranks of one model replica must see the same
samples, so brs plans one micro-batch per data-parallel REPLICA, not per process: the sampler's
dp_size is the number of replicas and its rank the replica's index. Both come from the torch
DeviceMesh (the product of its data-parallel dimensions) or from accelerate's ParallelismConfig.

    from brs.integrations import data_parallel_rank
    dp_size, rank = data_parallel_rank(mesh)          # mesh dims e.g. ("dp", "tp")
    sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=8, dp_size=dp_size,
                                        rank=rank)
"""

import math

# Dimension names that carry data parallelism when none are given: torch's usual "dp", or
# accelerate's ParallelismConfig dimensions.
_DP_NAMES = ("dp",)
_ACCELERATE_DP_NAMES = ("dp_replicate", "dp_shard")


def data_parallel_rank(mesh, dims=None):
    """(dp_size, dp_rank) of this process in a torch DeviceMesh.

    ``dims``: the names of the mesh dimensions across which data is split (a string or a
    tuple, row-major); by default "dp" if the mesh has it, else accelerate's "dp_replicate" /
    "dp_shard" that it has, else the single dimension of a 1-D mesh. Every other dimension
    (tp, cp, sp, ...) holds ranks of one replica, which get the same micro-batches.
    """
    if dims is None and mesh.ndim == 1 and not mesh.mesh_dim_names:
        return mesh.size(), mesh.get_local_rank()
    dims = _dp_dims(mesh) if dims is None else ((dims,) if isinstance(dims, str) else tuple(dims))
    if not dims:
        return 1, 0
    try:
        subs = [mesh[dim] for dim in dims]
    except (KeyError, RuntimeError, ValueError) as error:
        raise ValueError(f"the device mesh has no dimension among {list(dims)} (its dimensions: "
                         f"{list(mesh.mesh_dim_names or ())}): pass dims= naming its "
                         f"data-parallel dimensions ({error})") from None
    sizes = [sub.size() for sub in subs]
    coordinates = [sub.get_local_rank() for sub in subs]
    rank = 0
    for size, coordinate in zip(sizes, coordinates):
        rank = rank * size + coordinate
    return math.prod(sizes), rank


def _dp_dims(mesh):
    names = tuple(mesh.mesh_dim_names or ())
    if "dp" in names:
        return _DP_NAMES
    accelerate_dims = tuple(name for name in _ACCELERATE_DP_NAMES if name in names)
    if accelerate_dims:
        return accelerate_dims
    if mesh.ndim == 1:
        return names
    raise ValueError(f"cannot tell which dimensions of the device mesh {list(names)} are data "
                     "parallel: pass dims= (e.g. dims=('dp_replicate', 'dp_shard'))")


def accelerate_data_parallel(accelerator):
    """(dp_size, dp_rank) of this process under an accelerate Accelerator.

    Pure data parallelism: the processes. With a ParallelismConfig that splits the model (tp,
    cp, sp): its data-parallel dimensions in the accelerator's device mesh.
    """
    config = getattr(accelerator, "parallelism_config", None)
    if config is None or not getattr(config, "non_dp_dim_names", None):
        return int(accelerator.num_processes), int(accelerator.process_index)
    dims = tuple(config.dp_dim_names)
    if not dims:
        return 1, 0
    return data_parallel_rank(accelerator.torch_device_mesh, dims)


__all__ = ["accelerate_data_parallel", "data_parallel_rank"]
