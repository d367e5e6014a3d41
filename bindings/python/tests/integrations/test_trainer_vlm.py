"""BatchRebalanceTrainer on vision-language samples: a tiny Qwen2-VL (_vlm_support) trained
under torchrun with 2 gloo ranks, its images read from the dataset's image_grid_thw column and
planned with the text; then, in this process, how the Trainer finds the images and its options.

The runs (run_trainer_vlm.py): 48 samples, per_device_train_batch_size 2, gradient accumulation
2, 2 ranks, so 8 samples and 6 optimizer steps per epoch, 2 epochs; max_encoder_tokens 160. The
uninterrupted run writes checkpoint-8 (epoch 1, step 2) on its way; the resumed run starts there.
"""

import dataclasses
import functools
import logging

import pytest
import torch

import run_trainer_vlm as cfg
from _support import TokenDataset, pad_collate, read_json, scaled_lengths, tiny_gpt2
from _vlm_support import image_grids, patches, tiny_qwen2_vl, vlm_collate, vlm_dataset
from brs import BatchRebalanceSampler
from brs.integrations.accelerate import find_rebalance_sampler
from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions
from brs_testing import expect_error

pytest.importorskip("datasets")  # the dataset is a datasets.Dataset, as a processor's output is

RANKS = 2
STEPS_PER_EPOCH = 6  # 48 / (2 * 2 * 2)


def encoder_loads():
    return [patches(grids) for grids in image_grids(cfg.NUM_SAMPLES)]


@functools.cache
def sample_lengths():
    return tuple(vlm_dataset(cfg.NUM_SAMPLES)["length"])


def reference(rank=0, **options):
    """The sampler the Trainer of run_trainer_vlm.py must build (its sync="auto" plans for
    per-step sync under DDP with accumulation; in one process the choice plans alike)."""
    settings = dict(per_device_batch_size=cfg.PER_DEVICE, grad_accum=cfg.GRAD_ACCUM,
                    dp_size=RANKS, rank=rank, seed=7, drop_last=False, sync="step",
                    alpha=cfg.OPTIONS.alpha, intercept=cfg.OPTIONS.intercept,
                    encoder_alpha=cfg.OPTIONS.encoder_alpha, encoder_loads=encoder_loads(),
                    max_encoder_tokens=cfg.MAX_ENCODER_TOKENS)
    settings.update(options)
    return BatchRebalanceSampler(sample_lengths(), **settings)


def planned(rank, epoch):
    sampler = reference(rank)
    return [{"step": epoch * STEPS_PER_EPOCH + step, "indices": micro_batch.indices}
            for step in range(sampler.steps_per_epoch)
            for micro_batch in sampler.plan(step, epoch=epoch).micro_batches[rank]]


def logs(run_dir):
    return {rank: read_json(run_dir / f"log-rank{rank}.json") for rank in range(RANKS)}


