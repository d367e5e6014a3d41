"""RebalanceOptions(max_shapes=8, warmup=True): a real Trainer run whose collator pads to the
longest sample trains only shapes of the vocabulary (the tensors the model receives, recorded by
a forward hook), after running each vocabulary shape once; accelerate's prepare_dataloader wraps
the collator the same way; max_shapes="auto" prices the Trainer's run."""

import logging

import pytest
import torch
from accelerate import Accelerator
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from transformers import (DataCollatorForLanguageModeling, PreTrainedTokenizerFast,
                          TrainingArguments)

from _support import VOCAB, TokenDataset, pad_collate, scaled_lengths, tiny_gpt2
from brs import BatchRebalanceSampler, PadToPlan
from brs.integrations._loader import find_rebalance_sampler
from brs.integrations.accelerate import prepare_dataloader
from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions

MAX_SHAPES = 8


class Longest:
    """transformers' LM collator, padding to the longest sample; drops sample_idx."""

    def __init__(self):
        vocab = {str(i): i for i in range(VOCAB)}
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=Tokenizer(WordLevel(vocab, unk_token="1")), pad_token="0",
            eos_token=str(VOCAB - 1))
        self.data_collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)

    def __call__(self, rows):
        return self.data_collator([{"input_ids": row["input_ids"]} for row in rows])


def test_trainer_trains_only_vocabulary_shapes_after_warming_each(tmp_path, caplog):
    lengths = scaled_lengths(160)
    model = tiny_gpt2()
    seen = []
    model.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(tuple(kwargs["input_ids"].shape)),
        with_kwargs=True)
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4,
                             gradient_accumulation_steps=2, max_steps=6, report_to="none",
                             use_cpu=True, remove_unused_columns=False, disable_tqdm=True,
                             save_strategy="no", data_seed=3)
    trainer = BatchRebalanceTrainer(
        model=model, args=args, train_dataset=TokenDataset(lengths), data_collator=Longest(),
        rebalance_options=RebalanceOptions(max_shapes=MAX_SHAPES, warmup=True))
    with caplog.at_level(logging.INFO, logger="brs"):
        trainer.train()
    assert "brs.PadToPlan" in caplog.text and "max_shapes=8" in caplog.text
    sampler = find_rebalance_sampler(trainer.get_train_dataloader())  # the one trained on
    assert sampler.max_shapes == MAX_SHAPES and sampler.epoch == 0
    vocabulary = sampler.shape_vocabulary()
    assert len(vocabulary) <= MAX_SHAPES
    assert seen[:len(vocabulary)] == vocabulary  # the warmup, in the vocabulary's order
    trained = seen[len(vocabulary):]
    assert len(trained) == 6 * 2
    assert set(trained) <= set(vocabulary)
    # the plan's shapes, micro-batch by micro-batch, not the longest samples'
    planned = [(mb.num_samples, mb.padded_length)
               for step in range(6) for mb in sampler.plan(step).micro_batches[0]]
    assert trained == planned
    longest = [max(lengths[i] for i in mb.indices)
               for step in range(6) for mb in sampler.plan(step).micro_batches[0]]
    assert any(length > top for (_, length), top in zip(trained, longest))  # padding was added


def test_trainer_auto_max_shapes_prices_the_run_of_max_steps(tmp_path):
    """RebalanceOptions(max_shapes="auto") with a calibrated cost model: the sampler trained on
    has the count whose modelled run of max_steps steps is least."""
    from brs import CostModel

    model = tiny_gpt2()
    calibrated = CostModel(alpha=2e-4, intercept=300.0, source="calibrated",
                           seconds_per_unit=1e-6, first_shape_seconds=0.05)
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4,
                             gradient_accumulation_steps=2, max_steps=3, report_to="none",
                             use_cpu=True, remove_unused_columns=False, disable_tqdm=True,
                             save_strategy="no", data_seed=3)
    trainer = BatchRebalanceTrainer(
        model=model, args=args, train_dataset=TokenDataset(scaled_lengths(160)),
        data_collator=Longest(),
        rebalance_options=RebalanceOptions(max_shapes="auto", cost_model=calibrated))
    trainer.train()
    sampler = find_rebalance_sampler(trainer.get_train_dataloader())
    table = sampler.max_shapes_choice
    for row in table:  # priced for the 3 steps of the run
        assert row["run_seconds"] == pytest.approx(3 * row["step_seconds"] + 0.05 * row["shapes"])
    assert sampler.max_shapes == min(table, key=lambda row: row["run_seconds"])["max_shapes"]


def test_rebalance_options_check_max_shapes_and_warmup():
    with pytest.raises(ValueError, match="max_shapes"):
        RebalanceOptions(max_shapes=-1)
    with pytest.raises(TypeError, match="warmup"):
        RebalanceOptions(warmup="yes")


def test_accelerate_wraps_the_collator_when_max_shapes_is_set(caplog):
    lengths = scaled_lengths(96)
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=1, seed=2,
                                    max_shapes=4)
    loader = torch.utils.data.DataLoader(TokenDataset(lengths), batch_sampler=sampler,
                                         collate_fn=pad_collate)
    with caplog.at_level(logging.INFO, logger="brs"):
        prepared = prepare_dataloader(Accelerator(cpu=True), loader)
    assert isinstance(prepared.collate_fn, PadToPlan)
    vocabulary = set(sampler.shape_vocabulary())
    shapes = [tuple(batch["input_ids"].shape) for batch in prepared]
    assert len(shapes) == len(sampler) and set(shapes) <= vocabulary
    assert [(mb.num_samples, mb.padded_length) for step in range(sampler.steps_per_epoch)
            for mb in sampler.plan(step).micro_batches[0]] == shapes
    unbounded = BatchRebalanceSampler(lengths, per_device_batch_size=4, seed=2)
    plain = prepare_dataloader(Accelerator(cpu=True), torch.utils.data.DataLoader(
        TokenDataset(lengths), batch_sampler=unbounded, collate_fn=pad_collate))
    assert plain.collate_fn is pad_collate


def test_lightning_trains_the_planned_shapes(tmp_path, caplog):
    pytest.importorskip("lightning")
    import _lightning_app as app

    class ShapedLM(app.TinyLM):
        def train_dataloader(self):
            self.sampler = BatchRebalanceSampler(
                scaled_lengths(app.NUM_SAMPLES), per_device_batch_size=self.per_device,
                grad_accum=app.GRAD_ACCUM, seed=app.SEED, max_shapes=4)
            return torch.utils.data.DataLoader(
                TokenDataset(scaled_lengths(app.NUM_SAMPLES)),
                batch_sampler=app.LightningBatchSampler(self.sampler), collate_fn=pad_collate)

        def training_step(self, batch, batch_idx):
            self.shapes.append(tuple(batch["input_ids"].shape))
            return super().training_step(batch, batch_idx)

    module = ShapedLM(4)
    module.shapes = []
    with caplog.at_level(logging.INFO, logger="brs"):
        app.trainer(tmp_path, max_epochs=1).fit(module)
    assert "brs.PadToPlan" in caplog.text
    sampler = module.sampler
    assert [(mb.num_samples, mb.padded_length) for step in range(sampler.steps_per_epoch)
            for mb in sampler.plan(step, epoch=0).micro_batches[0]] == module.shapes
    assert set(module.shapes) <= set(sampler.shape_vocabulary())
    lengths = scaled_lengths(app.NUM_SAMPLES)
    assert any(mb.padded_length > max(lengths[i] for i in mb.indices)
               for step in range(sampler.steps_per_epoch)
               for mb in sampler.plan(step, epoch=0).micro_batches[0])  # padding was added
