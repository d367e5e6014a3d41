"""brs.CostModel: the JSON file (round trip, atomic writes, refused files), the analytic alpha of
a transformers config, and the sampler options it supplies."""

import json
import math
import os

import pytest

import brs
from brs import BatchRebalanceSampler, CostModel
from brs import _options, cost_model as cost_model_module

LENGTHS = [(i * 37) % 500 + 10 for i in range(400)]


def sampler(**options):
    return BatchRebalanceSampler(LENGTHS, per_device_batch_size=4, grad_accum=2, dp_size=2,
                                 rank=0, **options)


def calibrated():
    return CostModel(0.0042, 17.5, 3000, r2=0.98, worst_residual=0.07, source="calibrated",
                     model="m", device="cpu", seconds_per_unit=1e-6,
                     memory={"bytes_per_token": 1024.0},
                     timings=[{"batch_size": 1, "length": 8, "seconds": 0.01}])


# -- JSON ----------------------------------------------------------------------------------------

def test_save_then_load_gives_the_same_model(tmp_path):
    path = tmp_path / "cost.json"
    cm = calibrated()
    cm.save(path)
    data = json.loads(path.read_text())
    assert (data["format"], data["version"]) == ("brs-cost-model", 1)
    assert (data["alpha"], data["intercept"], data["max_tokens"]) == (0.0042, 17.5, 3000)
    assert CostModel.load(path) == cm
    assert CostModel.load(str(path)).timings == cm.timings


def test_unknown_keys_are_ignored_and_optional_ones_default(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"format": "brs-cost-model", "version": 1, "alpha": 0.5,
                                "intercept": 0.0, "something_new": [1, 2]}))
    cm = CostModel.load(path)
    assert (cm.alpha, cm.intercept, cm.max_tokens, cm.r2) == (0.5, 0.0, None, None)


@pytest.mark.parametrize("content, message", [
    ({"format": "other", "version": 1, "alpha": 0.1}, "format"),
    ({"version": 1, "alpha": 0.1}, "format"),
    ({"format": "brs-cost-model", "version": 2, "alpha": 0.1}, "version"),
    ({"format": "brs-cost-model", "version": 1}, "alpha"),
    ({"format": "brs-cost-model", "version": 1, "alpha": -1.0}, "alpha"),
    ({"format": "brs-cost-model", "version": 1, "alpha": 0.1, "intercept": 0.0,
      "max_tokens": 0}, "max_tokens"),
    ({"format": "brs-cost-model", "version": 1, "alpha": "big"}, "alpha"),
    ([1, 2, 3], "JSON object"),
])
def test_load_refuses_bad_files(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ValueError, match=message):
        CostModel.load(path)


def test_load_refuses_a_file_that_is_not_json_or_missing(tmp_path):
    path = tmp_path / "notjson.json"
    path.write_text("alpha = 0.1\n")
    with pytest.raises(ValueError, match="not a valid JSON cost-model file"):
        CostModel.load(path)
    with pytest.raises(ValueError, match="cannot read"):
        CostModel.load(tmp_path / "absent.json")


