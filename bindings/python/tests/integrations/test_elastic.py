"""Elastic resume: a sampler state saved on R ranks resumes on R' ranks, same global batch.

Under torchrun (gloo), over epoch 0 of 64 samples, global batch 16 (4 optimizer steps):
2 ranks train steps 0-1 and save; 1 rank loads rank 0's state, trains step 2 and saves; 2
ranks load that and finish the epoch. Every sample is trained exactly once, and each step
trains the samples of that step of the uninterrupted plan. Errors are checked in-process.
Then the Trainer: run_trainer.py's checkpoint of 2 processes (inside epoch 1) resumed in this
process with twice the gradient accumulation.
"""

import logging

import pytest

import run_elastic as cfg
from _support import read_json, scaled_lengths
from brs import BatchRebalanceSampler, CostModel

pytestmark = pytest.mark.distributed  # scripts/soak-distributed runs these


def leg(out, name, ranks):
    return [read_json(out / f"{name}-rank{rank}.json") for rank in range(ranks)]


@pytest.fixture(scope="module")
def legs(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("elastic")
    torchrun("run_elastic.py", "--out", out, "--name", "two", "--stop-at", 2, nproc=2)
    shrunk = torchrun("run_elastic.py", "--out", out, "--name", "one", "--stop-at", 3,
                      "--load", out / "two-rank0.json", nproc=1, ranks_stderr=True)
    torchrun("run_elastic.py", "--out", out, "--name", "back", "--load", out / "one-rank0.json",
             nproc=2)
    return {"two": leg(out, "two", 2), "one": leg(out, "one", 1), "back": leg(out, "back", 2),
            "shrunk_stderr": shrunk}


def batches(legs):
    return [batch for name in ("two", "one", "back") for rank in legs[name]
            for batch in rank["batches"]]


def test_no_sample_lost_or_repeated_over_the_epoch(legs):
    trained = sorted(i for batch in batches(legs) for i in batch["indices"])
    assert trained == list(range(cfg.NUM_SAMPLES))


def test_each_step_trains_the_samples_of_that_step(legs):
    reference = BatchRebalanceSampler(scaled_lengths(cfg.NUM_SAMPLES), per_device_batch_size=2,
                                      grad_accum=8, dp_size=1, rank=0, seed=5)
    for step, expected_legs in enumerate([("two",), ("two",), ("one",), ("back",)]):
        samples = sorted(i for name in expected_legs for rank in legs[name]
                         for batch in rank["batches"] if batch["step"] == step
                         for i in batch["indices"])
        planned = sorted(i for mb in reference.plan(step).micro_batches[0] for i in mb.indices)
        assert samples == planned, step


def test_the_change_of_ranks_is_logged(legs):
    assert [rank["dp_size"] for rank in legs["one"]] == [1]
    assert "resuming a state saved with dp_size=2" in legs["shrunk_stderr"]
    assert legs["back"][0]["state"]["step"] == 4  # the end of the epoch


def sampler(dp_size, rank=0, per_device=2, grad_accum=None, seed=5):
    grad_accum = grad_accum or cfg.GLOBAL_BATCH // (per_device * dp_size)
    return BatchRebalanceSampler(scaled_lengths(cfg.NUM_SAMPLES), per_device_batch_size=per_device,
                                 grad_accum=grad_accum, dp_size=dp_size, rank=rank, seed=seed)


def test_in_process_resume_logs_the_change(caplog):
    state = sampler(2).state_dict(consumed=4)  # step 1 done on 2 ranks (grad_accum 4)
    target = sampler(4, rank=3)
    with caplog.at_level(logging.WARNING, logger="brs"):
        target.load_state_dict(state)
    assert "dp_size=2, per_device_batch_size=2, grad_accum=4 on dp_size=4" in caplog.text
    assert list(target)[0] == target.plan(1).micro_batches[3][0].indices


def test_a_state_naming_its_split_by_option_names_resumes_too():
    """A state whose split is in an "options" dict (the library's names), not in its own keys."""
    state = sampler(2).state_dict(consumed=4)
    split = {"dp_size": state.pop("dp_size"), "batch_size": state.pop("per_device_batch_size"),
             "grad_accum": state.pop("grad_accum")}
    target = sampler(1)
    target.load_state_dict({**state, "options": split})
    assert list(target)[0] == target.plan(1).micro_batches[0][0].indices


def test_another_global_batch_is_refused_with_the_fix():
    state = sampler(2).state_dict(consumed=4)
    with pytest.raises(ValueError, match="global batch 16.*global batch 8.*e.g. grad_accum=8"):
        sampler(1, grad_accum=4).load_state_dict(state)


def test_a_position_inside_a_step_is_refused():
    state = sampler(2).state_dict(consumed=5)
    with pytest.raises(ValueError, match="inside optimizer step 1 \\(micro-step 1\\)"):
        sampler(1).load_state_dict(state)


def test_another_seed_is_still_a_fingerprint_mismatch():
    state = sampler(2).state_dict(consumed=4)
    with pytest.raises(ValueError, match="fingerprint"):
        sampler(1, seed=6).load_state_dict(state)


# -- the Trainer: a checkpoint of 2 processes resumed by 1 with the same global batch ----------

@pytest.fixture(scope="module")
def trainer_checkpoint(tmp_path_factory, torchrun):
    import run_trainer

    out = tmp_path_factory.mktemp("trainer-two-ranks")
    torchrun("run_trainer.py", "--out", out, "--stop-at", run_trainer.SAVE_STEPS)
    return out, out / "checkpoints" / f"checkpoint-{run_trainer.SAVE_STEPS}"


def test_trainer_resumes_two_processes_checkpoint_on_one(trainer_checkpoint, tmp_path, caplog):
    import run_trainer
    from _support import TokenDataset, pad_collate, tiny_gpt2

    out, checkpoint = trainer_checkpoint
    two_ranks = [entry for rank in range(2) for entry in read_json(out / f"log-rank{rank}.json")]
    # Same global batch 16 on one process: gradient accumulation 2 x 2 ranks -> 4 x 1.
    args = run_trainer.training_arguments(str(tmp_path), "ours", ddp_backend=None,
                                          gradient_accumulation_steps=2 * run_trainer.GRAD_ACCUM)
    dataset = TokenDataset(scaled_lengths(run_trainer.NUM_SAMPLES))
    trainer = run_trainer.OursTrainer(model=tiny_gpt2(), args=args, data_collator=pad_collate,
                                      train_dataset=dataset)
    with caplog.at_level(logging.WARNING, logger="brs"):
        trainer.train(resume_from_checkpoint=str(checkpoint))
    assert "resuming a state saved with dp_size=2" in caplog.text
    steps_per_epoch = 7  # ceil(100 / 16)
    reference = BatchRebalanceSampler(scaled_lengths(run_trainer.NUM_SAMPLES),
                                      per_device_batch_size=run_trainer.PER_DEVICE,
                                      grad_accum=2 * run_trainer.GRAD_ACCUM, dp_size=1, rank=0,
                                      seed=7, drop_last=False,
                                      # the Trainer plans with its model's analytic cost model
                                      cost_model=CostModel.from_config(trainer.model.config))
    resumed = trainer.index_log
    assert {entry["step"] for entry in resumed} == set(range(run_trainer.SAVE_STEPS,
                                                             2 * steps_per_epoch))
    for step in range(run_trainer.SAVE_STEPS, 2 * steps_per_epoch):
        trained = [entry["indices"] for entry in resumed if entry["step"] == step]
        planned = reference.plan(step - steps_per_epoch, epoch=1).micro_batches[0]
        assert trained == [mb.indices for mb in planned], step
    epoch_1 = [i for entry in two_ranks + resumed if entry["step"] >= steps_per_epoch
               for i in entry["indices"]]
    assert sorted(epoch_1) == list(range(run_trainer.NUM_SAMPLES))
