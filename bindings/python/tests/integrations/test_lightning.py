"""brs with the real lightning.Trainer on one CPU device: epochs, metrics, loss, resume.

40 samples, per-device batch 4, accumulate_grad_batches 2: 5 optimizer steps (10 micro-batches)
per epoch, 2 epochs; and how Lightning's distributed path re-creates a bare sampler's DataLoader,
called in-process. The ddp runs under torchrun are in test_lightning_ddp.py.
"""

import copy
import csv
import gc
import weakref

import pytest

pytest.importorskip("lightning")

import lightning.fabric.utilities.data as fabric_data  # noqa: E402
import lightning.pytorch as pl  # noqa: E402
import lightning.pytorch.utilities.data as pl_data  # noqa: E402
import torch  # noqa: E402
from lightning.pytorch.callbacks import ModelCheckpoint  # noqa: E402
from lightning.pytorch.loggers import CSVLogger  # noqa: E402

import _lightning_app as app  # noqa: E402
from _support import TokenDataset, pad_collate, scaled_lengths  # noqa: E402
from brs.integrations._metrics import NAMES, plan_metrics  # noqa: E402
from brs.integrations.lightning import LightningBatchSampler  # noqa: E402

PER_DEVICE = 4
STEPS_PER_EPOCH = 5
STOP = 7  # epoch 1, step 2: inside the second epoch


def planned(epoch):
    sampler = app.rebalance_sampler(PER_DEVICE, dp_size=1, rank=0)
    return [mb.indices for step in range(sampler.steps_per_epoch)
            for mb in sampler.plan(step, epoch=epoch).micro_batches[0]]


def fit(root, module=None, ckpt_path=None, **overrides):
    module = module or app.TinyLM(PER_DEVICE)
    trainer = app.trainer(root, **overrides)
    trainer.fit(module, ckpt_path=ckpt_path)
    return module, trainer


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    root = tmp_path_factory.mktemp("lightning-full")
    module, trainer = fit(root, logger=CSVLogger(root, name="csv"))
    return module, trainer, root


def epoch_batches(log, epoch):
    return [entry["indices"] for entry in log if entry["epoch"] == epoch]


def test_each_epoch_trains_its_plan_and_reshuffles(full):
    module, trainer, _ = full
    assert trainer.global_step == 2 * STEPS_PER_EPOCH
    for epoch in range(app.EPOCHS):
        batches = epoch_batches(module.index_log, epoch)
        assert batches == planned(epoch), f"epoch {epoch}"
        assert sorted(i for batch in batches for i in batch) == list(range(app.NUM_SAMPLES))
    assert epoch_batches(module.index_log, 1) != epoch_batches(module.index_log, 0)


