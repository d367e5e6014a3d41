"""BatchRebalanceTrainer in this process (one rank): what it reads from TrainingArguments and
the dataset, the options, and its errors. Nothing here trains; the dataloader is enough."""

import logging
import types

import numpy as np
import pytest
import torch
from transformers import Trainer, TrainingArguments

from _support import (ColumnTokenDataset, TokenDataset, pad_collate, scaled_lengths, tiny_gpt2,
                      tokens)
from brs.integrations.accelerate import find_rebalance_sampler
from brs import BatchRebalanceSampler, CostModel
from brs.integrations.transformers import (BatchRebalanceMixin, BatchRebalanceTrainer,
                                           RebalanceEpochCallback, RebalanceOptions)

NUM_SAMPLES = 101


def arguments(tmp_path, **overrides):
    settings = dict(output_dir=str(tmp_path), per_device_train_batch_size=4,
                    gradient_accumulation_steps=2, report_to="none", use_cpu=True, seed=3,
                    remove_unused_columns=False, disable_tqdm=True)
    settings.update(overrides)
    return TrainingArguments(**settings)


def trainer(tmp_path, dataset=None, options=None, model=None, **overrides):
    dataset = TokenDataset(scaled_lengths(NUM_SAMPLES)) if dataset is None else dataset
    return BatchRebalanceTrainer(model=model or tiny_gpt2(), args=arguments(tmp_path, **overrides),
                                 train_dataset=dataset, data_collator=pad_collate,
                                 rebalance_options=options)


def sampler_of(trainer):
    loader = trainer.get_train_dataloader()
    sampler = find_rebalance_sampler(loader)
    assert sampler is not None
    return loader, sampler


def plans_like(sampler, lengths, **options):
    """Whether ``sampler`` plans as one built directly from ``lengths`` with arguments()'s
    settings (and ``options``) would: equal fingerprints. Without a cost model the Trainer
    plans with the analytic one of the model's config (brs/integrations/transformers.py)."""
    options.setdefault("cost_model", CostModel.from_config(tiny_gpt2().config))
    reference = BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=2, dp_size=1,
                                      rank=0, seed=3, drop_last=False, **options)
    return sampler.fingerprint == reference.fingerprint


def epoch_order(trainer):
    return list(sampler_of(trainer)[1])


def test_reads_batch_size_grad_accum_and_world_from_the_arguments(tmp_path):
    loader, sampler = sampler_of(trainer(tmp_path))
    assert (sampler.per_device_batch_size, sampler.grad_accum) == (4, 2)
    assert (sampler.dp_size, sampler.rank) == (1, 0)
    assert len(loader) == len(sampler) == sampler.steps_per_epoch * 2
    batch = next(iter(loader))
    assert set(batch) == {"input_ids", "attention_mask", "labels", "sample_idx"}


def test_worker_settings_are_the_trainers(tmp_path):
    loader, sampler = sampler_of(trainer(tmp_path, dataloader_num_workers=2,
                                         dataloader_prefetch_factor=3))
    assert (loader.num_workers, loader.prefetch_factor) == (2, 3)
    trained = [batch["sample_idx"].tolist() for batch in loader]
    assert trained == [mb.indices for step in range(sampler.steps_per_epoch)
                       for mb in sampler.plan(step).micro_batches[0]]


def test_seed_changes_the_order(tmp_path):
    assert epoch_order(trainer(tmp_path, seed=1)) != epoch_order(trainer(tmp_path, seed=2))


def test_data_seed_takes_precedence_over_seed(tmp_path):
    with_data_seed = epoch_order(trainer(tmp_path, seed=1, data_seed=5))
    assert with_data_seed == epoch_order(trainer(tmp_path, seed=2, data_seed=5))
    assert with_data_seed == epoch_order(trainer(tmp_path, seed=5))
    assert with_data_seed != epoch_order(trainer(tmp_path, seed=1, data_seed=6))


@pytest.mark.parametrize("drop_last", [True, False])
def test_dataloader_drop_last_is_honoured(tmp_path, drop_last):
    # 101 samples, 8 per step: 12 full steps and 5 left over.
    loader, sampler = sampler_of(trainer(tmp_path, dataloader_drop_last=drop_last))
    seen = [i for batch in sampler for i in batch]
    assert len(seen) == len(set(seen))
    if drop_last:
        assert sampler.steps_per_epoch == 12 and len(seen) == 96
    else:
        assert sampler.steps_per_epoch == 13 and sorted(seen) == list(range(NUM_SAMPLES))
    assert len(loader) == 2 * sampler.steps_per_epoch


def test_lengths_are_measured_by_a_scan_without_a_length_column(tmp_path):
    dataset = TokenDataset(scaled_lengths(NUM_SAMPLES))
    _, sampler = sampler_of(trainer(tmp_path, dataset=dataset))
    assert dataset.row_reads == NUM_SAMPLES
    assert plans_like(sampler, dataset.lengths)


