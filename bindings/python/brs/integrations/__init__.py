"""Integrations of brs.BatchRebalanceSampler with training frameworks.

- ``brs.integrations.accelerate.prepare_dataloader(accelerator, dataloader)``: HuggingFace
  accelerate, for hand-written training loops.
- ``brs.integrations.transformers.BatchRebalanceTrainer`` / ``BatchRebalanceMixin``: the
  transformers Trainer (and trainers derived from it, such as TRL's).

The submodules import their framework; this package imports nothing, so ``import brs`` stays
light. Guide: docs/trainer.md.
"""
