"""brs.trial under torchrun (docs/trial.md, "Under torchrun"): 2 processes (gloo, CPU), one per
dp rank, run trial_torchrun.py on a tiny GPT-2. Every rank returns the same results; only rank
0 writes results.json (the schema, "processes" naming torchrun) and prints; the step times are
the measured wall clock, one per timed step; the micro-batch records hold both ranks; a dp_size
that disagrees with the world size, and a memory budget no batch fits on any rank, are refused
on every rank. No timing is asserted."""

import json
import math

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import brs_testing  # noqa: E402
from brs_testing import TESTS  # noqa: E402

pytestmark = pytest.mark.distributed

SCRIPT = TESTS / "trial_torchrun.py"
TIMEOUT_S = 120


def _strategies():
    from brs._trial import plans

    names = ["brs", "upstream", "random"]
    return names if plans.upstream_class()[0] is not None else ["brs", "random"]


@pytest.fixture(scope="module")
def api_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("trial-api")
    brs_testing.torchrun(SCRIPT, "api", out, nproc=2, timeout=TIMEOUT_S)
    return out, [json.loads((out / f"returned-{rank}.json").read_text()) for rank in range(2)]


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    import trial_torchrun

    out = tmp_path_factory.mktemp("trial-cli")
    (out / "tiny-gpt2").mkdir()
    (out / "tiny-gpt2" / "config.json").write_text(
        json.dumps({"model_type": "gpt2", **trial_torchrun.TINY_GPT2}))
    (out / "tiny.lengths").write_text("".join(f"{n}\n" for n in trial_torchrun.LENGTHS))
    brs_testing.torchrun(SCRIPT, "cli", out, nproc=2, timeout=TIMEOUT_S)
    return out, [json.loads((out / f"status-{rank}.json").read_text()) for rank in range(2)]


def test_every_rank_returns_the_same_results(api_run):
    _, (zero, one) = api_run
    assert zero["results"]["verdict"] == one["results"]["verdict"]
    for name in _strategies():
        assert (zero["results"]["strategies"][name]["step_seconds"]
                == one["results"]["strategies"][name]["step_seconds"])
    assert zero["results"] == one["results"]


def test_only_rank_0_writes_the_schema(api_run):
    out, (returned, _) = api_run
    assert not (out / "rank1").exists()
    saved = json.loads((out / "rank0" / "results.json").read_text())
    for key, kind in {"device": str, "torch": str, "strategies": dict, "paired": dict,
                      "prediction_error": dict, "verdict": str, "processes": str,
                      "step_clock": str}.items():
        assert isinstance(saved[key], kind), key
    assert saved["processes"].startswith("torchrun: 2 processes, one per dp rank")
    assert saved["step_clock"] == "wall clock between barriers, max over ranks"
    assert saved["dp_size"] == 2 and saved["sync"] == "micro_step"
    assert saved["verdict"] == returned["results"]["verdict"]
    assert set(returned["results"]) == set(saved)
    assert (out / "rank0" / "report.md").read_text().count("torchrun: 2 processes") >= 1


def test_step_times_are_measured_per_step(api_run):
    _, (returned, _) = api_run
    results = returned["results"]
    assert list(results["strategies"]) == _strategies()
    for name, s in results["strategies"].items():
        assert len(s["step_seconds"]) == 2, name
        assert all(isinstance(x, float) and x > 0 for x in s["step_seconds"]), name
        # the sync in force is the clock's; the other stays the sync model's arithmetic
        assert s["step_seconds_micro_step"] == s["step_seconds"]
        assert len(s["step_seconds_step"]) == 2
    if "upstream" in results["strategies"]:
        ours = results["strategies"]["brs"]["step_seconds"]
        theirs = results["strategies"]["upstream"]["step_seconds"]
        logs = [math.log(a / b) for a, b in zip(ours, theirs)]
        p = results["paired"]["brs/upstream"]
        assert p["ratio"] == pytest.approx(math.exp(sum(logs) / len(logs)), rel=1e-9)
        assert p["faster_steps"] == sum(a < b for a, b in zip(ours, theirs))


def test_micro_batch_records_hold_both_ranks(api_run):
    _, (returned, _) = api_run
    records = returned["results"]["micro_batches"]
    assert {r["rank"] for r in records} == {0, 1}
    for name in _strategies():
        for i in range(2):  # each round: every rank's grad_accum 2 micro-batches, once
            cells = sorted((r["rank"], r["micro"]) for r in records
                           if r["strategy"] == name and r["round"] == i)
            assert cells == [(0, 0), (0, 1), (1, 0), (1, 1)], (name, i)


def test_a_dp_size_that_disagrees_is_refused_on_every_rank(api_run):
    _, returned = api_run
    for rank in returned:
        assert rank["refused"] is not None, rank["rank"]
        assert "dp_size 3 disagrees with the world size 2" in rank["refused"]


def test_a_batch_that_fits_on_no_rank_is_refused_on_every_rank(api_run):
    _, (zero, one) = api_run
    assert zero["too_small"] == one["too_small"]  # the same words, naming the first rank
    assert zero["too_small"].startswith("rank 0: brs's largest micro-batch does not fit even "
                                        "at per_device_batch_size 1")


def test_the_command_under_torchrun(cli_run):
    out, (zero, one) = cli_run
    # --dp-size 3: status 2 on every rank, one line from rank 0, nothing written
    assert zero["refused"]["status"] == one["refused"]["status"] == 2
    line, = zero["refused"]["stderr"].strip().splitlines()
    assert line.startswith("python -m brs trial: dp_size 3 disagrees with the world size 2")
    assert one["refused"]["stderr"] == "" and not (out / "refused").exists()
    # the default dp_size is the world size; rank 0 alone prints and writes
    assert zero["run"]["status"] == one["run"]["status"] == 0
    assert "brs trial on cpu" in zero["run"]["stdout"] and one["run"]["stdout"] == ""
    saved = json.loads((out / "cli" / "results.json").read_text())
    assert saved["dp_size"] == 2 and saved["processes"].startswith("torchrun: 2 processes")
