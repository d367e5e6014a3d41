"""Calibration of the encoder part (vision-language models): brs.calibrate with an encoder hook
and "auto" on a tiny Qwen2-VL, the cost model's encoder keys (JSON, samplers), and the online
fit of micro-batches with images.

Time is asserted only through fits: a fake clock advanced by a known cost gives exact
coefficients; a spinning hook (this thread's CPU time, which other processes cannot inflate)
gives them within a tolerance; the tiny Qwen2-VL run checks what is recorded, not its numbers.
"""

import json
import logging
import time
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import brs  # noqa: E402
import test_calibrate as known_cost  # noqa: E402  (its fixture, fake clock and model)
from brs import CostModel  # noqa: E402
from brs.calibration import encoder, online, record as timing_record  # noqa: E402
from brs.cost_model import cost_terms, encoder_sums  # noqa: E402
from test_calibrate import known  # noqa: E402,F401  (the fixture)

LENGTHS = known_cost.LENGTHS
TEXT = dict(batch_sizes=[1, 2, 4], seq_lens=[16, 64, 128])
IMAGES = dict(image_sizes=[16, 64, (16, 16)], image_counts=[1, 2, 4])

# The encoder's known cost of a call: K + A * (EW*P + EA*S + EI*N) seconds, A the text part's
# seconds per padded token, so EW, EA and EI are encoder_weight, encoder_alpha and
# encoder_intercept exactly. A patch of a narrow tower beside a wide language model costs less
# than a padded token: EW is not the library's default of 1.
K, EW, EA, EI = 1e-3, 0.3, 0.002, 300.0


def known_hook(clock, weight=EW, alpha=EA, across=False, rounds_to=None):
    """A hook whose step 'takes' the known cost on the fake clock: ``weight`` tokens a patch,
    ``alpha`` a patch^2. ``across``: the tower's attention spans all the images of a call (a
    cost outside the library's form, which has it within each image). ``rounds_to`` (patches
    -> patches) is a tower's rounding of a size, reported as step.patches."""
    def hook(sizes):
        patches = [encoder.patch_count(s) for s in sizes]
        if rounds_to is not None:
            patches = [rounds_to(p) for p in patches]
        total, squares, images = encoder_sums(patches)
        if across:
            squares = total ** 2

        def step():
            clock.now += K + known_cost.A * (weight * total + alpha * squares + EI * images)
        step.patches = patches
        return step
    return hook


@pytest.mark.parametrize("weight", [EW, 1.0, 2.5])
def test_the_encoder_fit_recovers_a_known_cost_in_the_text_units(known, weight):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an exact fit warns of nothing
        cm = brs.calibrate(known, LENGTHS, **TEXT, repeats=2, progress=False,
                           encoder=known_hook(known.clock, weight), **IMAGES)
    assert cm.encoder_weight == pytest.approx(weight, rel=1e-6)
    assert cm.encoder_alpha == pytest.approx(EA, rel=1e-6)
    assert cm.encoder_intercept == pytest.approx(EI, rel=1e-6)
    record = cm.encoder
    assert record["seconds_per_call"] == pytest.approx(K, rel=1e-6)
    assert record["r2"] == pytest.approx(1.0) and record["worst_residual"] < 1e-6
    assert "note" not in record and "patch_units" not in record
    rows = record["timings"]
    assert len(rows) == 9 and {r["images"] for r in rows} == {1, 2, 4}
    big = next(r for r in rows if r["size"] == [16, 16] and r["images"] == 4)
    assert (big["patches"], big["squares"]) == (4 * 256, 4 * 256 ** 2)
    # seconds of a micro-batch with images: the text's plus the images' at the same unit
    text = known_cost.C0 + known_cost.A * 256 + known_cost.B * 256 * 64
    images = known_cost.A * (weight * 64 + EA * 64 ** 2 + EI) * 2
    assert cm.predict(4, 64, images=[64, 64]) == pytest.approx(text + images, rel=1e-6)


def test_a_cost_outside_the_librarys_form_shows_in_the_fit_error_and_warns(known):
    with pytest.warns(UserWarning, match="encoder fit is off by up to"):
        cm = brs.calibrate(known, LENGTHS, **TEXT, repeats=1, progress=False,
                           encoder=known_hook(known.clock, alpha=0.01, across=True), **IMAGES)
    assert cm.encoder["worst_residual"] > encoder.WARN_RESIDUAL
    assert cm.encoder["r2"] < 1.0


