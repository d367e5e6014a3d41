"""Integrations read the collator's pad_to_multiple_of: the Trainer trains with
DataCollatorForLanguageModeling(pad_to_multiple_of=64) under a max_tokens that binds, and every
collated input_ids holds at most max_tokens tokens and exactly the plan's padded tokens.
accelerate's prepare_dataloader and a sampler given its own rounding are checked too."""

import logging

import pytest
import torch
from accelerate import Accelerator
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from transformers import (DataCollatorForLanguageModeling, PreTrainedTokenizerFast,
                          TrainingArguments)

from _support import VOCAB, TokenDataset, scaled_lengths, tiny_gpt2
from brs import BatchRebalanceSampler
from brs.integrations._loader import pad_to_multiple_of
from brs.integrations._loader import find_rebalance_sampler
from brs.integrations.accelerate import prepare_dataloader
from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions

MAX_TOKENS = 512
MULTIPLE = 64


def tokenizer():
    vocab = {str(i): i for i in range(VOCAB)}
    return PreTrainedTokenizerFast(tokenizer_object=Tokenizer(WordLevel(vocab, unk_token="1")),
                                   pad_token="0", eos_token=str(VOCAB - 1))


class Recording:
    """Wraps a collator (as the Trainer's RemoveColumnsCollator does) and records each batch's
    input_ids size."""

    def __init__(self, data_collator):
        self.data_collator = data_collator
        self.sizes = []

    def __call__(self, rows):
        batch = self.data_collator([{"input_ids": row["input_ids"]} for row in rows])
        self.sizes.append(batch["input_ids"].numel())
        return batch


def test_trainer_plans_the_tensors_the_collator_builds(tmp_path, caplog):
    lengths = scaled_lengths(160)
    collator = Recording(DataCollatorForLanguageModeling(tokenizer(), mlm=False,
                                                         pad_to_multiple_of=MULTIPLE))
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=6,
                             gradient_accumulation_steps=2, max_steps=6, report_to="none",
                             use_cpu=True, remove_unused_columns=False, disable_tqdm=True,
                             save_strategy="no", data_seed=3)
    with caplog.at_level(logging.INFO, logger="brs"):  # said when the Trainer is built
        trainer = BatchRebalanceTrainer(model=tiny_gpt2(), args=args,
                                        train_dataset=TokenDataset(lengths),
                                        data_collator=collator,
                                        rebalance_options=RebalanceOptions(max_tokens=MAX_TOKENS))
        trainer.train()
    assert "pads micro-batches to a multiple of 64" in caplog.text
    planned = find_rebalance_sampler(trainer.get_train_dataloader())
    assert planned.pad_to_multiple_of == MULTIPLE
    expected = [mb.padded_tokens for step in range(6)
                for mb in planned.plan(step).micro_batches[0]]
    # the loader may have collated the next micro-batch ahead when training stopped
    assert collator.sizes[:len(expected)] == expected and len(collator.sizes) <= len(expected) + 2
    assert max(collator.sizes) <= MAX_TOKENS
    # without the rounding, the plan would have built tensors above the cap
    unrounded = planned.with_options(pad_to_multiple_of=None)
    built = [len(mb.indices) * -(-max(lengths[i] for i in mb.indices) // MULTIPLE) * MULTIPLE
             for step in range(unrounded.steps_per_epoch)
             for mb in unrounded.plan(step).micro_batches[0]]
    assert max(built) > MAX_TOKENS


def test_accelerate_takes_the_collators_rounding_unless_given():
    lengths = scaled_lengths(96)
    collator = DataCollatorForLanguageModeling(tokenizer(), mlm=False, pad_to_multiple_of=32)
    for given, expected in ((None, 32), (8, 8)):
        sampler = BatchRebalanceSampler(lengths, per_device_batch_size=4, dp_size=1, rank=0,
                                        pad_to_multiple_of=given)
        loader = torch.utils.data.DataLoader(TokenDataset(lengths), batch_sampler=sampler,
                                             collate_fn=collator)
        prepare_dataloader(Accelerator(cpu=True), loader)
        assert sampler.pad_to_multiple_of == expected


def test_the_collator_is_found_under_wrappers():
    import functools

    inner = DataCollatorForLanguageModeling(tokenizer(), mlm=False, pad_to_multiple_of=16)
    assert pad_to_multiple_of(Recording(inner)) == 16
    assert pad_to_multiple_of(functools.partial(inner)) == 16
    assert pad_to_multiple_of(DataCollatorForLanguageModeling(tokenizer(), mlm=False)) is None
    assert pad_to_multiple_of(lambda rows: rows) is None


def test_fill_unset_keeps_what_the_user_gave():
    sampler = BatchRebalanceSampler([10] * 16, per_device_batch_size=2, dp_size=2, rank=0,
                                    pad_to_multiple_of=8)
    assert sampler.fill_unset(pad_to_multiple_of=64, seed=5) == ["seed"]
    assert sampler.pad_to_multiple_of == 8 and sampler.seed == 5
    with pytest.raises(TypeError, match="option keywords"):
        sampler.fill_unset(colour=1)
