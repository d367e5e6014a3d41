"""BatchRebalanceTrainer under torchrun --nproc_per_node=2 (gloo): coverage, order, resume.

The runs (run_trainer.py): 100 samples, per_device_train_batch_size 4, gradient accumulation 2,
2 ranks, so 16 samples and 7 optimizer steps per epoch (the last step holds the 4 remaining
samples, dataloader_drop_last=False), 2 epochs = 14 steps; checkpoints every 10 steps, so
checkpoint-10 lies inside epoch 1.
"""

import pytest
import torch

import run_trainer as cfg
from _support import TokenDataset, pad_collate, read_json, scaled_lengths, tiny_gpt2
from brs import BatchRebalanceSampler, CostModel

pytestmark = pytest.mark.distributed  # scripts/soak-distributed runs these

RANKS = 2
STEPS_PER_EPOCH = 7  # ceil(100 / (4 * 2 * 2))
STOP = cfg.SAVE_STEPS  # 10: epoch 1, step 3
# The Trainer plans with the analytic cost model of the model's config when given none.
TRAINER_COST_MODEL = CostModel.from_config(tiny_gpt2().config)
# Under DDP with gradient accumulation its sync="auto" plans for per-step sync (no_sync).
TRAINER_SYNC = "step"


def logs(run_dir):
    return {rank: read_json(run_dir / f"log-rank{rank}.json") for rank in range(RANKS)}


def planned(rank, epoch):
    """What rank ``rank`` must train in ``epoch``: its micro-batches of the sampler's plan."""
    sampler = BatchRebalanceSampler(scaled_lengths(cfg.NUM_SAMPLES),
                                    per_device_batch_size=cfg.PER_DEVICE, grad_accum=cfg.GRAD_ACCUM,
                                    dp_size=RANKS, rank=rank, seed=7, drop_last=False,
                                    cost_model=TRAINER_COST_MODEL, sync=TRAINER_SYNC)
    return [{"step": epoch * STEPS_PER_EPOCH + step, "indices": micro_batch.indices}
            for step in range(sampler.steps_per_epoch)
            for micro_batch in sampler.plan(step, epoch=epoch).micro_batches[rank]]


def in_epoch(log, epoch):
    first = epoch * STEPS_PER_EPOCH
    return [entry for entry in log if first <= entry["step"] < first + STEPS_PER_EPOCH]


def assert_same_weights(a, b):
    left, right = torch.load(a), torch.load(b)
    assert left.keys() == right.keys()
    different = [name for name in left if not torch.equal(left[name], right[name])]
    assert not different, f"weights differ: {different}"


