"""Integrations of brs.BatchRebalanceSampler with training frameworks.

- ``brs.integrations.accelerate.prepare_dataloader(accelerator, dataloader)``: HuggingFace
  accelerate, for hand-written training loops.
- ``brs.integrations.transformers.BatchRebalanceTrainer`` / ``BatchRebalanceMixin``: the
  transformers Trainer (and trainers derived from it, such as TRL's).
- ``brs.integrations.lightning.RebalanceBatchSampler`` / ``RebalanceCallback``: PyTorch
  Lightning.
- ``brs.integrations.data_parallel_rank(mesh)`` / ``accelerate_data_parallel(accelerator)``:
  the sampler's dp_size and rank from a torch DeviceMesh or an accelerate ParallelismConfig,
  when tensor, context or sequence parallelism splits the model across ranks.

The submodules import their framework; this package imports nothing heavy, so ``import brs``
stays light. Guides: docs/trainer.md, docs/lightning.md.
"""

from ._parallelism import accelerate_data_parallel, data_parallel_rank

__all__ = ["accelerate_data_parallel", "data_parallel_rank"]
