"""The brs/ metrics of every optimizer step reach the Trainer's log_history, from the plan.

40 samples, per-device batch 4, gradient accumulation 2, one rank: 5 steps per epoch; 6 steps
trained (into the second epoch), logging_steps 1 and then 3. The Lightning side is checked in
test_lightning.py (the CSV logger's rows).
"""

import pytest
from transformers import TrainingArguments

from _support import TokenDataset, pad_collate, scaled_lengths, tiny_gpt2
from brs import BatchRebalanceSampler, CostModel
from brs.integrations._metrics import MICRO_BATCHES, NAMES, PEAK_PADDED_TOKENS, REAL_TOKENS
from brs.integrations._metrics import MetricsWindow, plan_metrics
from brs.integrations.transformers import BatchRebalanceTrainer

NUM_SAMPLES = 40
STEPS = 6
STEPS_PER_EPOCH = 5


def train(tmp_path, logging_steps=1, **kwargs):
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4,
                             gradient_accumulation_steps=2, max_steps=STEPS, learning_rate=1e-3,
                             logging_steps=logging_steps, report_to="none", use_cpu=True, seed=3,
                             save_strategy="no", remove_unused_columns=False, disable_tqdm=True,
                             dataloader_drop_last=False)
    trainer = BatchRebalanceTrainer(model=tiny_gpt2(), args=args,
                                    train_dataset=TokenDataset(scaled_lengths(NUM_SAMPLES)),
                                    data_collator=pad_collate, **kwargs)
    trainer.train()
    return [entry for entry in trainer.state.log_history if "loss" in entry]


def plans():
    # The Trainer plans with its model's analytic cost model (CostModel.from_config).
    sampler = BatchRebalanceSampler(scaled_lengths(NUM_SAMPLES), per_device_batch_size=4,
                                    grad_accum=2, dp_size=1, rank=0, seed=3, drop_last=False,
                                    cost_model=CostModel.from_config(tiny_gpt2().config))
    return [sampler.plan(step % STEPS_PER_EPOCH, epoch=step // STEPS_PER_EPOCH)
            for step in range(STEPS)]


def test_every_step_logs_its_planned_metrics(tmp_path):
    logged = train(tmp_path)
    assert [entry["step"] for entry in logged] == list(range(1, STEPS + 1))
    for entry, plan in zip(logged, plans()):
        expected = plan_metrics(plan)
        assert {name: entry[name] for name in NAMES} == pytest.approx(expected), entry["step"]
    assert len({entry[REAL_TOKENS] for entry in logged}) > 1  # the steps differ


def test_a_log_every_three_steps_summarises_its_window(tmp_path):
    logged = train(tmp_path, logging_steps=3)
    all_plans = plans()
    for entry, window in zip(logged, (all_plans[:3], all_plans[3:])):
        assert entry[REAL_TOKENS] == pytest.approx(
            sum(plan.total_real_tokens for plan in window) / 3)
        assert entry[PEAK_PADDED_TOKENS] == max(plan.max_padded_tokens for plan in window)
        assert entry[MICRO_BATCHES] == 2


def test_metrics_off_with_one_option(tmp_path):
    logged = train(tmp_path, rebalance_metrics=False)
    assert logged and not any(key.startswith("brs/") for entry in logged for key in entry)


def test_window_of_one_plan_is_that_plans_metrics():
    plan = plans()[0]
    window = MetricsWindow()
    assert window.flush() == {}
    window.record(plan, "step_sync_time")
    metrics = window.flush()
    assert metrics == plan_metrics(plan, "step_sync_time")
    assert metrics["brs/step_time_over_bound"] >= 1.0
    assert metrics["brs/padding_efficiency"] == plan.total_real_tokens / plan.total_padded_tokens