@pytest.fixture(scope="module")
def full(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("vlm_full")
    torchrun("run_trainer_vlm.py", "--out", out)
    return out


@pytest.fixture(scope="module")
def resumed(tmp_path_factory, torchrun, full):
    # The uninterrupted run's own checkpoint: what it holds does not depend on whether the run
    # went on after writing it.
    checkpoint = full / "checkpoints" / f"checkpoint-{cfg.SAVE_STEPS}"
    assert checkpoint.is_dir(), "the run wrote no checkpoint at step SAVE_STEPS"
    out = tmp_path_factory.mktemp("vlm_resumed")
    torchrun("run_trainer_vlm.py", "--out", out, "--resume", checkpoint)
    return out


@pytest.mark.distributed
def test_both_ranks_train_every_sample_once_per_epoch(full):
    trained = logs(full)
    for epoch in range(cfg.EPOCHS):
        first = epoch * STEPS_PER_EPOCH
        indices = sorted(i for log in trained.values() for entry in log
                         if first <= entry["step"] < first + STEPS_PER_EPOCH
                         for i in entry["indices"])
        assert indices == list(range(cfg.NUM_SAMPLES)), f"epoch {epoch}"


@pytest.mark.distributed
def test_each_rank_trains_the_image_aware_plan(full):
    for rank, log in logs(full).items():
        assert [{"step": e["step"], "indices": e["indices"]} for e in log] == \
            planned(rank, 0) + planned(rank, 1), f"rank {rank}"
    for rank in range(RANKS):
        assert read_json(full / f"result-rank{rank}.json") == {
            "global_step": cfg.EPOCHS * STEPS_PER_EPOCH, "world_size": RANKS,
            "max_encoder_tokens": cfg.MAX_ENCODER_TOKENS, "encoder_loads_given": True}


@pytest.mark.distributed
def test_every_micro_batch_keeps_the_patch_cap(full):
    loads = encoder_loads()
    trained = [entry for log in logs(full).values() for entry in log]
    for entry in trained:
        # What the vision tower got (the collated image_grid_thw) is what the plan counted.
        assert entry["patches"] == sum(sum(loads[i]) for i in entry["indices"])
        assert entry["images"] == sum(len(loads[i]) for i in entry["indices"])
        assert entry["patches"] <= cfg.MAX_ENCODER_TOKENS, entry
    assert any(e["images"] == 0 for e in trained) and any(e["images"] > 1 for e in trained)
    # The cap does work here: planned by their text alone, some micro-batches hold more.
    text_only = reference(encoder_loads=None, max_encoder_tokens=None)
    most = max(sum(sum(loads[i]) for i in micro_batch.indices)
               for epoch in range(cfg.EPOCHS) for step in range(STEPS_PER_EPOCH)
               for rank in text_only.plan(step, epoch=epoch).micro_batches
               for micro_batch in rank)
    assert most > cfg.MAX_ENCODER_TOKENS


@pytest.mark.distributed
def test_resume_trains_what_the_uninterrupted_run_trained(full, resumed):
    uninterrupted, after = logs(full), logs(resumed)
    for rank in range(RANKS):
        expected = [e for e in uninterrupted[rank] if e["step"] >= cfg.SAVE_STEPS]
        assert after[rank] == expected, f"rank {rank}"
        assert STEPS_PER_EPOCH < after[rank][0]["step"] == cfg.SAVE_STEPS
    left, right = torch.load(full / "weights.pt"), torch.load(resumed / "weights.pt")
    different = [name for name in left if not torch.equal(left[name], right[name])]
    assert left.keys() == right.keys() and not different, f"weights differ: {different}"


# In this process: how the Trainer finds the images, and its options. Nothing trains. One rank
# plans a step's samples into half the micro-batches two ranks have, so its patch cap is higher:
# the least with which every step of both epochs plans (the Trainer checks the whole run).
ONE_RANK_CAP = 240
ONE_RANK_OPTIONS = dataclasses.replace(cfg.OPTIONS, max_encoder_tokens=ONE_RANK_CAP)


def trainer(tmp_path, dataset, options=None, model=None, collator=vlm_collate):
    args = cfg.training_arguments(str(tmp_path), ddp_backend=None,
                                  ddp_find_unused_parameters=None)
    return BatchRebalanceTrainer(model=model or tiny_qwen2_vl(), args=args,
                                 train_dataset=dataset, data_collator=collator,
                                 rebalance_options=options or ONE_RANK_OPTIONS)


def planned_sampler(run):
    return find_rebalance_sampler(run.get_train_dataloader())


def one_rank(**options):
    return reference(dp_size=1, sync=None, max_encoder_tokens=ONE_RANK_CAP, **options)


def test_one_rank_under_the_two_rank_cap_fails_before_training(tmp_path):
    with pytest.raises(ValueError, match=f"max_encoder_tokens {cfg.MAX_ENCODER_TOKENS} cannot "
                                         "plan all 2 epochs of this run: step"):
        planned_sampler(trainer(tmp_path, vlm_dataset(cfg.NUM_SAMPLES), cfg.OPTIONS))


def test_the_images_come_from_image_grid_thw_and_are_logged(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="brs.integrations.transformers"):
        sampler = planned_sampler(trainer(tmp_path, vlm_dataset(cfg.NUM_SAMPLES)))
    with_images = sum(1 for images in encoder_loads() if images)
    assert sampler.fingerprint == one_rank().fingerprint
    assert sampler.max_encoder_tokens == ONE_RANK_CAP
    assert sampler.encoder_alpha == cfg.OPTIONS.encoder_alpha
    assert (f"images from column 'image_grid_thw' (t*h*w patches per image): {with_images} of "
            f"{cfg.NUM_SAMPLES} samples have images") in caplog.text


def test_an_encoder_loads_column_wins_over_the_grids(tmp_path):
    # Loads that disagree with the grids: only reading the column can plan with these.
    claimed = [[p + 1 for p in images] for images in encoder_loads()]
    dataset = vlm_dataset(cfg.NUM_SAMPLES).add_column("encoder_loads", claimed)
    sampler = planned_sampler(trainer(tmp_path, dataset))
    assert sampler.fingerprint == one_rank(encoder_loads=claimed).fingerprint
    named = dataclasses.replace(ONE_RANK_OPTIONS, encoder_loads_column="patch_counts")
    renamed = dataset.rename_column("encoder_loads", "patch_counts")
    sampler = planned_sampler(trainer(tmp_path, renamed, named))
    assert sampler.fingerprint == one_rank(encoder_loads=claimed).fingerprint


def test_a_named_column_must_exist(tmp_path):
    # refused when the Trainer is built, before training
    expect_error("BatchRebalanceTrainer(...)",
                 "RebalanceOptions(encoder_loads_column='patch_counts') and no such column",
                 ValueError, r"the dataset has no column 'patch_counts' of image patch counts; "
                             r"name the column that holds them", trainer, tmp_path,
                 vlm_dataset(cfg.NUM_SAMPLES), RebalanceOptions(encoder_loads_column="patch_counts"))


def test_no_column_plans_the_text_only(tmp_path, caplog):
    text_only = RebalanceOptions(encoder_loads_column=None, alpha=0.001, intercept=0.0)
    sampler = planned_sampler(trainer(tmp_path, vlm_dataset(cfg.NUM_SAMPLES), text_only))
    assert not sampler.was_given("encoder_loads")
    dataset = TokenDataset(scaled_lengths(cfg.NUM_SAMPLES))  # no columns at all
    with caplog.at_level(logging.INFO, logger="brs.integrations.transformers"):
        sampler = planned_sampler(trainer(tmp_path, dataset, model=tiny_gpt2(),
                                          collator=pad_collate))
    assert not sampler.was_given("encoder_loads")
    assert "no image column: planning the text only" in caplog.text


def test_a_sample_above_the_patch_cap_is_named(tmp_path):
    options = RebalanceOptions(max_encoder_tokens=100)
    with pytest.raises(ValueError, match=r"sample \d+ has \d+ image patches, more than "
                                         "max_encoder_tokens 100"):
        trainer(tmp_path, vlm_dataset(cfg.NUM_SAMPLES), options).get_train_dataloader()


def test_a_default_qwen2_vl_checkpoint_resumes_only_lm_head(tmp_path):
    """Why tiny_qwen2_vl saves in its own key layout: transformers 5.23's Trainer resumes a
    checkpoint in Qwen2-VL's original layout (save_pretrained's default) without its weights."""
    saved = tiny_qwen2_vl(seed=1, resumable=False)
    saved.save_pretrained(tmp_path / "checkpoint")
    run = trainer(tmp_path / "out", vlm_dataset(8))  # a model of seed 0

    def equal(name):
        return torch.equal(run.model.state_dict()[name], saved.state_dict()[name])

    to_restore = [name for name in saved.state_dict() if not equal(name)]  # not the norms
    run._load_from_checkpoint(str(tmp_path / "checkpoint"))
    restored = [name for name in to_restore if equal(name)]
    assert restored == ["lm_head.weight"], "upstream resumes Qwen2-VL now: drop the override"
