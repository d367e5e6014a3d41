"""RebalanceOptions(calibrate_online=True): the Trainer refits its cost model while it trains.

The runs (run_online_calibration.py) time every micro-batch with the real clock but fit seconds
that are a known function of the shape, so the model fitted is known: alpha = C2/C1 and
intercept = C0/C1 as the library stores them. One process: the model changes after epoch 0,
and a resume inside epoch 1 trains the batches the uninterrupted run trained. Two gloo ranks
whose timings differ: both switch at the same step to the model of their timings together.
"""

import pathlib

import pytest

import brs_testing
import run_online_calibration as cfg
from _support import read_json, scaled_lengths, tiny_gpt2
from brs import BatchRebalanceSampler, CostModel
from brs.calibration import online
from brs.integrations.transformers import RebalanceOptions

SCRIPT = pathlib.Path(__file__).with_name("run_online_calibration.py")


def run(out, *args):
    done = brs_testing.run_python([str(SCRIPT), "--out", str(out), *map(str, args)])
    assert done.returncode == 0, done.stderr[-4000:]
    return read_json(out / "result-rank0.json")


def stored_fit(c0, c1, c2):
    return online.stored("alpha", c2 / c1), online.stored("intercept", c0 / c1)


def sampler(cost_model, dp_size=1, rank=0):
    return BatchRebalanceSampler(scaled_lengths(cfg.NUM_SAMPLES),
                                 per_device_batch_size=cfg.PER_DEVICE, grad_accum=cfg.GRAD_ACCUM,
                                 dp_size=dp_size, rank=rank, seed=7, drop_last=False,
                                 cost_model=cost_model)


def trained_from(result, first_step):
    return [entry for entry in result["trained"] if entry["step"] >= first_step]


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    out = tmp_path_factory.mktemp("online")
    uninterrupted = run(out / "full", "--save-steps", 12)  # step 12 lies inside epoch 1
    resumed = run(out / "resumed", "--resume", out / "full" / "checkpoints" / "checkpoint-12")
    return uninterrupted, resumed


def test_the_model_changes_after_epoch_zero_to_the_fit_of_the_timings(one_process):
    result, _ = one_process
    alpha, intercept = stored_fit(cfg.C0, cfg.C1, cfg.C2)
    first = result["calibrations"][0]
    assert first["epoch"] == 1 and first["step"] == result["steps_per_epoch"]
    assert (first["brs/calibration_alpha"], first["brs/calibration_intercept"]) == (alpha,
                                                                                    intercept)
    assert first["brs/calibration_r2"] > 0.99
    model = CostModel.from_dict(result["cost_model"])
    assert (model.alpha, model.intercept, model.source) == (alpha, intercept, "calibrated")
    # The switch replanned: epoch 1 trained the calibrated model's plan, not the initial one.
    initial = sampler(CostModel.from_config(tiny_gpt2().config))
    calibrated = sampler(model)
    assert initial.plan(0, epoch=1).micro_batches != calibrated.plan(0, epoch=1).micro_batches
    steps = result["steps_per_epoch"]
    assert [e["indices"] for e in trained_from(result, steps)] == [
        mb.indices for step in range(steps)
        for mb in calibrated.plan(step, epoch=1).micro_batches[0]]


def test_a_resume_inside_epoch_one_trains_the_uninterrupted_runs_batches(one_process):
    uninterrupted, resumed = one_process
    assert 12 < 2 * uninterrupted["steps_per_epoch"]
    assert resumed["trained"] and resumed["trained"][0]["step"] == 12
    assert trained_from(uninterrupted, 12) == resumed["trained"]
    pair = lambda result: (result["cost_model"]["alpha"], result["cost_model"]["intercept"])  # noqa: E731
    assert pair(resumed) == pair(uninterrupted)
    # The resumed run went on from the statistics agreed at epoch 0's end; the micro-batches
    # timed between that boundary and the checkpoint were never agreed, so they are not saved.
    lost = (12 - uninterrupted["steps_per_epoch"]) * cfg.GRAD_ACCUM
    micro_batches = lambda result: result["cost_model"]["timing"]["micro_batches"]  # noqa: E731
    assert micro_batches(resumed) == micro_batches(uninterrupted) - lost


def fit_of(results, before_step):
    """The stored (alpha, intercept) of the ranks' micro-batches trained before a step, timed
    as the run's synthetic clock times them (a micro-batch is padded to its longest sample)."""
    lengths, stats = scaled_lengths(cfg.NUM_SAMPLES), online.Statistics()
    for rank, result in enumerate(results):
        for entry in result["trained"]:
            if entry["step"] < before_step:
                bs, padded = len(entry["indices"]), int(max(lengths[entry["indices"]]))
                stats.add(bs, padded, 0, cfg.seconds(rank, bs, padded))
    return stored_fit(*stats.fit()[:3])


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("online-ddp")
    torchrun("run_online_calibration.py", "--out", out, "--every", 3)
    return [read_json(out / f"result-rank{rank}.json") for rank in range(2)]