def test_a_failed_save_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "cost.json"
    calibrated().save(path)
    before = path.read_bytes()
    bad = calibrated()
    bad.memory = {"x": math.nan}  # not JSON: refused before anything is written
    with pytest.raises(ValueError):
        bad.save(path)

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        CostModel(0.9).save(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cost.json"]


# -- the sampler -------------------------------------------------------------------------------

def test_a_cost_model_sets_alpha_intercept_and_max_tokens_of_the_sampler(tmp_path):
    cm = calibrated()
    explicit = sampler(alpha=cm.alpha, intercept=cm.intercept, max_tokens=cm.max_tokens)
    assert sampler(cost_model=cm).fingerprint == explicit.fingerprint
    path = tmp_path / "cost.json"
    cm.save(path)
    from_path = sampler(cost_model=str(path))
    assert from_path.fingerprint == explicit.fingerprint
    assert (from_path.alpha, from_path.intercept, from_path.max_tokens) == (0.0042, 17.5, 3000)
    assert sampler(cost_model=path).fingerprint == explicit.fingerprint  # a pathlib.Path


def test_the_cost_model_changes_the_fingerprint_and_explicit_values_win():
    cm = calibrated()
    assert sampler(cost_model=cm).fingerprint != sampler().fingerprint
    mixed = sampler(cost_model=cm, alpha=0.001)
    assert (mixed.alpha, mixed.intercept, mixed.max_tokens) == (0.001, 17.5, 3000)
    assert sampler(cost_model=CostModel.fixed()).fingerprint == sampler().fingerprint


def test_the_sampler_refuses_other_cost_model_types(tmp_path):
    with pytest.raises(TypeError, match="cost_model"):
        sampler(cost_model=0.001)
    with pytest.raises(ValueError, match="cannot read"):
        sampler(cost_model=str(tmp_path / "absent.json"))


def test_resolve_falls_back_to_the_library_defaults():
    alpha, intercept = (_options.BY_NAME[name].default for name in ("alpha", "intercept"))
    assert cost_model_module.resolve(None, None, None, None) == (alpha, intercept, None)


# -- from_config -------------------------------------------------------------------------------

transformers = pytest.importorskip("transformers")


def gpt2(**overrides):
    settings = dict(n_layer=12, n_embd=768, n_head=12, vocab_size=50257, n_positions=1024)
    settings.update(overrides)
    return transformers.GPT2Config(**settings)


def llama(**overrides):
    settings = dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
                    num_key_value_heads=8, intermediate_size=14336, vocab_size=128256,
                    hidden_act="silu")
    settings.update(overrides)
    return transformers.LlamaConfig(**settings)


def test_gpt2_small_alpha_is_attention_over_linear_flops():
    h, layers, vocab = 768, 12, 50257
    linear = layers * (4 * h * h + 2 * h * 4 * h) + h * vocab
    attention = layers * 2 * h / 2  # QK^T and AV, causal half
    cm = CostModel.from_config(gpt2())
    assert cm.source == "analytic" and cm.intercept == 0.0
    assert cm.alpha == pytest.approx(attention / linear, rel=1e-12)
    assert CostModel.from_config(gpt2(), causal=False).alpha == pytest.approx(2 * cm.alpha)


def test_wider_models_and_grouped_kv_heads_move_alpha_the_right_way():
    small, big = CostModel.from_config(gpt2()).alpha, CostModel.from_config(llama()).alpha
    assert big < small < CostModel.fixed().alpha
    # Fewer KV heads: less linear work in k/v projections, same attention: alpha rises.
    assert CostModel.from_config(llama(num_key_value_heads=2)).alpha > big
    # SwiGLU has three MLP matrices where GELU has two: more linear work, lower alpha.
    assert CostModel.from_config(llama(hidden_act="gelu")).alpha > big


def test_moe_counts_the_active_experts_only():
    dense = transformers.Qwen2MoeConfig(hidden_size=512, num_hidden_layers=4,
                                        num_attention_heads=8, num_key_value_heads=8,
                                        vocab_size=1000, num_experts=8, num_experts_per_tok=2,
                                        moe_intermediate_size=256,
                                        shared_expert_intermediate_size=0)
    more = transformers.Qwen2MoeConfig(**{**dense.to_dict(), "num_experts_per_tok": 4})
    assert CostModel.from_config(more).alpha < CostModel.from_config(dense).alpha


def qwen2_vl(**vision):
    return transformers.Qwen2VLConfig(
        text_config=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, intermediate_size=176, vocab_size=4096),
        vision_config=dict(dict(depth=2, embed_dim=32, hidden_size=64, num_heads=2,
                                patch_size=14, spatial_merge_size=2, temporal_patch_size=2,
                                in_channels=3), **vision))


