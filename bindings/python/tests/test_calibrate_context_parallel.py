"""brs.calibrate(..., cp_size=4) on 4 gloo processes (cp_calibrate.py): every degree and length
timed, cp_comm_cost and cp_latency fitted beside alpha and the intercept, the held-out error on
CP micro-batches recorded, and the file plans a context-parallel sampler with its terms. And the
held-out split itself on a fake clock of known cost (no processes): the fit never reads a
held-out timing, and on exact timings its error is nought."""

import math

import pytest

pytest.importorskip("torch")

import brs  # noqa: E402
import brs_testing  # noqa: E402
from brs.calibration import context_parallel as cpcal  # noqa: E402
from brs_testing import TESTS  # noqa: E402

LENGTHS = [64, 96, 128, 192, 256, 320, 384, 512]
DEGREES = [1, 2, 4]
# (seconds per unit, intercept, alpha, cp_comm_cost, cp_latency): the fake clock's cost
KNOWN = (2e-5, 40.0, 0.002, 0.5, 300.0)


def fake_clock(held_out_factor=1.0):
    """{(length, degree): seconds} of the known cost, held-out micro-batches times a factor."""
    held_out = set(cpcal.split(LENGTHS, DEGREES)[1])
    return {(length, c): cpcal.predict(KNOWN, length, c) * (
        held_out_factor if (length, c) in held_out else 1.0)
        for c in DEGREES for length in LENGTHS}


def test_the_held_out_micro_batches_are_cp_ones_outside_the_fit():
    fitted_on, held_out = cpcal.split(LENGTHS, DEGREES)
    assert set(fitted_on).isdisjoint(held_out)
    assert set(fitted_on) | set(held_out) == {(n, c) for n in LENGTHS for c in DEGREES}
    assert all(c > 1 for _, c in held_out)
    for c in (2, 4):  # every CP degree is both fitted on and judged on
        assert 0 < sum(d == c for _, d in held_out) < len(LENGTHS)
    _, record = cpcal.fit_held_out(fake_clock(), LENGTHS, DEGREES)
    assert record["cp_held_out"] == [list(key) for key in held_out]
    assert record["cp_fitted_on"] == [list(key) for key in fitted_on]
    assert len(record["cp_held_out_errors"]) == len(held_out)


def test_on_a_fake_clock_of_known_cost_the_fit_recovers_it_and_its_error_is_nought():
    fitted, record = cpcal.fit_held_out(fake_clock(), LENGTHS, DEGREES)
    assert fitted == pytest.approx(KNOWN, rel=1e-6)
    assert record["cp_held_out_median_error"] == pytest.approx(0, abs=1e-9)


def test_the_fit_never_reads_a_held_out_timing():
    fitted, record = cpcal.fit_held_out(fake_clock(held_out_factor=3.0), LENGTHS, DEGREES)
    assert fitted == pytest.approx(KNOWN, rel=1e-6)  # as if the held-out ones were exact
    assert record["cp_held_out_errors"] == pytest.approx([2 / 3] * len(record["cp_held_out"]))


@pytest.fixture(scope="module")
def cost_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("cpcal") / "cost.json"
    brs_testing.torchrun(TESTS / "cp_calibrate.py", out, nproc=4, timeout=300)
    return brs.CostModel.load(out)


@pytest.mark.distributed
def test_every_degree_and_length_timed(cost_model):
    import cp_calibrate

    timed = {(t["length"], t["degree"]) for t in cost_model.timings}
    assert timed == {(length, c) for length in cp_calibrate.LENGTHS for c in (1, 2, 4)}
    assert all(t["seconds"] > 0 for t in cost_model.timings)
    assert cost_model.timing["degrees"] == [1, 2, 4] and cost_model.timing["backend"] == "gloo"


@pytest.mark.distributed
def test_the_cp_terms_are_fitted_and_the_held_out_error_recorded(cost_model):
    import cp_calibrate

    assert cost_model.source == "calibrated" and cost_model.seconds_per_unit > 0
    assert cost_model.cp_comm_cost is not None and cost_model.cp_latency is not None
    fitted_on, held_out = cpcal.split(cp_calibrate.LENGTHS, DEGREES)
    assert cost_model.timing["cp_held_out"] == [list(key) for key in held_out]
    assert cost_model.timing["cp_fitted_on"] == [list(key) for key in fitted_on]
    assert math.isfinite(cost_model.timing["cp_held_out_median_error"])


@pytest.mark.distributed
def test_the_fitted_file_plans_with_its_terms(cost_model):
    s = brs.BatchRebalanceSampler([100, 900, 3000, 50] * 8, per_device_batch_size=2,
                                  grad_accum=2, dp_size=1, rank=0, cp_size=4,
                                  max_tokens_per_rank=4096, packed=True, cost_model=cost_model)
    assert s.cp_comm_cost == pytest.approx(cost_model.cp_comm_cost, abs=1e-6)
    assert s.cp_latency == pytest.approx(cost_model.cp_latency, abs=1e-6)
    assert s.plan(0).micro_sync_time > 0
