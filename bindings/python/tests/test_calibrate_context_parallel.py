"""brs.calibrate(..., cp_size=4) on 4 gloo processes (cp_calibrate.py): every degree and length
timed, cp_comm_cost and cp_latency fitted beside alpha and the intercept, the held-out error on
CP micro-batches recorded, and the file plans a context-parallel sampler with its terms."""

import math

import pytest

pytest.importorskip("torch")

import brs  # noqa: E402
import brs_testing  # noqa: E402
from brs_testing import TESTS  # noqa: E402

pytestmark = pytest.mark.distributed


@pytest.fixture(scope="module")
def cost_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("cpcal") / "cost.json"
    brs_testing.torchrun(TESTS / "cp_calibrate.py", out, nproc=4, timeout=300)
    return brs.CostModel.load(out)


def test_every_degree_and_length_timed(cost_model):
    import cp_calibrate

    timed = {(t["length"], t["degree"]) for t in cost_model.timings}
    assert timed == {(length, c) for length in cp_calibrate.LENGTHS for c in (1, 2, 4)}
    assert all(t["seconds"] > 0 for t in cost_model.timings)
    assert cost_model.timing["degrees"] == [1, 2, 4] and cost_model.timing["backend"] == "gloo"


def test_the_cp_terms_are_fitted_and_the_held_out_error_recorded(cost_model):
    assert cost_model.source == "calibrated" and cost_model.seconds_per_unit > 0
    assert cost_model.cp_comm_cost is not None and cost_model.cp_latency is not None
    assert cost_model.timing["cp_held_out"] == 4 * 2  # odd-ranked lengths at degrees 2 and 4
    assert math.isfinite(cost_model.timing["cp_held_out_median_error"])


def test_the_fitted_file_plans_with_its_terms(cost_model):
    s = brs.BatchRebalanceSampler([100, 900, 3000, 50] * 8, per_device_batch_size=2,
                                  grad_accum=2, dp_size=1, rank=0, cp_size=4,
                                  max_tokens_per_rank=4096, packed=True, cost_model=cost_model)
    assert s.cp_comm_cost == pytest.approx(cost_model.cp_comm_cost, abs=1e-6)
    assert s.cp_latency == pytest.approx(cost_model.cp_latency, abs=1e-6)
    assert s.plan(0).micro_sync_time > 0