def test_a_precomputed_length_column_is_used_without_a_scan(tmp_path):
    dataset = ColumnTokenDataset(scaled_lengths(NUM_SAMPLES))
    _, sampler = sampler_of(trainer(tmp_path, dataset=dataset))
    assert dataset.row_reads == 0
    assert plans_like(sampler, dataset.lengths)


def test_length_column_name_is_honoured(tmp_path):
    dataset = ColumnTokenDataset(scaled_lengths(NUM_SAMPLES))
    sampler_of(trainer(tmp_path, dataset=dataset, length_column_name="n_tokens"))
    assert dataset.row_reads == NUM_SAMPLES  # no "n_tokens" column: measured by a scan


def test_length_column_of_a_datasets_dataset_is_read_before_the_columns_are_pruned(tmp_path):
    datasets = pytest.importorskip("datasets")
    real = scaled_lengths(NUM_SAMPLES)
    # A "length" column that disagrees with the rows: only reading it can yield these values.
    claimed = real + 1 + np.arange(NUM_SAMPLES) % 5
    table = datasets.Dataset.from_dict({
        "input_ids": [tokens(i, int(length)) for i, length in enumerate(real)],
        "length": claimed.tolist()})
    run = trainer(tmp_path, dataset=table, remove_unused_columns=True)
    loader, sampler = sampler_of(run)
    assert plans_like(sampler, claimed) and not plans_like(sampler, real)
    assert "length" not in loader.dataset.column_names  # pruned afterwards, as the Trainer does
    assert set(next(iter(loader))) == {"input_ids", "attention_mask", "labels"}


def test_rebalance_options_reach_the_sampler(tmp_path):
    options = RebalanceOptions(alpha=0.002, intercept=5.0, max_tokens=400, packed=False)
    _, sampler = sampler_of(trainer(tmp_path, options=options))
    assert plans_like(sampler, scaled_lengths(NUM_SAMPLES), alpha=0.002, intercept=5.0,
                      max_tokens=400)
    assert not plans_like(sampler, scaled_lengths(NUM_SAMPLES))
    for step in range(sampler.steps_per_epoch):
        assert sampler.plan(step).max_padded_tokens <= 400


def test_rebalance_options_must_be_the_dataclass(tmp_path):
    with pytest.raises(TypeError, match="RebalanceOptions"):
        trainer(tmp_path, options={"max_tokens": 400})


def test_an_iterable_dataset_is_refused(tmp_path):
    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter([{"input_ids": [1, 2, 3]}])

    # max_steps: else the Trainer itself refuses a dataset without __len__, with another message.
    with pytest.raises(ValueError, match="needs a map-style training dataset.*IterableDataset"):
        trainer(tmp_path, dataset=Stream(), max_steps=10)


def test_the_mixin_must_come_before_the_trainer():
    class Rebalanced(BatchRebalanceMixin, Trainer):
        pass

    assert Rebalanced.get_train_dataloader is BatchRebalanceMixin.get_train_dataloader
    with pytest.raises(TypeError, match="put BatchRebalanceMixin first"):
        class Misordered(Trainer, BatchRebalanceMixin):
            pass


class NoLossKwargs(torch.nn.Module):
    """A model whose forward takes no **kwargs: the Trainer cannot pass num_items_in_batch."""

    def __init__(self):
        super().__init__()
        self.inner = tiny_gpt2()

    def forward(self, input_ids, attention_mask=None, labels=None):
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, labels=labels)


@pytest.mark.parametrize("model_factory, warns", [(NoLossKwargs, True), (tiny_gpt2, False)])
def test_warns_when_the_loss_cannot_be_normalised_by_token_count(tmp_path, caplog, model_factory,
                                                                 warns):
    run = trainer(tmp_path, model=model_factory())
    with caplog.at_level(logging.WARNING, logger="brs.integrations.transformers"):
        run.get_train_dataloader()
    warned = any("num_items_in_batch" in record.getMessage() for record in caplog.records)
    assert warned == warns


def test_the_callback_sets_the_epoch_from_the_global_step():
    sampler = BatchRebalanceSampler(scaled_lengths(NUM_SAMPLES), per_device_batch_size=4,
                                    grad_accum=2, dp_size=1, rank=0, drop_last=True)
    callback = RebalanceEpochCallback()
    callback.bind(sampler)
    for global_step, epoch in [(0, 0), (11, 0), (12, 1), (40, 3)]:  # 101 // 8 = 12 steps/epoch
        callback.on_epoch_begin(None, types.SimpleNamespace(global_step=global_step), None)
        assert sampler.epoch == epoch


def test_the_callback_finds_the_sampler_under_the_train_dataloader(tmp_path):
    loader, sampler = sampler_of(trainer(tmp_path))
    callback = RebalanceEpochCallback()  # as restore_callback_states_from_checkpoint makes it
    callback.on_epoch_begin(None, types.SimpleNamespace(global_step=2 * sampler.steps_per_epoch),
                            None, train_dataloader=loader)
    assert sampler.epoch == 2