def test_sizes_a_tower_rounds_to_too_few_keep_the_default_weight_and_say_so(known):
    # Every size runs as 16 or 64 patches: two sizes cannot tell the per-patch term apart.
    with pytest.warns(UserWarning, match="encoder_weight not fitted"):
        cm = brs.calibrate(known, LENGTHS, **TEXT, repeats=1, progress=False,
                           encoder=known_hook(known.clock, 1.0, rounds_to=lambda p: min(p, 64)),
                           **IMAGES)
    assert cm.encoder_weight == CostModel.fixed().encoder_weight
    assert "16, 64" in cm.encoder["note"]
    assert cm.encoder_alpha == pytest.approx(EA, rel=1e-6)  # the rest fitted around it
    assert cm.encoder_intercept == pytest.approx(EI, rel=1e-6)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(image_sizes=[16, 64]), ValueError, "pass encoder="),
    (dict(encoder=42), TypeError, "encoder must be"),
    (dict(encoder=lambda sizes: None, image_sizes=[64], image_counts=[1, 2]), ValueError,
     "at least three sizes"),
    (dict(encoder=lambda sizes: None, image_sizes=[16, 64], image_counts=[1, 2, 4]),
     ValueError, "at least three sizes"),
    (dict(encoder=lambda sizes: None, image_sizes=[16, 64, 256], image_counts=[2]), ValueError,
     "two counts"),
    (dict(encoder=lambda sizes: None, image_sizes=["big"]), TypeError, "image_sizes"),
    (dict(encoder=lambda sizes: None, image_counts=[0, 1]), ValueError, "image_counts"),
    (dict(encoder="auto"), TypeError, "has none"),  # KnownCostModel has no vision tower
])
def test_bad_encoder_arguments_are_named_before_anything_is_timed(known, kwargs, error,
                                                                  message):
    with pytest.raises(error, match=message):
        brs.calibrate(known, LENGTHS, **TEXT, repeats=1, progress=False, **kwargs)
    assert known.probe_log == []  # nothing ran


def test_a_hook_that_returns_no_step_is_named(known):
    with pytest.raises(TypeError, match="must return a callable step"):
        brs.calibrate(known, LENGTHS, **TEXT, repeats=1, progress=False,
                      encoder=lambda sizes: None, **IMAGES)


# -- a spinning encoder: the fit within a tolerance on the real clock ---------------------------

SPIN_A = 3e-6  # seconds per unit: the text part's padded token
SPIN_C0, SPIN_ALPHA = 10e-3, 0.004
SPIN_K, SPIN_EW, SPIN_EA, SPIN_EI = 4e-3, 0.3, 0.001, 300.0


def spin(seconds):
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        pass


class SpinningText(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(1))

    def forward(self, input_ids, labels, attention_mask=None):
        bs, length = input_ids.shape
        spin(SPIN_C0 + SPIN_A * bs * length * (1 + SPIN_ALPHA * length))
        return self.weight.sum()


def spinning_hook(sizes):
    total, squares, images = encoder_sums(encoder.patch_count(s) for s in sizes)
    return lambda: spin(SPIN_K + SPIN_A * (SPIN_EW * total + SPIN_EA * squares
                                          + SPIN_EI * images))


def test_calibrate_recovers_a_spun_encoder_cost(one_thread, monkeypatch):
    # The fixed parts are large beside the ~0.3 ms the harness adds to every run, and the
    # minimum of the interleaved repeats sheds what other processes add.
    monkeypatch.setattr(timing_record, "load_average", lambda: 0.0)  # busy or not: same fit
    cm = brs.calibrate(SpinningText(), LENGTHS, batch_sizes=[1, 2, 4, 8], seq_lens=[64, 256],
                       repeats=3, memory_budget="1GiB", progress=False, encoder=spinning_hook,
                       image_sizes=[64, 256, 1024], image_counts=[1, 2, 4])
    assert cm.encoder["timing"]["clock"] == "thread_time"
    assert cm.encoder_weight == pytest.approx(SPIN_EW, rel=0.15), cm.encoder["timings"]
    assert cm.encoder_alpha == pytest.approx(SPIN_EA, rel=0.10), cm.encoder["timings"]
    assert cm.encoder_intercept == pytest.approx(SPIN_EI, rel=0.15), cm.encoder["timings"]
    assert cm.encoder["r2"] > 0.98


