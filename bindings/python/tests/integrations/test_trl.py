"""TRL's SFTTrainer with BatchRebalanceMixin (docs/trainer.md's recipe), trained for real.

A one-layer GPT-2 and a 32-sample pre-tokenised dataset built here; per-device batch 4,
gradient accumulation 2, one rank, 2 optimizer steps. Padded training plans padded costs;
padding_free=True and packing=True make brs plan packed costs on its own (and log it), and
the trained packed micro-batches are the packed plan's, balanced in tokens.
"""

import logging

import pytest

trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

from tokenizers import Tokenizer  # noqa: E402
from tokenizers.models import WordLevel  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

from _support import VOCAB, scaled_lengths, tiny_gpt2, tokens  # noqa: E402
from brs import BatchRebalanceSampler  # noqa: E402
from brs.integrations.accelerate import find_rebalance_sampler  # noqa: E402
from brs.integrations.transformers import BatchRebalanceMixin  # noqa: E402

NUM_SAMPLES = 32
STEPS = 2


class RebalancedSFTTrainer(BatchRebalanceMixin, trl.SFTTrainer):
    """The recipe, plus a record of the tokens of every micro-batch trained."""

    def training_step(self, model, inputs, num_items_in_batch=None):
        self.trained.append({"step": self.state.global_step,
                             "width": int(inputs["input_ids"].shape[-1]),
                             "rows": int(inputs["input_ids"].shape[0])})
        return super().training_step(model, inputs, num_items_in_batch)


def tokenizer():
    vocab = {str(i): i for i in range(VOCAB)}
    return PreTrainedTokenizerFast(tokenizer_object=Tokenizer(WordLevel(vocab, unk_token="1")),
                                   pad_token="0", eos_token=str(VOCAB - 1))


def dataset():
    lengths = scaled_lengths(NUM_SAMPLES)
    return datasets.Dataset.from_dict({"input_ids": [tokens(i, int(n))
                                                     for i, n in enumerate(lengths)]})


def train(tmp_path, **config):
    args = trl.SFTConfig(output_dir=str(tmp_path), per_device_train_batch_size=4,
                         gradient_accumulation_steps=2, max_steps=STEPS, learning_rate=1e-3,
                         logging_steps=1, report_to="none", use_cpu=True, seed=3,
                         save_strategy="no", disable_tqdm=True, **{"max_length": None, **config})
    trainer = RebalancedSFTTrainer(model=tiny_gpt2(), args=args, train_dataset=dataset(),
                                   processing_class=tokenizer())
    trainer.trained = []
    trainer.train()
    return trainer


def spread(micro_batches, lengths):
    """Tokens of the fullest packed micro-batch over those of the emptiest."""
    tokens = [sum(int(lengths[i]) for i in mb.indices) for mb in micro_batches]
    return max(tokens) / min(tokens)


@pytest.mark.parametrize("config", [{"padding_free": True},
                                    {"packing": True, "max_length": 64}],
                         ids=["padding_free", "packing"])
def test_padding_free_and_packing_plan_packed_costs(tmp_path, caplog, config):
    with caplog.at_level(logging.INFO, logger="brs.integrations.transformers"):
        trainer = train(tmp_path, **config)
    assert "plans packed costs" in caplog.text
    sampler = find_rebalance_sampler(trainer.get_train_dataloader())
    assert sampler.packed
    lengths = sampler.lengths
    # Padded planning under the same cost model as the Trainer's packed sampler.
    padded = BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=2, dp_size=1,
                                   rank=0, seed=3, drop_last=False, alpha=sampler.alpha,
                                   intercept=sampler.intercept)
    for step in range(STEPS):
        epoch, in_epoch = divmod(step, sampler.steps_per_epoch)
        plan = sampler.plan(in_epoch, epoch=epoch)
        widths = [entry["width"] for entry in trainer.trained if entry["step"] == step]
        # Each micro-batch trained is one packed row of the plan's tokens (sum of lengths).
        assert widths == [mb.padded_tokens for mb in plan.micro_batches[0]], step
        assert all(entry["rows"] == 1 for entry in trainer.trained)
        # Balance in tokens: the packed plan's costliest micro-batch is no costlier, in packed
        # cost, than the costliest of what padded planning would have fed the packer.
        padded_plan = padded.plan(in_epoch, epoch=epoch)
        assert sorted(i for mb in plan.micro_batches[0] for i in mb.indices) == \
            sorted(i for mb in padded_plan.micro_batches[0] for i in mb.indices)
    assert any(key.startswith("brs/") for key in trainer.state.log_history[0])


def test_packed_plan_balances_tokens_at_least_as_well_as_the_padded_split(tmp_path):
    trainer = train(tmp_path, padding_free=True)
    sampler = find_rebalance_sampler(trainer.get_train_dataloader())
    lengths = sampler.lengths
    padded = BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=2, dp_size=1,
                                   rank=0, seed=3, drop_last=False, alpha=sampler.alpha,
                                   intercept=sampler.intercept)
    for step in range(STEPS):
        epoch, in_epoch = divmod(step, sampler.steps_per_epoch)
        assert spread(sampler.plan(in_epoch, epoch=epoch).micro_batches[0], lengths) <= \
            spread(padded.plan(in_epoch, epoch=epoch).micro_batches[0], lengths), step


def test_padded_sft_plans_padded_costs(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="brs.integrations.transformers"):
        trainer = train(tmp_path)
    assert "plans packed costs" not in caplog.text
    sampler = find_rebalance_sampler(trainer.get_train_dataloader())
    assert not sampler.packed
    for step in range(STEPS):
        plan = sampler.plan(step, epoch=0)
        shapes = [(entry["rows"], entry["width"]) for entry in trainer.trained
                  if entry["step"] == step]
        assert shapes == [(mb.num_samples, mb.padded_tokens // mb.num_samples)
                          for mb in plan.micro_batches[0]], step
