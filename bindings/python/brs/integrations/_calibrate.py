"""brs.calibrate on what a framework trains with: its lengths, its collator and its loss.

A calibration is worth what it predicts about the micro-batches training runs, so each
integration hands brs.calibrate the training's own collate_fn (the padding, masks and labels
training builds) and its own loss (the Trainer's compute_loss, a LightningModule's
training_step, a hand-written loop's loss function): docs/calibration.md.
"""

from collections.abc import Mapping

from brs import calibrate

from ._sampler_lookup import find_rebalance_sampler


def with_loader(model, dataloader, forward=None, **kwargs):
    """brs.calibrate over the lengths of the brs sampler under ``dataloader`` and its
    collate_fn; ``forward(model, batch) -> loss`` as the loop computes it (default
    ``model(**batch).loss``)."""
    sampler = find_rebalance_sampler(dataloader)
    if sampler is None:
        raise ValueError("calibrate: no brs.BatchRebalanceSampler under this DataLoader; build "
                         "it as DataLoader(dataset, batch_sampler=sampler, collate_fn=...)")
    collate_fn = getattr(dataloader, "collate_fn", None)
    return calibrate(model, sampler.lengths, collate_fn=collate_fn, forward=forward, **kwargs)


def trainer_forward(trainer):
    """(model, batch) -> loss by the Trainer's compute_loss, as its training_step computes it."""
    def forward(model, batch):
        return trainer.compute_loss(model, batch)

    return forward


def lightning_forward(model, batch):
    """A LightningModule's training_step loss (a tensor, or a dict's "loss")."""
    out = model.training_step(batch, 0)
    if isinstance(out, Mapping):
        out = out.get("loss")
    if out is None:
        raise TypeError("calibrate: training_step returned no loss (a tensor or a dict with "
                        "'loss'); pass forward=(model, batch) -> loss")
    return out