# -- a tiny Qwen2-VL built from a config: the "auto" hook and the CLI ----------------------------

def tiny_qwen2_vl_config():
    return transformers.Qwen2VLConfig(
        text_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, intermediate_size=64, vocab_size=512,
                         max_position_embeddings=1024,
                         rope_scaling={"type": "mrope", "mrope_section": [2, 2, 4]}),
        vision_config=dict(depth=1, embed_dim=16, hidden_size=32, num_heads=2, mlp_ratio=2,
                           patch_size=14, spatial_merge_size=2, temporal_patch_size=2,
                           in_channels=3))


@pytest.fixture(scope="module")
def tiny_vlm():
    torch.manual_seed(0)
    return transformers.Qwen2VLForConditionalGeneration(tiny_qwen2_vl_config())


def test_the_qwen2_vl_hook_rounds_sizes_to_the_towers_grids(tiny_vlm):
    hook = encoder.qwen2_vl(tiny_vlm)
    step = hook([10, (3, 5), 16])
    assert step.patches == [16, 4 * 6, 16]  # merge cells of 2x2 patches: rounded up
    step()
    tower = encoder.vision_tower(tiny_vlm)
    assert any(p.grad is not None for p in tower.parameters())  # trained: backward ran
    tower.zero_grad(set_to_none=True)
    for parameter in tower.parameters():
        parameter.requires_grad_(False)
    try:
        encoder.qwen2_vl(tiny_vlm)([64])()  # a frozen tower: forward only
        assert all(p.grad is None for p in tower.parameters())
    finally:
        for parameter in tower.parameters():
            parameter.requires_grad_(True)


# Text shapes large enough that the tiny model's time grows well beyond its fixed overhead.
VLM_TEXT = dict(batch_sizes=[1, 4, 16], seq_lens=[32, 256])


