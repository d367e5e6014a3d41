"""Bad arguments to the integration helpers: prepare_dataloader, RebalanceOptions and the
Trainer mixin fail at once, naming the argument (recorded for docs/errors.md)."""

import pytest
from accelerate import Accelerator
from torch.utils.data import DataLoader

from _support import TokenDataset, pad_collate, scaled_lengths
from brs import BatchRebalanceSampler
from brs.integrations.accelerate import prepare_dataloader
from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions
from brs_testing import expect_error

LENGTHS = scaled_lengths(40)


def loader():
    sampler = BatchRebalanceSampler(LENGTHS, per_device_batch_size=2, dp_size=1, rank=0)
    return DataLoader(TokenDataset(LENGTHS), batch_sampler=sampler, collate_fn=pad_collate)


@pytest.mark.parametrize("accelerator, what", [(None, "None"), ("cpu", "'cpu'"),
                                               (object(), "object()")])
def test_prepare_dataloader_needs_an_accelerator(accelerator, what):
    expect_error("prepare_dataloader(accelerator, dataloader)", f"accelerator={what}", TypeError,
                 r"accelerator must be an accelerate\.Accelerator", prepare_dataloader,
                 accelerator, loader())


@pytest.mark.parametrize("dataloader, what, match", [
    (None, "None", r"expected a torch\.utils\.data\.DataLoader, got NoneType"),
    ([1, 2], "a list", r"got list"),
    (DataLoader(TokenDataset(LENGTHS), batch_size=4), "a DataLoader with batch_size=4",
     r"batch_sampler must be a brs\.BatchRebalanceSampler"),
])
def test_prepare_dataloader_needs_a_loader_over_a_brs_sampler(dataloader, what, match):
    expect_error("prepare_dataloader(accelerator, dataloader)", f"dataloader={what}", TypeError,
                 match, prepare_dataloader, Accelerator(cpu=True), dataloader)


@pytest.mark.parametrize("field, value, exception, match", [
    ("alpha", "0.1", TypeError, r"RebalanceOptions\.alpha must be a number; got '0\.1'"),
    ("alpha", float("nan"), ValueError, r"RebalanceOptions\.alpha must be a number, not NaN"),
    ("intercept", float("inf"), ValueError, r"RebalanceOptions\.intercept must be a finite"),
    ("max_tokens", 0, ValueError, r"RebalanceOptions\.max_tokens must be >= 1; got 0"),
    ("max_tokens", 512.0, TypeError, r"RebalanceOptions\.max_tokens must be an int"),
    ("packed", "yes", TypeError, r"RebalanceOptions\.packed must be True or False"),
    ("sync", "fastest", ValueError, r"RebalanceOptions\.sync must be 'auto' or a sync model"),
    ("sync", 1, TypeError, r"RebalanceOptions\.sync must be 'auto' or a sync model"),
    ("encoder_alpha", "big", TypeError, r"RebalanceOptions\.encoder_alpha must be a number"),
    ("encoder_intercept", float("nan"), ValueError,
     r"RebalanceOptions\.encoder_intercept must be a number, not NaN"),
    ("max_encoder_tokens", 0, ValueError,
     r"RebalanceOptions\.max_encoder_tokens must be >= 1; got 0"),
    ("max_encoder_tokens", 1.5, TypeError, r"RebalanceOptions\.max_encoder_tokens must be an int"),
    ("encoder_loads_column", 3, TypeError,
     r"RebalanceOptions\.encoder_loads_column must be a column name or None"),
])
def test_rebalance_options_are_checked_at_construction(field, value, exception, match):
    expect_error("RebalanceOptions(...)", f"{field}={value!r}", exception, match,
                 RebalanceOptions, **{field: value})


def test_the_trainer_refuses_options_of_another_type(tmp_path):
    from transformers import TrainingArguments

    from _support import tiny_gpt2

    args = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to="none")
    expect_error("BatchRebalanceTrainer(..., rebalance_options)", "rebalance_options={'alpha': 0}",
                 TypeError, r"rebalance_options must be a brs\.integrations\.transformers\."
                 r"RebalanceOptions, got dict", BatchRebalanceTrainer, model=tiny_gpt2(),
                 args=args, train_dataset=TokenDataset(LENGTHS), data_collator=pad_collate,
                 rebalance_options={"alpha": 0})


@pytest.mark.parametrize("arguments, options, match, not_named", [
    (dict(per_device_train_batch_size=0), None,
     r"^BatchRebalanceTrainer: TrainingArguments\.per_device_train_batch_size = 0 is out of range",
     "the library's batch_size"),
    (dict(per_device_train_batch_size=8, gradient_accumulation_steps=1),
     dict(max_tokens=70), r"raise gradient_accumulation_steps so that the world size \* "
     r"gradient_accumulation_steps >= \d+, or lower per_device_train_batch_size", "grad_accum"),
])
def test_the_trainer_names_its_own_arguments_when_it_is_built(tmp_path, arguments, options,
                                                               match, not_named):
    from transformers import TrainingArguments

    from _support import tiny_gpt2

    args = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to="none",
                             **arguments)
    rebalance = RebalanceOptions(**(options or {}))
    # refused by the constructor, before any train()
    with pytest.raises(ValueError, match=match) as refused:
        BatchRebalanceTrainer(model=tiny_gpt2(), args=args, train_dataset=TokenDataset(LENGTHS),
                              data_collator=pad_collate, rebalance_options=rebalance)
    message = str(refused.value)
    assert not_named not in message.replace("gradient_accumulation_steps", "")
    assert len(message) <= 400
    expect_error("BatchRebalanceTrainer(...)", ", ".join(f"{k}={v}" for k, v in arguments.items()),
                 ValueError, match, BatchRebalanceTrainer, model=tiny_gpt2(), args=args,
                 train_dataset=TokenDataset(LENGTHS), data_collator=pad_collate,
                 rebalance_options=rebalance)