def test_brs_metrics_reach_the_lightning_logger(full):
    _, trainer, _ = full
    with open(trainer.logger.experiment.metrics_file_path) as handle:
        rows = [row for row in csv.DictReader(handle) if row.get(NAMES[0])]
    assert len(rows) == 2 * STEPS_PER_EPOCH  # one row per optimizer step
    sampler = app.rebalance_sampler(PER_DEVICE, dp_size=1, rank=0)
    for row in rows:
        step = int(row["step"])  # Lightning logs the global step the metrics belong to
        expected = plan_metrics(sampler.plan(step % STEPS_PER_EPOCH,
                                             epoch=step // STEPS_PER_EPOCH))
        for name in NAMES:
            assert float(row[name]) == pytest.approx(expected[name]), (step, name)
    assert {float(row["brs/real_tokens"]) for row in rows} != {0.0}


def test_metrics_off_with_one_option(tmp_path):
    _, trainer = fit(tmp_path, metrics=False, max_steps=2, logger=CSVLogger(tmp_path, name="csv"))
    assert not any(name.startswith("brs/") for name in trainer.logged_metrics)


class FirstGradients(pl.Callback):
    def __init__(self):
        self.gradients = None

    def on_before_optimizer_step(self, trainer, pl_module, optimizer):
        if self.gradients is None:
            self.gradients = {name: p.grad.clone() for name, p in pl_module.named_parameters()
                              if p.grad is not None}


def test_loss_normalisation_is_the_token_mean_of_the_whole_step(tmp_path):
    """The accumulated gradient of step 0 equals that of the token-mean loss of its samples."""
    module = app.TinyLM(PER_DEVICE)
    reference = copy.deepcopy(module.model)
    grads = FirstGradients()
    fit(tmp_path, module=module, max_steps=1, callbacks=[grads])
    step_samples = [i for batch in planned(0)[:app.GRAD_ACCUM] for i in batch]
    dataset = TokenDataset(scaled_lengths(app.NUM_SAMPLES))
    batch = pad_collate([dataset[i] for i in step_samples])
    batch.pop("sample_idx")
    loss_sum, tokens = app.token_sum_loss(reference, batch)
    (loss_sum / tokens).backward()
    for name, param in reference.named_parameters():
        torch.testing.assert_close(grads.gradients[f"model.{name}"], param.grad,
                                   rtol=1e-4, atol=1e-6, msg=name)


def test_resume_inside_an_epoch_equals_the_uninterrupted_run(full, tmp_path):
    full_module, _, _ = full
    checkpoints = ModelCheckpoint(dirpath=tmp_path / "ckpt", every_n_train_steps=STOP,
                                  save_top_k=-1)
    fit(tmp_path, max_steps=STOP, callbacks=[checkpoints], enable_checkpointing=True)
    (path,) = (tmp_path / "ckpt").glob("*.ckpt")
    resumed, trainer = fit(tmp_path, ckpt_path=str(path))
    assert trainer.global_step == 2 * STEPS_PER_EPOCH
    after_stop = [entry for entry in full_module.index_log if entry["step"] >= STOP]
    assert resumed.index_log == after_stop
    for name, value in full_module.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[name]), name


def test_accumulate_grad_batches_must_match_the_sampler(tmp_path):
    with pytest.raises(ValueError, match="accumulate_grad_batches=1.*grad_accum=2"):
        fit(tmp_path, accumulate_grad_batches=1, max_steps=1)


def test_a_bare_sampler_reshuffles_on_one_device(tmp_path):
    module, _ = fit(tmp_path, module=app.BareLM(PER_DEVICE), metrics=False)
    assert epoch_batches(module.index_log, 1) == planned(1)


def test_a_bare_sampler_reshuffles_under_a_plain_trainer(tmp_path):
    # No RebalanceCallback either: Lightning's own set_epoch reaches the sampler through its
    # .sampler (Lightning calls it on dataloader.batch_sampler.sampler only).
    module, _ = fit(tmp_path, module=app.PlainBareLM(PER_DEVICE), rebalance=False)
    for epoch in range(app.EPOCHS):
        batches = epoch_batches(module.index_log, epoch)
        assert batches == planned(epoch), f"epoch {epoch}"
        assert sorted(i for batch in batches for i in batch) == list(range(app.NUM_SAMPLES))
    assert epoch_batches(module.index_log, 1) != epoch_batches(module.index_log, 0)


# -- Lightning re-creating a bare sampler's DataLoader (its distributed path, in-process) -------

def _bare_loader(sampler):
    return torch.utils.data.DataLoader(TokenDataset(scaled_lengths(app.NUM_SAMPLES)),
                                       batch_sampler=sampler, collate_fn=pad_collate)


def _distributed_sampler(rank):
    dataset = TokenDataset(scaled_lengths(app.NUM_SAMPLES))
    return torch.utils.data.DistributedSampler(dataset, num_replicas=2, rank=rank)


@pytest.mark.parametrize("update", [pl_data._update_dataloader, fabric_data._update_dataloader],
                         ids=["trainer", "fabric"])
def test_lightning_recreates_a_bare_sampler_as_the_same_sampler_wrapped(update):
    sampler = app.rebalance_sampler(2, dp_size=2, rank=1)
    sampler.set_epoch(1)
    expected = list(sampler)
    loader = update(_bare_loader(sampler), _distributed_sampler(rank=1))
    assert isinstance(loader.batch_sampler, LightningBatchSampler)
    assert loader.batch_sampler.sampler is sampler  # its epoch, position and owner's reference
    assert list(loader.batch_sampler) == expected
    loader.batch_sampler.set_epoch(0)  # what Lightning's fit loop calls
    assert sampler.epoch == 0


def test_lightning_recreating_a_sampler_of_other_ranks_says_what_to_set():
    sampler = app.rebalance_sampler(2, dp_size=2, rank=1)
    with pytest.raises(ValueError, match=r"dp_size=2, rank=1 .* replica 0: build "
                                         r"BatchRebalanceSampler\(\.\.\., dp_size=2, rank=0\)"):
        pl_data._update_dataloader(_bare_loader(sampler), _distributed_sampler(rank=0))


def test_the_saved_arguments_keep_a_sampler_out_of_reference_cycles():
    sampler = app.rebalance_sampler(2, dp_size=2, rank=1)
    alive = weakref.ref(sampler)
    gc.disable()
    try:
        del sampler
        assert alive() is None, "freed by its reference count, not by the cycle collector"
    finally:
        gc.enable()