def test_calibrate_times_a_tiny_qwen2_vl_tower_and_saves_the_encoder_keys(tiny_vlm, tmp_path,
                                                                          one_thread):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a busy machine, a tiny tower: not what is tested
        cm = brs.calibrate(tiny_vlm, LENGTHS, **VLM_TEXT, repeats=1, progress=False,
                           encoder="auto", image_sizes=[10, 64, (8, 12)], image_counts=[1, 2])
    rows = cm.encoder["timings"]
    assert sorted({r["patches"] // r["images"] for r in rows}) == [16, 64, 96]
    assert cm.encoder_weight >= 0 and cm.encoder_alpha >= 0 and cm.encoder_intercept >= 0
    assert 0 <= cm.encoder["worst_residual"] and cm.encoder["r2"] <= 1
    assert "bytes_per_patch" in cm.encoder["memory"]
    cm.save(tmp_path / "cost.json")
    loaded = CostModel.load(tmp_path / "cost.json")
    assert loaded == cm and loaded.encoder_weight == cm.encoder_weight


def test_the_cli_calibrates_the_encoder_of_a_vlm_directory(tmp_path):
    model_dir = tmp_path / "tiny-vl"
    tiny_qwen2_vl_config().save_pretrained(model_dir)
    lengths = tmp_path / "l.txt"
    lengths.write_text("".join(f"{n}\n" for n in LENGTHS[:50]))
    out = tmp_path / "cost.json"
    done = known_cost.cli("--model", model_dir, "--lengths", lengths, "--batch-sizes", "1,4,16",
                          "--seq-lens", "32,256", "--repeats", "1", "--image-sizes",
                          "16,64,8x12", "--image-counts", "1,2", "--threads", "1", "-o", out)
    assert done.returncode == 0, done.stderr
    assert "encoder     encoder_weight" in done.stdout
    data = json.loads(out.read_text())
    assert {"encoder_weight", "encoder_alpha", "encoder_intercept",
            "max_encoder_tokens"} <= data.keys()
    assert len(data["encoder"]["timings"]) == 6
    bad = known_cost.cli("--model", model_dir, "--lengths", lengths, "--image-sizes", "16,a",
                         "-o", out)
    assert bad.returncode == 2 and "--image-sizes" in bad.stderr


# -- the cost model's encoder keys -------------------------------------------------------------

def test_the_encoder_keys_round_trip_and_default_to_the_librarys(tmp_path):
    cm = CostModel(0.002, 30.0, 4096, encoder_weight=0.3, encoder_alpha=0.0005,
                   encoder_intercept=120.0, max_encoder_tokens=16384, encoder={"r2": 0.99})
    cm.save(tmp_path / "cost.json")
    assert json.loads((tmp_path / "cost.json").read_text())["encoder_weight"] == 0.3
    loaded = CostModel.load(tmp_path / "cost.json")
    assert (loaded.encoder_weight, loaded.encoder_alpha, loaded.encoder_intercept,
            loaded.max_encoder_tokens) == (0.3, 0.0005, 120.0, 16384)
    assert loaded.encoder == {"r2": 0.99} and loaded == cm
    # files written before images were priced, or before a patch had a weight of its own
    defaults = brs.BatchRebalanceSampler([3, 4], per_device_batch_size=1)
    for encoder_keys in ({"encoder_alpha": None}, {"encoder_alpha": 0.0005,
                                                   "encoder_intercept": 120.0},
                         {"encoder_weight": None}):
        old = CostModel.from_dict({"format": "brs-cost-model", "version": 1, "alpha": 0.002,
                                   "intercept": 30, **encoder_keys})
        assert old.encoder_weight == defaults.encoder_weight == 1.0
    assert (old.encoder_alpha, old.encoder_intercept, old.max_encoder_tokens) == (
        defaults.encoder_alpha, defaults.encoder_intercept, None)


@pytest.mark.parametrize("key, value, message", [
    ("encoder_weight", -0.5, "out of range"), ("encoder_weight", True, "not a number"),
    ("encoder_alpha", -1, "out of range"), ("encoder_intercept", "5", "not a number"),
    ("max_encoder_tokens", 0, "not an integer >= 1"), ("encoder", [], "not an object"),
])
def test_a_bad_encoder_key_is_refused_by_name(key, value, message):
    data = {"format": "brs-cost-model", "version": 1, "alpha": 0.002, "intercept": 30, key: value}
    with pytest.raises(ValueError, match=f'"{key}".*{message}'):
        CostModel.from_dict(data)


def test_samplers_take_the_encoder_part_of_a_cost_model_and_explicit_values_win():
    cm = CostModel(0.002, 30.0, encoder_weight=0.3, encoder_alpha=0.0005,
                   encoder_intercept=120.0, max_encoder_tokens=5000)
    lengths, loads = [5, 9, 2, 7, 3, 8, 1, 6], [[64], [], [16, 16], 0, [100], [], [], [4]]
    sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=2, cost_model=cm,
                                        encoder_loads=loads)
    assert (sampler.encoder_weight, sampler.encoder_alpha, sampler.encoder_intercept,
            sampler.max_encoder_tokens) == (0.3, 0.0005, 120.0, 5000)
    assert (sampler.cost_model.encoder_weight, sampler.cost_model.encoder_intercept) == (
        0.3, 120.0)
    mine = brs.BatchRebalanceSampler(lengths, per_device_batch_size=2, cost_model=cm,
                                     encoder_weight=2.0, encoder_alpha=0.01,
                                     max_encoder_tokens=200)
    assert (mine.encoder_weight, mine.encoder_alpha, mine.encoder_intercept,
            mine.max_encoder_tokens) == (2.0, 0.01, 120.0, 200)
    # plan_batch prices a patch at the cost model's weight, as if given explicitly
    step = [40, 3, 38, 5, 36, 2, 34, 4]
    images = [[], [1000], [], [900], [], [800], [], [700]]
    by_model = brs.plan_batch(step, dp_size=2, cost_model=CostModel(0.0, encoder_weight=0.001,
                                                                    encoder_alpha=0.0),
                              encoder_loads=images)
    assert by_model == brs.plan_batch(step, dp_size=2, cost_model=CostModel(0.0),
                                      encoder_weight=0.001, encoder_alpha=0.0,
                                      encoder_loads=images)
    assert by_model != brs.plan_batch(step, dp_size=2, cost_model=CostModel(0.0),
                                      encoder_alpha=0.0, encoder_loads=images)
    with pytest.raises(ValueError, match="max_encoder_tokens"):  # the cap comes from the model
        brs.plan_batch([5, 9], dp_size=1, cost_model=CostModel(0.0, max_encoder_tokens=50),
                       encoder_loads=[[64], 0])
    stream = brs.RebalancedStream(range(8), length=lambda i: i + 1, per_device_batch_size=2,
                                  cost_model=cm, dp_size=1, rank=0)
    assert (stream.encoder_weight, stream.encoder_alpha, stream.max_encoder_tokens) == (
        0.3, 0.0005, 5000)


def test_a_switch_of_cost_model_carries_the_encoder_part_and_replans_before_it_alike():
    lengths = [5, 9, 2, 7, 3, 8, 1, 6] * 4
    loads = [[64 * (1 + i % 3)] if i % 2 else [] for i in range(len(lengths))]
    sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=2, encoder_loads=loads,
                                        dp_size=2, rank=0, seed=3)
    before = list(sampler)
    sampler.set_epoch(0)
    new = CostModel(0.001, 0.0, encoder_weight=0.25, encoder_alpha=0.01,
                    encoder_intercept=500.0)
    sampler.switch_cost_model(new, since=(1, 0))
    assert (sampler.encoder_weight, sampler.encoder_alpha, sampler.encoder_intercept) == (
        0.25, 0.01, 500.0)
    assert list(sampler) == before  # epoch 0 lies before the switch: the previous model
    state = sampler.state_dict()
    assert state["cost_switch"]["previous"]["encoder_alpha"] == 0.001
    assert state["cost_switch"]["previous"]["encoder_weight"] == 1.0
    assert state["cost_model"]["encoder_weight"] == 0.25