def test_a_vision_language_config_prices_text_as_its_text_config():
    config = qwen2_vl()
    vlm, text = CostModel.from_config(config), CostModel.from_config(config.text_config)
    for key in ("alpha", "intercept", "max_tokens", "source"):
        assert getattr(vlm, key) == getattr(text, key)
    assert vlm.memory["flops"] == text.memory["flops"]
    assert vlm.memory["activation_bytes_per_token"] == text.memory["activation_bytes_per_token"]
    # the text config alone knows no tower: the library's encoder defaults
    assert (text.encoder_weight, text.encoder_alpha, text.encoder_intercept) == (
        CostModel.fixed().encoder_weight, CostModel.fixed().encoder_alpha,
        CostModel.fixed().encoder_intercept)


def test_a_vision_config_gives_the_encoder_part_in_text_token_units():
    config = qwen2_vl()
    cm = CostModel.from_config(config)
    text_linear = cm.memory["flops"]["linear_per_token"]
    e, depth, out, merge = 32, 2, 64, 2
    per_patch = (3 * 2 * 14 * 14 * e                # patch embedding
                 + depth * (4 * e * e + 2 * e * 4 * e)  # q, k, v, o; MLP of ratio 4
                 + e * e * merge * merge + e * out)  # the merger, per patch
    assert cm.encoder_weight == pytest.approx(per_patch / text_linear, rel=1e-12)
    assert cm.encoder_alpha == pytest.approx(depth * 2 * e / text_linear, rel=1e-12)
    assert cm.encoder_intercept == 0.0
    wider = CostModel.from_config(qwen2_vl(embed_dim=64))
    assert wider.encoder_weight > cm.encoder_weight and wider.alpha == cm.alpha


def test_from_config_refuses_what_is_not_a_decoder_config():
    with pytest.raises(ValueError, match="hidden size"):
        CostModel.from_config(object())


def test_the_package_exports_the_api():
    assert brs.CostModel is CostModel and callable(brs.calibrate)


# -- predict -------------------------------------------------------------------------------------

def test_predict_is_seconds_per_unit_times_the_cost():
    cm = calibrated()
    assert cm.predict(4, 100) == pytest.approx(1e-6 * (17.5 + 400 + 0.0042 * 400 * 100))
    assert isinstance(cm.predict(4, 100), float)
    assert cm.predict(1, 1) < cm.predict(2, 1) < cm.predict(2, 3)


def test_predict_broadcasts_over_numpy_arrays():
    np = pytest.importorskip("numpy")
    cm = calibrated()
    bs, length = np.array([1, 2, 8]), np.array([[16], [512]])
    grid = cm.predict(bs, length)
    assert grid.shape == (2, 3)
    assert grid[1, 2] == pytest.approx(cm.predict(8, 512))
    assert cm.predict([1, 2], 64).tolist() == [cm.predict(1, 64), cm.predict(2, 64)]


@pytest.mark.parametrize("batch_size, length, error, message", [
    (0, 10, ValueError, "batch_size must be a finite number >= 1"),
    (2, math.inf, ValueError, "length must be a finite number >= 1"),
    ([1, 0], 10, ValueError, "every batch_size"),
    (2, [8, -1], ValueError, "every length"),
    (True, 10, TypeError, "not booleans"),
    ("8", 10, TypeError, "batch_size must be a number"),
    ([1, 2], [1, 2, 3], ValueError, "do not broadcast"),
])
def test_predict_names_a_bad_shape(batch_size, length, error, message):
    pytest.importorskip("numpy")
    with pytest.raises(error, match=message):
        calibrated().predict(batch_size, length)


@pytest.mark.parametrize("cm", [CostModel.fixed(), CostModel(0.01, 5.0)],
                         ids=["fixed", "hand-made"])
def test_predict_needs_a_calibrated_model(cm):
    with pytest.raises(ValueError, match="no seconds_per_unit.*calibrate"):
        cm.predict(1, 8)


def test_the_timing_record_round_trips_and_old_files_load(tmp_path):
    cm = calibrated()
    cm.timing = {"clock": "thread_time", "estimator": "min", "rounds": 5,
                 "load_average": [0.5, 0.7], "busy": False}
    cm.save(tmp_path / "cost.json")
    assert CostModel.load(tmp_path / "cost.json").timing == cm.timing
    old = cm.to_dict()
    del old["timing"]  # a file written before the record existed
    assert CostModel.from_dict(old).timing == {}
