"""brs trial --cp-size (docs/trial.md, "Context parallelism"): torchrun with 4 processes (gloo,
CPU) runs `python -m brs trial --cp-size 4` on a tiny reference decoder and lengths of which
some need context parallelism. Checked on what the ranks built and timed: every sample of every
timed step trained exactly once by each strategy, and the step's samples those a brs sampler
draws for it; no rank's tensors above max_tokens_per_rank; brs used several degrees, fixed CP
the one the longest sample needs; all three strategies timed on the same steps; report.md has
every row. No timing is asserted."""

import json
import random
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("megatron.core.pipeline_parallel.hybrid_cp_schedule")

import brs  # noqa: E402
import brs_testing  # noqa: E402

pytestmark = pytest.mark.distributed

C, T, P, G, STEPS = 4, 16, 1, 4, 3
STRATEGIES = ("brs", "fixed", "megatron")


def lengths():
    rng = random.Random(3)
    return [rng.randint(4, 60) for _ in range(64)]  # up to 60 tokens: degree 4 under T = 16


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("trial-cp")
    (out / "tiny.lengths").write_text("".join(f"{n}\n" for n in lengths()))
    (out / "tiny.json").write_text(json.dumps({"vocab": 32, "dim": 16}))
    brs_testing.torchrun("-m", "brs", "trial", "--cp-size", C, "--max-tokens-per-rank", T,
                         "--model", out / "tiny.json", "--lengths", out / "tiny.lengths",
                         "--per-device-batch-size", P, "--grad-accum", G, "--steps", STEPS,
                         "--out", out / "trial", "--no-progress", nproc=C, timeout=120)
    return json.loads((out / "trial" / "results.json").read_text()), \
        (out / "trial" / "report.md").read_text()


def drawn(step):
    """The samples a brs sampler of the same job draws for ``step``."""
    s = brs.BatchRebalanceSampler(lengths(), per_device_batch_size=P, grad_accum=G, dp_size=1,
                                  rank=0, cp_size=C, max_tokens_per_rank=T, packed=True, seed=0)
    plan = s.plan(step)
    return sorted(i for r, mbs in enumerate(plan.micro_batches) for mb in mbs
                  if r == mb.cp_ranks[0] for i in mb.indices)


def test_every_sample_of_every_step_trained_once_per_strategy(run):
    results, _ = run
    data = lengths()
    for k, step in enumerate(results["timed_steps"]):
        samples = drawn(step)
        assert len(samples) == P * G
        for name in STRATEGIES:
            trained = dict(results["strategies"][name]["trained"][k])
            assert sorted(trained) == samples, (name, step)
            assert all(trained[i] == data[i] for i in samples), (name, step)


def test_no_rank_holds_more_than_the_cap(run):
    results, _ = run
    for name in STRATEGIES:
        assert 0 < results["strategies"][name]["peak_tokens_per_rank"] <= T, name


def test_some_samples_need_context_parallelism(run):
    results, _ = run
    assert results["fixed_degree"] == 4 and results["strategies"]["fixed"]["degrees"] == [4]
    assert max(results["strategies"]["brs"]["degrees"]) > 1
    assert max(results["strategies"]["megatron"]["degrees"]) > 1


def test_all_three_timed_on_the_same_steps(run):
    results, _ = run
    assert len(results["timed_steps"]) == STEPS
    for name in STRATEGIES:
        seconds = results["strategies"][name]["step_seconds"]
        assert len(seconds) == STEPS and all(s > 0 for s in seconds), name
    for key in ("brs/fixed", "brs/megatron", "fixed/megatron"):
        assert results["paired"][key]["steps"] == STEPS
    assert results["processes"].startswith(f"torchrun: {C} processes")


def test_the_report_has_every_row(run):
    results, report = run
    assert report.startswith("# brs trial: context parallelism")
    assert f"torchrun --nproc_per_node={C} -m brs trial --cp-size {C}" in report
    for row in ("| brs (dynamic CP) |", "| fixed CP (degree 4) |",
                "| Megatron BalancedCPScheduler |", "| brs/fixed |", "| brs/megatron |",
                "| fixed/megatron |"):
        assert row in report, row
    assert results["verdict"] in report


def test_help_names_the_flag_and_one_process_is_refused(tmp_path):
    env = brs_testing.child_env()
    shown = subprocess.run([sys.executable, "-m", "brs", "trial", "--help"], env=env,
                           capture_output=True, text=True)
    assert shown.returncode == 0 and "--cp-size" in shown.stdout
    (tmp_path / "x.lengths").write_text("8\n16\n")
    refused = subprocess.run([sys.executable, "-m", "brs", "trial", "--cp-size", "2",
                              "--max-tokens-per-rank", "8", "--model", "reference",
                              "--lengths", str(tmp_path / "x.lengths"),
                              "--per-device-batch-size", "1", "--out", str(tmp_path / "o")],
                             env=env, capture_output=True, text=True)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1].startswith("python -m brs trial: the "
                                                              "context-parallel trial runs one")