@pytest.fixture(scope="module")
def full(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("full")
    torchrun("run_trainer.py", "--out", out)
    return out


@pytest.fixture(scope="module")
def stopped(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("stopped")
    torchrun("run_trainer.py", "--out", out, "--stop-at", STOP)
    return out


@pytest.fixture(scope="module")
def checkpoint(stopped):
    path = stopped / "checkpoints" / f"checkpoint-{STOP}"
    assert path.is_dir(), "the interrupted run wrote no checkpoint at its last step"
    return path


def test_every_sample_once_per_epoch_over_both_ranks(full):
    trained = logs(full)
    for epoch in range(cfg.EPOCHS):
        indices = sorted(i for rank in range(RANKS) for entry in in_epoch(trained[rank], epoch)
                         for i in entry["indices"])
        assert indices == list(range(cfg.NUM_SAMPLES)), f"epoch {epoch}"


def test_each_rank_trains_its_planned_micro_batches_in_order(full):
    trained = logs(full)
    for rank in range(RANKS):
        assert trained[rank] == planned(rank, 0) + planned(rank, 1), f"rank {rank}"


def test_epochs_are_reshuffled(full):
    trained = logs(full)
    for rank in range(RANKS):
        first = [entry["indices"] for entry in in_epoch(trained[rank], 0)]
        second = [entry["indices"] for entry in in_epoch(trained[rank], 1)]
        assert len(first) == len(second) == STEPS_PER_EPOCH * cfg.GRAD_ACCUM
        assert first != second
        assert sorted(map(sorted, first)) != sorted(map(sorted, second))


def test_global_step_and_sampler_epoch_at_the_end(full):
    for rank in range(RANKS):
        result = read_json(full / f"result-rank{rank}.json")
        assert result == {"global_step": cfg.EPOCHS * STEPS_PER_EPOCH, "world_size": RANKS,
                          "sampler_epoch": cfg.EPOCHS - 1}


@pytest.fixture(scope="module")
def resumed(tmp_path_factory, torchrun, checkpoint):
    out = tmp_path_factory.mktemp("resumed")
    torchrun("run_trainer.py", "--out", out, "--resume", checkpoint)
    return out


def test_interrupted_run_stopped_inside_epoch_1(stopped):
    for log in logs(stopped).values():
        assert log[-1]["step"] == STOP - 1 and STEPS_PER_EPOCH < STOP < 2 * STEPS_PER_EPOCH


def test_resume_trains_what_the_uninterrupted_run_trained(full, stopped, resumed):
    uninterrupted, before, after = logs(full), logs(stopped), logs(resumed)
    for rank in range(RANKS):
        assert before[rank] + after[rank] == uninterrupted[rank], f"rank {rank}"
        # Not a replay of epoch 0 at the same positions (upstream's failure, below).
        replay = [entry["indices"] for entry in planned(rank, 0)[-len(after[rank]):]]
        assert [entry["indices"] for entry in after[rank]] != replay


def test_resume_ends_with_the_uninterrupted_weights(full, resumed):
    assert_same_weights(full / "weights.pt", resumed / "weights.pt")
    assert read_json(resumed / "result-rank0.json")["global_step"] == 2 * STEPS_PER_EPOCH


def upstream_sampler_class():
    from transformers import trainer_pt_utils

    cls = getattr(trainer_pt_utils, "BatchRebalanceSampler", None)
    if cls is None:
        pytest.skip("this transformers has no trainer_pt_utils.BatchRebalanceSampler "
                    "(train_sampling_strategy='batch_rebalance'): nothing to compare")
    return cls


@pytest.fixture(scope="module")
def upstream_resumed(tmp_path_factory, torchrun, checkpoint):
    upstream_sampler_class()
    out = tmp_path_factory.mktemp("upstream_resumed")
    # The same checkpoint (weights, optimizer, global step 10), resumed by the plain Trainer
    # with train_sampling_strategy="batch_rebalance": only the data order matters here.
    torchrun("run_trainer.py", "--out", out, "--sampler", "upstream", "--resume", checkpoint)
    return out


def test_upstream_batch_rebalance_replays_epoch_0_after_resume(upstream_resumed):
    """Documents the upstream bug ours fixes: under DDP, set_epoch misses the sampler."""
    upstream = upstream_sampler_class()
    resumed_log = logs(upstream_resumed)
    for rank in range(RANKS):
        def order(epoch):
            sampler = upstream(lengths=scaled_lengths(cfg.NUM_SAMPLES).tolist(),
                               effective_batch_size=cfg.PER_DEVICE * cfg.GRAD_ACCUM * RANKS,
                               dp_size=RANKS, grad_accum=cfg.GRAD_ACCUM, rank=rank,
                               drop_last=False)
            sampler.set_epoch(epoch)
            return list(sampler)

        trained = [entry["indices"] for entry in resumed_log[rank]]
        assert trained, f"rank {rank} trained nothing after the resume"
        assert [entry["step"] for entry in resumed_log[rank]][0] == STOP
        print(f"rank {rank}: upstream trained after resuming in epoch 1: {trained[:2]} ...; "
              f"its epoch-1 order there: {order(1)[-len(trained):][:2]} ...")
        assert trained == order(0)[-len(trained):], "upstream no longer replays epoch 0"
        assert trained != order(1)[-len(trained):]


def test_checkpoints_hold_the_plan_fingerprint(checkpoint):
    state = read_json(checkpoint / "trainer_state.json")
    saved = state["stateful_callbacks"]["RebalanceEpochCallback"]["attributes"]
    sampler = BatchRebalanceSampler(scaled_lengths(cfg.NUM_SAMPLES),
                                    per_device_batch_size=cfg.PER_DEVICE, grad_accum=cfg.GRAD_ACCUM,
                                    dp_size=RANKS, rank=0, seed=7, drop_last=False,
                                    cost_model=TRAINER_COST_MODEL, sync=TRAINER_SYNC)
    assert saved == {"fingerprint": sampler.fingerprint,
                     "stream_fingerprint": sampler.stream_fingerprint, "dp_size": RANKS,
                     "grad_accum": cfg.GRAD_ACCUM, "per_device_batch_size": cfg.PER_DEVICE,
                     "seed": 7, "drop_last": False, "sync": TRAINER_SYNC}


@pytest.mark.parametrize("restore_callbacks", [False, True])
def test_resume_with_another_world_size_is_refused(checkpoint, tmp_path, restore_callbacks):
    """The checkpoint was written by 2 processes; this (pytest) process is a world of 1."""
    from brs.integrations.transformers import BatchRebalanceTrainer

    args = cfg.training_arguments(str(tmp_path), "ours", ddp_backend=None,
                                  restore_callback_states_from_checkpoint=restore_callbacks)
    trainer = BatchRebalanceTrainer(model=tiny_gpt2(), args=args, data_collator=pad_collate,
                                    train_dataset=TokenDataset(scaled_lengths(cfg.NUM_SAMPLES)))
    with pytest.raises(ValueError, match=r"world size \(data-parallel processes\) 2 -> 1"):
        trainer.train(resume_from_checkpoint=str(checkpoint))