@pytest.mark.distributed
def test_both_ranks_switch_at_the_same_step_to_the_model_of_all_timings(two_ranks):
    rank0, rank1 = two_ranks
    assert rank0["dp_size"] == rank1["dp_size"] == 2
    assert rank0["calibrations"] and rank0["calibrations"] == rank1["calibrations"]
    assert (rank0["cost_model"], rank0["cost_switch"], rank0["fingerprint"]) == (
        rank1["cost_model"], rank1["cost_switch"], rank1["fingerprint"])
    # Each rank alone would fit another alpha: the one both use comes from the all-reduce.
    # The first refit is the fit of both ranks' micro-batches before it, which neither rank's
    # own micro-batches give (their intercepts differ).
    first = rank0["calibrations"][0]
    fitted = (first["brs/calibration_alpha"], first["brs/calibration_intercept"])
    assert fitted == pytest.approx(fit_of(two_ranks, first["step"]), abs=2e-6)
    for rank in range(2):  # a rank alone times exactly its own function of the shape
        assert fitted != pytest.approx(stored_fit(cfg.C0 * (1 + rank), cfg.C1, cfg.C2))
    switches = [(c["brs/calibration_switch_epoch"], c["brs/calibration_switch_step"])
                for c in rank0["calibrations"]]
    assert switches == sorted(switches) and len(set(switches)) == len(switches)


def test_rebalance_options_check_the_online_settings():
    assert RebalanceOptions(calibrate_online=True, recalibrate_every=None).recalibrate_every is None
    with pytest.raises(ValueError, match="calibrate_online=True"):
        RebalanceOptions(recalibrate_every=4)
    with pytest.raises(ValueError, match="recalibrate_every"):
        RebalanceOptions(calibrate_online=True, recalibrate_every=0)
    with pytest.raises(TypeError, match="calibrate_online"):
        RebalanceOptions(calibrate_online="yes")


def test_statistics_add_up_across_ranks_to_the_fit_of_all_points():
    shapes = [(bs, length) for bs in (1, 2, 4, 8) for length in (16, 40, 90)]
    whole, halves = online.Statistics(), (online.Statistics(), online.Statistics())
    for i, (bs, length) in enumerate(shapes):
        y = 3e-4 + 2e-6 * bs * length + 4e-8 * bs * length ** 2
        whole.add(bs, length, bs * length, y)
        halves[i % 2].add(bs, length, bs * length, y)
    summed = online.Statistics(halves[0].vector + halves[1].vector)
    assert summed.fit()[:3] == pytest.approx(whole.fit()[:3])
    assert whole.fit()[:3] == pytest.approx((3e-4, 2e-6, 4e-8), rel=1e-6)


def test_a_fit_without_enough_distinct_shapes_is_refused_with_the_reason():
    stats = online.Statistics()
    for _ in range(20):
        stats.add(4, 32, 100, 0.01)
    assert "distinct shapes" in stats.fit()


def test_stored_rounds_as_the_library_does():
    value = 0.1234567891
    assert online.stored("alpha", value) == BatchRebalanceSampler(
        [3], per_device_batch_size=1, alpha=value).alpha
    assert online.stored("alpha", 1e-12) == 0.0


# -- Lightning: RebalanceCallback(calibrate_online=True), in process ------------------------------

LIGHTNING_PER_DEVICE, LIGHTNING_STOP = 4, 7  # 5 steps an epoch: step 7 lies inside epoch 1


@pytest.fixture
def synthetic_clock(monkeypatch):
    add = online.Statistics.add

    def timed(self, batch_size, length, real_tokens, measured):
        return add(self, batch_size, length, real_tokens, cfg.seconds(0, batch_size, length))

    def first_run(self, batch_size, length, measured):  # no first-run price: fitted alike
        return timed(self, batch_size, length, batch_size * length, measured)

    monkeypatch.setattr(online.Statistics, "add", timed)
    monkeypatch.setattr(online.Statistics, "add_first", first_run)


def lightning_fit(root, ckpt_path=None, **overrides):
    pytest.importorskip("lightning")
    import _lightning_app as app
    from brs.integrations.lightning import RebalanceCallback

    module, callback = app.TinyLM(LIGHTNING_PER_DEVICE), RebalanceCallback(calibrate_online=True)
    callbacks = [callback, *overrides.pop("callbacks", [])]
    trainer = app.trainer(root, callbacks=callbacks, rebalance=False, **overrides)
    trainer.fit(module, ckpt_path=ckpt_path)
    return module, callback._sampler, trainer


