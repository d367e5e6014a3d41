"""The Lightning model and settings of the Lightning tests (in-process and under torchrun).

A one-layer GPT-2 trained by lightning.Trainer on a BatchRebalanceSampler; its training step
records which samples each micro-batch held and normalises the loss by the token count of the
whole optimizer step, as docs/lightning.md shows.
"""

import lightning.pytorch as pl
import torch
import torch.nn.functional as F

from _support import VOCAB, TokenDataset, pad_collate, scaled_lengths, tiny_gpt2
from brs import BatchRebalanceSampler
from brs.integrations.lightning import LightningBatchSampler, RebalanceCallback, step_plan

NUM_SAMPLES = 40
GRAD_ACCUM = 2
EPOCHS = 2
SEED = 7


def rebalance_sampler(per_device, dp_size=None, rank=None):
    return BatchRebalanceSampler(scaled_lengths(NUM_SAMPLES), per_device_batch_size=per_device,
                                 grad_accum=GRAD_ACCUM, seed=SEED, drop_last=False,
                                 dp_size=dp_size, rank=rank)


def token_sum_loss(model, batch):
    """Sum of the next-token losses of the micro-batch, and how many tokens it predicted."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    labels = batch["labels"][:, 1:]
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels.reshape(-1),
                           ignore_index=-100, reduction="sum")
    return loss, int((labels != -100).sum())


class TinyLM(pl.LightningModule):
    def __init__(self, per_device):
        super().__init__()
        self.model = tiny_gpt2()
        self.per_device = per_device
        self.index_log = []  # {"epoch", "step", "indices"} per micro-batch trained

    def train_dataloader(self):
        sampler = rebalance_sampler(self.per_device)
        return torch.utils.data.DataLoader(TokenDataset(scaled_lengths(NUM_SAMPLES)),
                                           batch_sampler=LightningBatchSampler(sampler),
                                           collate_fn=pad_collate)

    def training_step(self, batch, batch_idx):
        indices = batch.pop("sample_idx").tolist()
        self.index_log.append({"epoch": self.current_epoch, "step": self.global_step,
                               "indices": indices})
        loss_sum, _ = token_sum_loss(self.model, batch)
        # Every sample predicts all its tokens but the first: the step's token count is known
        # on every rank from the plan, without communication (docs/lightning.md).
        plan = step_plan(self.trainer)
        step_tokens = plan.total_real_tokens - plan.num_samples
        # Lightning divides by accumulate_grad_batches and DDP averages over the ranks.
        scale = self.trainer.accumulate_grad_batches * self.trainer.world_size
        return loss_sum * scale / step_tokens

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


class BareLM(TinyLM):
    """The brs sampler as the batch_sampler itself, without LightningBatchSampler."""

    def train_dataloader(self):
        self.sampler = rebalance_sampler(self.per_device)  # what the test compares Lightning's to
        return torch.utils.data.DataLoader(TokenDataset(scaled_lengths(NUM_SAMPLES)),
                                           batch_sampler=self.sampler, collate_fn=pad_collate)


class PlainBareLM(BareLM):
    """A bare sampler and no RebalanceCallback: Lightning alone drives it (token-mean loss of
    each micro-batch, since step_plan needs the callback)."""

    def training_step(self, batch, batch_idx):
        indices = batch.pop("sample_idx").tolist()
        self.index_log.append({"epoch": self.current_epoch, "step": self.global_step,
                               "indices": indices})
        loss_sum, tokens = token_sum_loss(self.model, batch)
        return loss_sum / tokens


def trainer(root, callbacks=(), metrics=True, rebalance=True, **overrides):
    settings = dict(accelerator="cpu", devices=1, max_epochs=EPOCHS,
                    accumulate_grad_batches=GRAD_ACCUM, default_root_dir=str(root),
                    logger=False, enable_checkpointing=False, enable_progress_bar=False,
                    enable_model_summary=False, log_every_n_steps=1, deterministic=True)
    settings.update(overrides)
    ours = [RebalanceCallback(metrics=metrics)] if rebalance else []
    return pl.Trainer(callbacks=[*ours, *callbacks], **settings)