def test_a_state_saved_before_the_patch_weight_loads_with_the_default():
    lengths = [5, 9, 2, 7, 3, 8, 1, 6] * 4
    loads = [[64 * (1 + i % 3)] if i % 2 else [] for i in range(len(lengths))]

    def sampler():
        return brs.BatchRebalanceSampler(lengths, per_device_batch_size=2, encoder_loads=loads,
                                         dp_size=2, rank=0, seed=3)

    saved = sampler()
    saved.measurements = {"statistics": None}  # online calibration's: its model is adopted
    saved.switch_cost_model(CostModel(0.001, encoder_alpha=0.01), since=(1, 0))
    state = saved.state_dict()
    # As a version before encoder_weight wrote it: no key in the model nor in the switch.
    del state["cost_model"]["encoder_weight"]
    del state["cost_switch"]["previous"]["encoder_weight"]
    resumed = sampler()
    resumed.load_state_dict(state)
    assert (resumed.encoder_weight, resumed.encoder_alpha) == (1.0, 0.01)
    assert resumed.cost_model.encoder_weight == 1.0
    for epoch in (0, 1):  # before the switch and after it, planned as the saving sampler did
        saved.set_epoch(epoch)
        resumed.set_epoch(epoch)
        assert list(resumed) == list(saved)


# -- online: micro-batches with images ----------------------------------------------------------

# Seconds of 1, bs*L, bs*L^2, a patch (0.3 padded tokens), a patch^2 and an image.
C0, C1, C2, C3, C4, C5 = 3e-4, 2e-6, 4e-8, 0.3 * 2e-6, 6e-9, 1e-4


def seconds(bs, length, images):
    patches, squares, count = encoder_sums(images)
    return (C0 + C1 * bs * length + C2 * bs * length ** 2 + C3 * patches + C4 * squares
            + C5 * count)


MICRO_BATCHES = [(bs, length, images) for bs in (1, 2, 4) for length in (16, 40, 90)
                 for images in ([], [64], [256, 64], [1024])]


def test_the_online_fit_recovers_the_encoder_coefficients_jointly():
    stats = online.Statistics()
    for bs, length, images in MICRO_BATCHES:
        stats.add(bs, length, bs * length, seconds(bs, length, images), images=images)
    fit = stats.fit()
    assert fit[:6] == pytest.approx((C0, C1, C2, C3, C4, C5), rel=1e-6)
    assert fit[6] == pytest.approx(1.0) and fit[7] < 1e-6
    assert stats.images() == sum(len(i) for *_, i in MICRO_BATCHES)


