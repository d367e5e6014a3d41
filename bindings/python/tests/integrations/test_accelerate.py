"""brs.integrations.accelerate.prepare_dataloader: a plain accelerate loop under torchrun (2
gloo processes: coverage, set_epoch, save_state/load_state resume), then its single-process
behaviour and its errors in this process.

The torchrun loop (run_accelerate.py): 90 samples, 3 per micro-batch on average, gradient
accumulation 2, 2 ranks: 12 samples and 7 steps per epoch (drop_last: 6 samples are dropped),
2 epochs; the state is saved after step 10, inside epoch 1.
"""


import pytest
import torch
from accelerate import Accelerator, DataLoaderConfiguration
from torch.utils.data import DataLoader

import run_accelerate as cfg
from _support import TokenDataset, pad_collate, read_json, scaled_lengths
from brs import BatchRebalanceSampler
from brs.integrations.accelerate import prepare_dataloader

pytestmark = pytest.mark.distributed  # scripts/soak-distributed runs these

RANKS = 2
SAVE_AT = 10


def logs(run_dir):
    return {rank: read_json(run_dir / f"log-rank{rank}.json") for rank in range(RANKS)}


def lengths():
    return scaled_lengths(cfg.NUM_SAMPLES, start=500)


def planned(rank, epoch):
    sampler = BatchRebalanceSampler(lengths(), per_device_batch_size=cfg.PER_DEVICE,
                                    grad_accum=cfg.GRAD_ACCUM, dp_size=RANKS, rank=rank,
                                    seed=cfg.SEED, drop_last=True)
    return [micro_batch.indices for step in range(sampler.steps_per_epoch)
            for micro_batch in sampler.plan(step, epoch=epoch).micro_batches[rank]]


@pytest.fixture(scope="module")
def full(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("accelerate_full")
    torchrun("run_accelerate.py", "--out", out, "--save-at", SAVE_AT)
    return out


@pytest.fixture(scope="module")
def resumed(tmp_path_factory, torchrun, full):
    out = tmp_path_factory.mktemp("accelerate_resumed")
    torchrun("run_accelerate.py", "--out", out, "--resume", full / "state")
    return out


def test_each_rank_trains_all_its_planned_micro_batches(full):
    trained = logs(full)
    for rank in range(RANKS):
        result = read_json(full / f"result-rank{rank}.json")
        assert (result["dp_size"], result["rank"]) == (RANKS, rank)  # detected from accelerate
        assert [entry["indices"] for entry in trained[rank]] == planned(rank, 0) + planned(rank, 1)
        # The control: accelerate's own sharding would have kept half of them.
        assert result["unpatched_prepare_len"] < result["micro_batches_per_epoch"]


def test_every_kept_sample_once_per_epoch_and_the_epochs_differ(full):
    trained = logs(full)
    per_epoch = []
    for epoch in range(cfg.EPOCHS):
        seen = [i for rank in range(RANKS) for entry in trained[rank] if entry["epoch"] == epoch
                for i in entry["indices"]]
        assert len(seen) == len(set(seen)) == 84  # 7 steps of 12; drop_last drops 6 of 90
        per_epoch.append(set(seen))
    assert per_epoch[0] != per_epoch[1]  # other samples dropped: another shuffle


def test_set_epoch_reaches_the_sampler(full, resumed):
    for run in (full, resumed):
        for log in logs(run).values():
            assert all(entry["sampler_epoch"] == entry["epoch"] for entry in log)


def test_load_state_and_skip_first_batches_resume_exactly(full, resumed):
    uninterrupted, after = logs(full), logs(resumed)
    for rank in range(RANKS):
        assert after[rank], f"rank {rank} trained nothing after the resume"
        assert after[rank][0]["epoch"] == 1
        assert after[rank] == uninterrupted[rank][-len(after[rank]):]
        assert [entry["indices"] for entry in after[rank]] != planned(rank, 0)[-len(after[rank]):]
    left, right = torch.load(full / "weights.pt"), torch.load(resumed / "weights.pt")
    assert [name for name in left if not torch.equal(left[name], right[name])] == []


# -- in this process: one rank ---------------------------------------------------------------

@pytest.fixture
def accelerator():
    return Accelerator(cpu=True)


def loader_over(sampler):
    dataset = TokenDataset(lengths())
    return DataLoader(dataset, batch_sampler=sampler, collate_fn=pad_collate)


def new_sampler(**overrides):
    settings = dict(per_device_batch_size=cfg.PER_DEVICE, grad_accum=cfg.GRAD_ACCUM, seed=5)
    settings.update(overrides)
    return BatchRebalanceSampler(lengths(), **settings)


def test_one_process_yields_the_sampler_unchanged(accelerator):
    sampler = new_sampler()
    loader = prepare_dataloader(accelerator, loader_over(sampler))
    loader.set_epoch(2)
    trained = [batch["sample_idx"].tolist() for batch in loader]
    assert trained == [mb.indices for step in range(sampler.steps_per_epoch)
                       for mb in sampler.plan(step, epoch=2).micro_batches[0]]
    assert accelerator.even_batches is True  # switched off during prepare only


def test_set_epoch_reaches_the_sampler_after_skip_first_batches(accelerator):
    sampler = new_sampler()
    skipped = accelerator.skip_first_batches(prepare_dataloader(accelerator, loader_over(sampler)),
                                             3)
    skipped.set_epoch(1)
    assert sampler.epoch == 1
    trained = [batch["sample_idx"].tolist() for batch in skipped]
    epoch_1 = [mb.indices for step in range(sampler.steps_per_epoch)
               for mb in sampler.plan(step, epoch=1).micro_batches[0]]
    assert trained == epoch_1[3:]


def test_collate_fn_and_worker_settings_are_kept(accelerator):
    def collate(rows):
        return {"sample_idx": torch.tensor([row["sample_idx"] for row in rows]), "marked": True}

    def init_worker(worker_id):
        pass

    original = DataLoader(TokenDataset(lengths()), batch_sampler=new_sampler(), collate_fn=collate,
                          worker_init_fn=init_worker)
    loader = prepare_dataloader(accelerator, original)
    assert next(iter(loader))["marked"] is True
    assert loader.worker_init_fn is init_worker


@pytest.mark.parametrize("setting", ["dispatch_batches", "split_batches"])
def test_batch_redistributing_settings_are_refused(setting):
    config = DataLoaderConfiguration(**{setting: True})
    accelerator = Accelerator(cpu=True, dataloader_config=config)
    with pytest.raises(ValueError, match=f"{setting}=True is not supported"):
        prepare_dataloader(accelerator, loader_over(new_sampler()))


def test_a_sampler_planned_for_other_ranks_is_refused(accelerator):
    with pytest.raises(ValueError, match="dp_size=2, rank=1 but the accelerator has 1 data-par"):
        prepare_dataloader(accelerator, loader_over(new_sampler(dp_size=2, rank=1)))


def test_a_loader_without_a_brs_sampler_is_refused(accelerator):
    plain = DataLoader(TokenDataset(lengths()), batch_size=4, collate_fn=pad_collate)
    with pytest.raises(TypeError, match="batch_sampler must be a brs.BatchRebalanceSampler"):
        prepare_dataloader(accelerator, plain)


def test_an_already_prepared_loader_is_refused(accelerator):
    prepared = accelerator.prepare(loader_over(new_sampler()))
    with pytest.raises(ValueError, match="before accelerator.prepare"):
        prepare_dataloader(accelerator, prepared)
