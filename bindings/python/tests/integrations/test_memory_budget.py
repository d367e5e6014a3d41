"""max_tokens derived from a memory budget when the user gives no cap: RebalanceOptions and
brs.integrations.accelerate.device_max_tokens (brs/integrations/_memory_budget.py). On CPU
nothing is derived by default; a given budget is planned to on any device."""

import pytest
from transformers import TrainingArguments

from _support import TokenDataset, pad_collate, scaled_lengths, tiny_gpt2
from brs import CostModel
from brs.integrations.accelerate import device_max_tokens, find_rebalance_sampler
from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions

LENGTHS = scaled_lengths(101)
MiB = 2**20
GiB = 2**30


def sampler_of(tmp_path, options):
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4,
                             gradient_accumulation_steps=2, report_to="none", use_cpu=True,
                             seed=3, remove_unused_columns=False, disable_tqdm=True)
    trainer = BatchRebalanceTrainer(model=tiny_gpt2(), args=args,
                                    train_dataset=TokenDataset(LENGTHS),
                                    data_collator=pad_collate, rebalance_options=options)
    return find_rebalance_sampler(trainer.get_train_dataloader())


def test_cpu_default_derives_no_cap(tmp_path):
    assert device_max_tokens(tiny_gpt2(), LENGTHS) is None
    assert not sampler_of(tmp_path, RebalanceOptions()).max_tokens  # 0: no cap


def test_a_given_budget_is_planned_to_and_no_micro_batch_exceeds_it(tmp_path):
    expected = device_max_tokens(tiny_gpt2(), LENGTHS, memory_budget="1MiB")
    assert expected is not None and expected >= max(LENGTHS)
    sampler = sampler_of(tmp_path, RebalanceOptions(memory_budget="1MiB"))
    assert sampler.max_tokens == expected
    for micro_batch in sampler:
        assert len(micro_batch) * max(LENGTHS[i] for i in micro_batch) <= expected


def test_more_budget_buys_tokens_at_the_memory_models_rate():
    model = tiny_gpt2()
    per_token = CostModel.from_config(model.config).memory["activation_bytes_per_token"]
    small = device_max_tokens(model, LENGTHS, memory_budget=MiB)
    large = device_max_tokens(model, LENGTHS, memory_budget=3 * MiB)
    assert abs((large - small) - 2 * MiB / per_token) <= 1


def test_a_calibrated_memory_fit_is_used_before_the_config():
    model = tiny_gpt2()
    fitted = CostModel(0.002, memory={"base_bytes": 1000.0, "bytes_per_token": 500.0,
                                      "bytes_per_token_length": 2.0})
    per_token = 500.0 + 2.0 * int(max(LENGTHS))
    small = device_max_tokens(model, LENGTHS, cost_model=fitted, memory_budget=MiB)
    large = device_max_tokens(model, LENGTHS, cost_model=fitted, memory_budget=2 * MiB)
    assert abs((large - small) - MiB / per_token) <= 1


def test_a_cost_models_own_cap_and_user_caps_win(tmp_path):
    capped = CostModel(0.002, max_tokens=4096)
    assert device_max_tokens(tiny_gpt2(), LENGTHS, cost_model=capped, memory_budget=MiB) == 4096
    sampler = sampler_of(tmp_path, RebalanceOptions(max_tokens=512, memory_budget="1MiB"))
    assert sampler.max_tokens == 512


def on_a_fake_cuda_device(monkeypatch, free, total, reserved):
    """The model reads as on cuda:0, whose memory torch reports as given (no GPU here)."""
    import torch
    from brs.integrations import _memory_budget

    monkeypatch.setattr(_memory_budget, "_device_of", lambda model: torch.device("cuda", 0))
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (free, total))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: reserved)


def test_auto_on_cuda_is_free_memory_plus_the_pool_less_a_margin(monkeypatch, tmp_path):
    on_a_fake_cuda_device(monkeypatch, free=3 * GiB, total=16 * GiB, reserved=GiB // 2)
    budget = 3 * GiB + GiB // 2 - GiB  # the margin: max(1 GiB, 5% of 16 GiB)
    expected = device_max_tokens(tiny_gpt2(), LENGTHS, memory_budget=budget)
    assert device_max_tokens(tiny_gpt2(), LENGTHS) == expected
    assert sampler_of(tmp_path, RebalanceOptions()).max_tokens == expected
    assert not sampler_of(tmp_path, RebalanceOptions(memory_budget=None)).max_tokens


def test_auto_on_a_full_cuda_device_plans_without_a_cap(monkeypatch, tmp_path, caplog):
    on_a_fake_cuda_device(monkeypatch, free=GiB // 4, total=16 * GiB, reserved=0)
    with caplog.at_level("WARNING", logger="brs.integrations"):
        assert device_max_tokens(tiny_gpt2(), LENGTHS) is None
    assert "planning without a cap" in caplog.text


def test_none_turns_it_off(tmp_path):
    assert device_max_tokens(tiny_gpt2(), LENGTHS, memory_budget=None) is None
    assert not sampler_of(tmp_path, RebalanceOptions(memory_budget=None)).max_tokens


def test_a_budget_below_one_sample_is_refused_before_training(tmp_path):
    with pytest.raises(ValueError, match="raise memory_budget"):
        sampler_of(tmp_path, RebalanceOptions(memory_budget="64KiB"))


@pytest.mark.parametrize("bad, error", [("lots", ValueError), ("-1GiB", ValueError),
                                        (0, ValueError), (True, TypeError), ([1], TypeError)])
def test_bad_budgets_are_refused_at_construction(bad, error):
    with pytest.raises(error, match="memory_budget"):
        RebalanceOptions(memory_budget=bad)
    with pytest.raises(error, match="memory_budget"):
        device_max_tokens(tiny_gpt2(), LENGTHS, memory_budget=bad)
