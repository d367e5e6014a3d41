"""Errors in the framework's own terms under accelerate and Lightning: a job the sampler cannot
plan is refused when the loader is prepared (accelerate) or when the fit starts, before the
first batch (Lightning), naming the Accelerator's, the DataLoader's and the Trainer's arguments
in a message of a sentence or two (brs/integrations/_framework_names.py)."""

import pytest

pytest.importorskip("lightning")

import torch  # noqa: E402
from accelerate import Accelerator  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

import _lightning_app as app  # noqa: E402
from _support import TokenDataset, pad_collate, scaled_lengths  # noqa: E402
from brs import BatchRebalanceSampler  # noqa: E402
from brs.integrations.accelerate import prepare_dataloader  # noqa: E402
from brs.integrations.lightning import LightningBatchSampler  # noqa: E402

LENGTHS = scaled_lengths(40)
SHORT = 300  # characters


class PaddingCollator:
    """A collator that pads to a multiple of 64, as transformers' padding collators say."""

    pad_to_multiple_of = 64

    def __call__(self, rows):
        return pad_collate(rows)


def _sampler(**kw):
    kw = {"per_device_batch_size": 2, "grad_accum": 2, "dp_size": 1, "rank": 0, **kw}
    return BatchRebalanceSampler(LENGTHS, **kw)


def _tight_cap():
    """A max_tokens that plans the unpadded lengths but not their padding to 64 (the collator's):
    two samples of a micro-batch padded to 128 each are more than 2 x the longest sample."""
    return 2 * int(max(LENGTHS))


def _refused(exception, call, *args, **kwargs):
    with pytest.raises(exception) as refused:
        call(*args, **kwargs)
    message = str(refused.value)
    assert len(message) < SHORT, message
    return message


# -- accelerate: refused by prepare_dataloader ------------------------------------------------

def test_accelerate_names_gradient_accumulation_steps():
    loader = DataLoader(TokenDataset(LENGTHS), batch_sampler=_sampler(grad_accum=2),
                        collate_fn=pad_collate)
    message = _refused(ValueError, prepare_dataloader,
                       Accelerator(cpu=True, gradient_accumulation_steps=4), loader)
    assert message.startswith("Accelerator(gradient_accumulation_steps=4) but the brs sampler "
                              "plans grad_accum=2")


def test_accelerate_names_the_dataloaders_batch_size():
    loader = DataLoader(TokenDataset(LENGTHS), batch_size=4, sampler=_sampler(),
                        collate_fn=pad_collate)
    message = _refused(TypeError, prepare_dataloader, Accelerator(cpu=True), loader)
    assert message.startswith("DataLoader(batch_size=4, sampler=<brs sampler>)")
    assert "batch_sampler=sampler" in message and "no batch_size" in message


def test_accelerate_says_the_sampler_check_in_the_accelerators_words():
    sampler = _sampler(grad_accum=1, max_tokens=_tight_cap())
    loader = DataLoader(TokenDataset(LENGTHS), batch_sampler=sampler,
                        collate_fn=PaddingCollator())
    message = _refused(ValueError, prepare_dataloader, Accelerator(cpu=True), loader)
    assert message.startswith("prepare_dataloader: max_tokens")
    assert "raise grad_accum and Accelerator's gradient_accumulation_steps" in message
    assert "dp_size" not in message and "lower per_device_batch_size" in message


# -- Lightning: refused when the fit starts, before the first batch ----------------------------

class _Module(app.TinyLM):
    def __init__(self, loader):
        super().__init__(per_device=2)
        self.loader = loader

    def train_dataloader(self):
        return self.loader(self)


def _fit(tmp_path, loader, **overrides):
    module = _Module(loader)
    trainer = app.trainer(tmp_path, max_epochs=1, **overrides)
    return module, trainer


def _fit_refused(tmp_path, exception, loader, **overrides):
    module, trainer = _fit(tmp_path, loader, **overrides)
    message = _refused(exception, trainer.fit, module)
    assert module.index_log == []  # no batch trained
    return message


def _wrapped(sampler, collate_fn=pad_collate):
    return lambda module: DataLoader(TokenDataset(LENGTHS),
                                     batch_sampler=LightningBatchSampler(sampler),
                                     collate_fn=collate_fn)


def test_lightning_names_accumulate_grad_batches(tmp_path):
    message = _fit_refused(tmp_path, ValueError, _wrapped(_sampler(grad_accum=2)),
                           accumulate_grad_batches=1)
    assert message.startswith("Trainer(accumulate_grad_batches=1) but the brs sampler plans "
                              "grad_accum=2")


def test_lightning_names_devices_and_num_nodes(tmp_path):
    message = _fit_refused(tmp_path, ValueError, _wrapped(_sampler(dp_size=2, rank=0)))
    assert "Trainer(devices=1, num_nodes=1)" in message and "dp_size=1, rank=0" in message


def test_lightning_names_the_dataloaders_batch_size(tmp_path):
    def loader(module):
        return DataLoader(TokenDataset(LENGTHS), batch_size=4, sampler=_sampler(),
                          collate_fn=pad_collate)
    message = _fit_refused(tmp_path, TypeError, loader)
    assert message.startswith("DataLoader(batch_size=4, sampler=<brs sampler>)")
    assert "batch_sampler=LightningBatchSampler(sampler)" in message


def test_lightning_says_the_sampler_check_in_the_trainers_words(tmp_path):
    sampler = _sampler(grad_accum=1, max_tokens=_tight_cap())
    message = _fit_refused(tmp_path, ValueError, _wrapped(sampler, PaddingCollator()),
                           accumulate_grad_batches=1)
    assert message.startswith("RebalanceCallback: max_tokens")
    assert "raise accumulate_grad_batches so that" in message
    assert "devices x num_nodes" in message and "dp_size" not in message


def test_the_same_job_trains_when_the_arguments_agree(tmp_path):
    # the checks refuse the mismatches above, not the job: agreeing arguments train
    module, trainer = _fit(tmp_path, _wrapped(_sampler(grad_accum=2)),
                           accumulate_grad_batches=2)
    trainer.fit(module)
    assert len(module.index_log) == len(_sampler(grad_accum=2)) and torch.is_grad_enabled()
