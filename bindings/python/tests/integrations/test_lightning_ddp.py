"""brs with lightning.Trainer(strategy="ddp") on 2 gloo processes under torchrun, 2 epochs.

Lightning's defaults (use_distributed_sampler=True), 40 samples, per-device batch 2,
accumulate_grad_batches 2, 2 ranks: 5 optimizer steps per epoch, the same global batch of 8 as
the one-device tests. Coverage and reshuffle per epoch, equal batch counts on both ranks, a
resume from a checkpoint inside the second epoch equal to the uninterrupted run, and a bare
BatchRebalanceSampler (no LightningBatchSampler, no RebalanceCallback) training the same batches,
with Lightning's sampler and without it.
"""

import pytest

pytest.importorskip("lightning")

import torch  # noqa: E402

import _lightning_app as app  # noqa: E402
import run_lightning  # noqa: E402
from _support import read_json  # noqa: E402

pytestmark = pytest.mark.distributed  # scripts/soak-distributed runs these

RANKS = 2
CALLBACK_SYNC = "step"
STEPS_PER_EPOCH = 5
STOP = 7  # epoch 1, step 2


def logs(run_dir):
    return {rank: read_json(run_dir / f"log-rank{rank}.json") for rank in range(RANKS)}


def planned(rank, epoch, sync=None):
    """Rank ``rank``'s micro-batches of ``epoch`` with ``sync`` (None: the library's default,
    which a bare sampler without RebalanceCallback keeps; the callback resolves sync="auto"
    under DDP with accumulation to CALLBACK_SYNC)."""
    sampler = app.rebalance_sampler(run_lightning.PER_DEVICE, dp_size=RANKS,
                                    rank=rank).with_options(sync=sync)
    return [mb.indices for step in range(sampler.steps_per_epoch)
            for mb in sampler.plan(step, epoch=epoch).micro_batches[rank]]


@pytest.fixture(scope="module")
def full(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("lightning-ddp-full")
    torchrun("run_lightning.py", "--out", out)
    return out


@pytest.fixture(scope="module")
def resumed(tmp_path_factory, torchrun):
    stopped = tmp_path_factory.mktemp("lightning-ddp-stopped")
    torchrun("run_lightning.py", "--out", stopped, "--stop-at", STOP)
    (checkpoint,) = (stopped / "ckpt").glob("*.ckpt")
    out = tmp_path_factory.mktemp("lightning-ddp-resumed")
    torchrun("run_lightning.py", "--out", out, "--resume", checkpoint)
    return out


def batches(log, epoch):
    return [entry["indices"] for entry in log if entry["epoch"] == epoch]


def test_ranks_train_their_plan_cover_every_sample_and_reshuffle(full):
    trained = logs(full)
    for epoch in range(app.EPOCHS):
        for rank in range(RANKS):
            assert batches(trained[rank], epoch) == planned(rank, epoch, CALLBACK_SYNC), (
                rank, epoch)
        union = sorted(i for rank in range(RANKS) for batch in batches(trained[rank], epoch)
                       for i in batch)
        assert union == list(range(app.NUM_SAMPLES)), f"epoch {epoch}"
    assert batches(trained[0], 1) != batches(trained[0], 0)


def test_both_ranks_train_the_same_number_of_batches(full):
    trained = logs(full)
    counts = {rank: len(trained[rank]) for rank in range(RANKS)}
    assert counts == {rank: 2 * STEPS_PER_EPOCH * app.GRAD_ACCUM for rank in range(RANKS)}


def test_ranks_come_from_the_strategy_and_metrics_are_logged(full):
    for rank in range(RANKS):
        result = read_json(full / f"result-rank{rank}.json")
        assert result["world_size"] == RANKS
        # Lightning's default path ran: it injected its sampler and re-created ours around it
        assert result["injected"] == "DistributedSampler"
        assert result["global_step"] == 2 * STEPS_PER_EPOCH
        assert result["metrics"]["brs/micro_batches"] == RANKS * app.GRAD_ACCUM


def test_use_distributed_sampler_false_trains_the_same_batches(full, tmp_path, torchrun):
    torchrun("run_lightning.py", "--out", tmp_path, "--no-distributed-sampler")
    assert logs(tmp_path) == logs(full)
    assert read_json(tmp_path / "result-rank0.json")["injected"] == "NoneType"


def test_resume_inside_the_second_epoch_equals_the_uninterrupted_run(full, resumed):
    uninterrupted, after = logs(full), logs(resumed)
    for rank in range(RANKS):
        expected = [entry for entry in uninterrupted[rank] if entry["step"] >= STOP]
        assert after[rank] == expected, f"rank {rank}"
    left, right = torch.load(full / "weights.pt"), torch.load(resumed / "weights.pt")
    assert [name for name in left if not torch.equal(left[name], right[name])] == []


@pytest.fixture(scope="module")
def bare(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("lightning-ddp-bare")
    torchrun("run_lightning.py", "--out", out, "--bare", "--no-callback")
    return out


def test_a_bare_sampler_under_lightnings_defaults_trains_the_plan_of_each_rank(bare):
    # Its plan (without RebalanceCallback nothing resolves sync="auto": the library's default),
    # each sample once per epoch, a new shuffle in epoch 1 (Lightning's own set_epoch reached it).
    trained = logs(bare)
    for epoch in range(app.EPOCHS):
        for rank in range(RANKS):
            assert batches(trained[rank], epoch) == planned(rank, epoch), (rank, epoch)
    assert batches(trained[0], 1) != batches(trained[0], 0)
    for rank in range(RANKS):
        result = read_json(bare / f"result-rank{rank}.json")
        # Lightning re-created the batch sampler around its DistributedSampler: the wrapper
        # holds the module's own sampler object, not a copy.
        assert (result["batch_sampler"], result["injected"]) == ("LightningBatchSampler",
                                                                 "DistributedSampler")
        assert result["same_sampler"] is True
        assert result["global_step"] == 2 * STEPS_PER_EPOCH


def test_a_bare_sampler_lightning_leaves_alone_reshuffles_each_epoch(tmp_path, torchrun):
    # use_distributed_sampler=False and no RebalanceCallback: the DataLoader's batch_sampler stays
    # the brs sampler itself, which Lightning's set_epoch reaches only through its .sampler.
    torchrun("run_lightning.py", "--out", tmp_path, "--bare", "--no-callback",
             "--no-distributed-sampler")
    trained = logs(tmp_path)
    for epoch in range(app.EPOCHS):
        for rank in range(RANKS):
            assert batches(trained[rank], epoch) == planned(rank, epoch), (rank, epoch)
        union = sorted(i for rank in range(RANKS) for batch in batches(trained[rank], epoch)
                       for i in batch)
        assert union == list(range(app.NUM_SAMPLES)), f"epoch {epoch}"
    assert batches(trained[0], 1) != batches(trained[0], 0)
    result = read_json(tmp_path / "result-rank0.json")
    assert (result["batch_sampler"], result["injected"]) == ("BatchRebalanceSampler", "NoneType")