def test_the_online_fit_without_images_is_the_text_fit_and_keeps_the_encoder_part():
    stats = online.Statistics()
    for bs, length, _ in MICRO_BATCHES:
        stats.add(bs, length, bs * length, seconds(bs, length, []))
    assert stats.fit()[:6] == pytest.approx((C0, C1, C2, 0.0, 0.0, 0.0), rel=1e-6)
    sampler = brs.BatchRebalanceSampler(LENGTHS, per_device_batch_size=4, encoder_weight=0.5,
                                        encoder_alpha=0.02, encoder_intercept=7.0)
    calibration = online.OnlineCalibration()
    calibration.timer.local = stats
    metrics = calibration.recalibrate(sampler, 1)
    assert "brs/calibration_encoder_alpha" not in metrics
    assert "brs/calibration_encoder_weight" not in metrics
    assert (sampler.encoder_weight, sampler.encoder_alpha, sampler.encoder_intercept) == (
        0.5, 0.02, 7.0)
    assert sampler.alpha == pytest.approx(C2 / C1, abs=1e-6)


def test_online_recalibration_switches_the_encoder_part_timed_through_the_timer(monkeypatch,
                                                                               caplog):
    clock = known_cost.FakeClock()
    monkeypatch.setattr(online, "time", clock)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    timer = online.Timer()
    for rep in range(2):  # the first run of each (bs, L) is kept apart
        for bs, length, images in MICRO_BATCHES:
            grid = torch.tensor([[1, 8, p // 8] for p in images], dtype=torch.long)
            inputs = {"input_ids": torch.zeros(bs, length, dtype=torch.long)}
            if images:
                inputs["image_grid_thw"] = grid
            shape = online.batch_shape(inputs)
            timer.start(torch.device("cpu"))
            clock.now += seconds(bs, length, images)
            timer.stop(*shape)
    calibration = online.OnlineCalibration()
    calibration.timer = timer
    sampler = brs.BatchRebalanceSampler(LENGTHS, per_device_batch_size=4)
    with caplog.at_level(logging.INFO, logger="brs"):
        metrics = calibration.recalibrate(sampler, 1)
    assert metrics["brs/calibration_encoder_weight"] == pytest.approx(C3 / C1, abs=1e-6)
    assert sampler.encoder_weight == pytest.approx(C3 / C1, abs=1e-6)
    assert "encoder_weight 1 -> 0.3" in caplog.text
    assert metrics["brs/calibration_encoder_alpha"] == pytest.approx(C4 / C1, abs=1e-6)
    assert sampler.encoder_alpha == pytest.approx(C4 / C1, abs=1e-6)
    assert sampler.encoder_intercept == pytest.approx(C5 / C1, abs=1e-6)
    assert sampler.cost_model.timing["images"] > 0


def test_saved_statistics_from_before_the_encoder_terms_restore():
    text_fields = [f for f in online.FIELDS if not any(str(i) in f for i in (3, 4, 5))]
    stats = online.Statistics.from_saved(list(range(len(text_fields))), text_fields)
    assert stats.images() == 0.0 and stats["n"] == 0.0
    assert stats["first_n"] == text_fields.index("first_n")


def test_cost_terms_are_the_text_terms_then_the_encoders():
    assert cost_terms(2, 10) == (1, 20, 200, 0, 0, 0)
    assert cost_terms(2, 10, *encoder_sums([3, 4])) == (1, 20, 200, 7, 25, 2)
    bs = np.array([1, 2])
    assert [t.shape for t in cost_terms(bs, 8)] == [(2,)] * 6
    cm = CostModel(0.5, 10.0, encoder_alpha=0.25, encoder_intercept=2.0)
    assert cm.cost(1, 4, images=[2]) == 10 + 4 + 0.5 * 16 + 2 + 0.25 * 4 + 2
    cm.encoder_weight = 0.5  # a patch at half a padded token
    assert cm.cost(1, 4, images=[2]) == 10 + 4 + 0.5 * 16 + 0.5 * 2 + 0.25 * 4 + 2
    assert cm.coefficients == (10.0, 1.0, 0.5, 0.5, 0.25, 2.0)
    with pytest.raises(ValueError, match="images go with one micro-batch"):
        CostModel(0.5, seconds_per_unit=1.0).predict(bs, 8, images=[2])
