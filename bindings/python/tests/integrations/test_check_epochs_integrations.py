"""The whole run checked before its first step by the integrations that know its epoch count:
the transformers Trainer (num_train_epochs, max_steps), accelerate's prepare_dataloader(epochs=)
and Lightning (max_epochs, max_steps). The data: upstream's example, whose seed 1 plans epoch 0
under max_tokens 4000 but not epoch 1 (tests/test_check_epochs.py)."""

import pytest
import torch
from accelerate import Accelerator
from transformers import TrainingArguments

from _support import TokenDataset, pad_collate, tiny_gpt2
from brs import BatchRebalanceSampler
from brs.integrations.accelerate import prepare_dataloader
from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions

LENGTHS = [100] * 40 + [3000] * 8
SEED = 1  # epoch 0 plans under max_tokens 4000, epoch 1 does not
STEPS_PER_EPOCH = 4  # 48 samples, 3 x 4 micro-batches a step


class CountingTrainer(BatchRebalanceTrainer):
    steps_trained = 0

    def training_step(self, *args, **kwargs):
        type(self).steps_trained += 1
        return super().training_step(*args, **kwargs)


def trainer(tmp_path, **overrides):
    # One process with grad_accum 4: the 4 micro-batches a step of dp_size 2 x grad_accum 2.
    settings = dict(output_dir=str(tmp_path), per_device_train_batch_size=3,
                    gradient_accumulation_steps=4, data_seed=SEED, report_to="none",
                    use_cpu=True, remove_unused_columns=False, disable_tqdm=True)
    settings.update(overrides)
    CountingTrainer.steps_trained = 0
    return CountingTrainer(model=tiny_gpt2(), args=TrainingArguments(**settings),
                           train_dataset=TokenDataset(LENGTHS), data_collator=pad_collate,
                           rebalance_options=RebalanceOptions(max_tokens=4000))


@pytest.mark.parametrize("run", [dict(num_train_epochs=3),
                                 dict(max_steps=2 * STEPS_PER_EPOCH + 1)])
def test_trainer_refuses_the_run_before_its_first_training_step(tmp_path, run):
    # when the Trainer is built, in its own arguments' names: before any train()
    with pytest.raises(ValueError, match="Raise max_tokens to 6000") as error:
        trainer(tmp_path, **run)
    assert "epoch 1 needs 6000" in str(error.value)
    assert "gradient_accumulation_steps" in str(error.value)
    assert CountingTrainer.steps_trained == 0


def test_trainer_with_one_epoch_is_accepted(tmp_path):
    assert trainer(tmp_path, num_train_epochs=1).get_train_dataloader() is not None
    assert trainer(tmp_path, max_steps=STEPS_PER_EPOCH).get_train_dataloader() is not None


def brs_loader():
    sampler = BatchRebalanceSampler(LENGTHS, per_device_batch_size=3, grad_accum=4, dp_size=1,
                                    rank=0, seed=SEED, max_tokens=4000)
    return torch.utils.data.DataLoader(TokenDataset(LENGTHS), batch_sampler=sampler,
                                       collate_fn=pad_collate)


def test_accelerate_checks_the_epochs_it_is_told():
    with pytest.raises(ValueError, match="Raise max_tokens to 6000"):
        prepare_dataloader(Accelerator(cpu=True), brs_loader(), epochs=3)
    assert prepare_dataloader(Accelerator(cpu=True), brs_loader(), epochs=1) is not None
    assert prepare_dataloader(Accelerator(cpu=True), brs_loader()) is not None


def test_lightning_refuses_the_fit_before_its_first_training_step(tmp_path):
    pl = pytest.importorskip("lightning.pytorch")
    from brs.integrations.lightning import LightningBatchSampler, RebalanceCallback

    class Module(pl.LightningModule):
        steps_trained = 0

        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def train_dataloader(self):
            loader = brs_loader()
            return torch.utils.data.DataLoader(
                loader.dataset, batch_sampler=LightningBatchSampler(loader.batch_sampler),
                collate_fn=pad_collate)

        def training_step(self, batch, batch_idx):
            type(self).steps_trained += 1
            return self.layer(torch.ones(1)).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    fit = pl.Trainer(max_epochs=3, accumulate_grad_batches=4, accelerator="cpu", devices=1,
                     callbacks=[RebalanceCallback(metrics=False)], logger=False,
                     enable_checkpointing=False, enable_progress_bar=False,
                     enable_model_summary=False, default_root_dir=tmp_path)
    with pytest.raises(ValueError, match="Raise max_tokens to 6000"):
        fit.fit(Module())
    assert Module.steps_trained == 0