def test_lightning_switches_after_epoch_zero_and_resumes_to_the_same_batches(tmp_path,
                                                                             synthetic_clock):
    from lightning.pytorch.callbacks import ModelCheckpoint

    full, sampler, trainer = lightning_fit(tmp_path / "full")
    alpha, intercept = stored_fit(cfg.C0, cfg.C1, cfg.C2)
    assert (sampler.cost_model.alpha, sampler.cost_model.intercept) == (alpha, intercept)
    assert trainer.callback_metrics["brs/calibration_alpha"].item() == pytest.approx(alpha)
    calibrated = [mb.indices for step in range(sampler.steps_per_epoch)
                  for mb in sampler.plan(step, epoch=1).micro_batches[0]]
    assert [e["indices"] for e in full.index_log if e["epoch"] == 1] == calibrated

    checkpoints = ModelCheckpoint(dirpath=tmp_path / "ckpt", every_n_train_steps=LIGHTNING_STOP,
                                  save_top_k=-1)
    lightning_fit(tmp_path / "stopped", max_steps=LIGHTNING_STOP, callbacks=[checkpoints],
                  enable_checkpointing=True)
    (path,) = (tmp_path / "ckpt").glob("*.ckpt")
    resumed, resumed_sampler, _ = lightning_fit(tmp_path / "resumed", ckpt_path=str(path))
    assert resumed.index_log == [e for e in full.index_log if e["step"] >= LIGHTNING_STOP]
    assert resumed_sampler.state_dict()["cost_switch"]["epoch"] >= 1


# -- accelerate: OnlineCalibration around a hand-written loop, in process -------------------------

def test_accelerate_loop_switches_after_epoch_zero_and_its_state_restores_the_model(
        synthetic_clock):
    import torch
    from accelerate import Accelerator

    from _support import TokenDataset, pad_collate
    from brs.integrations.accelerate import OnlineCalibration, prepare_dataloader

    accelerator = Accelerator(cpu=True)
    model = tiny_gpt2()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer = accelerator.prepare(model, optimizer)
    brs_sampler = sampler(None)
    loader = prepare_dataloader(accelerator, torch.utils.data.DataLoader(
        TokenDataset(scaled_lengths(cfg.NUM_SAMPLES)), batch_sampler=brs_sampler,
        collate_fn=pad_collate))
    calibration = OnlineCalibration(accelerator, brs_sampler)
    trained = []
    for epoch in range(2):
        loader.set_epoch(epoch)
        for batch in loader:
            trained.append((epoch, batch.pop("sample_idx").tolist()))
            with calibration.timed(batch):
                accelerator.backward(model(**batch).loss)
                optimizer.step()
                optimizer.zero_grad()
        calibration.epoch_end()
    alpha, intercept = stored_fit(cfg.C0, cfg.C1, cfg.C2)
    model_in_force = brs_sampler.cost_model
    assert (model_in_force.alpha, model_in_force.intercept) == (alpha, intercept)
    assert [indices for epoch, indices in trained if epoch == 1] == [
        mb.indices for step in range(brs_sampler.steps_per_epoch)
        for mb in sampler(model_in_force).plan(step, epoch=1).micro_batches[0]]

    fresh = sampler(None)
    OnlineCalibration(accelerator, fresh).load_state_dict(calibration.state_dict())
    assert fresh.cost_model == model_in_force and fresh.fingerprint == brs_sampler.fingerprint


# -- the sampler: the switch, its record in the state, a resume on either side of it -------------

def test_a_switch_spares_the_steps_already_drawn_and_a_resume_replans_both_sides():
    live = sampler(None)
    batches = iter(live)
    drawn = [next(batches) for _ in range(3)]  # steps 0 and 1: step 1 is planned already
    calibrated = CostModel(0.5, 200.0, source="calibrated")
    assert live.switch_cost_model(calibrated) == (0, 2)
    saved = dict(live.state_dict(), measurements={"statistics": []})  # as online calibration
    rest = list(batches)
    assert drawn + rest != [mb.indices for step in range(live.steps_per_epoch)
                            for mb in sampler(None).plan(step).micro_batches[0]]
    resumed = sampler(None)
    resumed.load_state_dict(saved)
    assert resumed.cost_model == live.cost_model and resumed.fingerprint == live.fingerprint
    assert list(resumed) == rest  # step 1's last micro-batch with the old model, then the new


def test_a_refused_state_leaves_the_cost_model_as_it_was():
    donor = sampler(None)
    donor.switch_cost_model(CostModel(0.5, 200.0, source="calibrated"))
    bad = dict(donor.state_dict(), measurements={"statistics": []}, step=10**6)
    target = sampler(None)
    before = target.state_dict()
    with pytest.raises(ValueError, match="outside an epoch"):
        target.load_state_dict(bad)
    assert target.state_dict() == before
