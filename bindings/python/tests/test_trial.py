"""brs.trial and python -m brs trial (docs/trial.md): the schema of results.json, every strategy,
the largest-batch search under a memory budget, the statistics against values computed here,
and bad input (exit status 2, one line on stderr, nothing timed). No timing is asserted: a
shared CPU moves every time.
"""

import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import brs  # noqa: E402
from brs._trial import largest, measure, plans, stats  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[3]
TINY_GPT2 = {"model_type": "gpt2", "n_layer": 1, "n_embd": 32, "n_head": 2, "vocab_size": 100,
             "n_positions": 1024, "bos_token_id": 0, "eos_token_id": 0}
LENGTHS = [12, 40, 7, 90, 33, 150, 18, 64, 25, 110, 9, 48, 71, 15, 200, 30, 55, 22, 80, 13,
           37, 95, 28, 60, 44, 17, 130, 26, 52, 11, 75, 39]
JOB = ["--per-device-batch-size", "2", "--grad-accum", "2", "--dp-size", "2", "--steps", "2",
       "--pad-to-multiple-of", "16", "--no-progress"]


def _has_upstream():
    return plans.upstream_class()[0] is not None


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("trial")
    model = root / "tiny-gpt2"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(TINY_GPT2))
    lengths = root / "tiny.lengths"
    lengths.write_text("".join(f"{n}\n" for n in LENGTHS))
    return root, model, lengths


def _run(args, tmp):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "bindings" / "python"),
                                         env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "brs", "trial", *args], capture_output=True,
                          text=True, env=env, cwd=tmp, timeout=600)


@pytest.fixture(scope="module")
def cli_run(setup):
    root, model, lengths = setup
    out = root / "out"
    done = _run(["--model", str(model), "--lengths", str(lengths), "--out", str(out), *JOB],
                root)
    assert done.returncode == 0, done.stderr
    return done, json.loads((out / "results.json").read_text()), out


# -- the schema, every strategy --------------------------------------------------------------

# A measurement that goes missing (a peak, a thread time, the prediction error) fails: None is
# accepted only for the largest batch, which a CPU run without a budget does not search.
STRATEGY_KEYS = {"step_seconds": list, "step_thread_seconds": list,
                 "real_tokens_per_second": float, "peak_reserved_bytes": int,
                 "distinct_shapes": int, "first_shape_seconds": float,
                 "largest_batch": type(None)}


def test_cli_writes_the_schema(cli_run):
    done, results, out = cli_run
    for key, kind in {"device": str, "torch": str, "strategies": dict, "paired": dict,
                      "prediction_error": dict, "verdict": str}.items():
        assert isinstance(results[key], kind), key
    expected = ["brs", "upstream", "group_by_length", "random"]
    if not _has_upstream():
        expected.remove("upstream")
        assert results["skipped"] == ["upstream"]
    assert list(results["strategies"]) == expected
    for name, s in results["strategies"].items():
        for key, kind in STRATEGY_KEYS.items():
            assert isinstance(s[key], kind), (name, key, s[key])
        assert len(s["step_seconds"]) == 2
        assert all(isinstance(x, float) and x > 0 for x in s["step_seconds"])
        assert s["distinct_shapes"] >= 1
        assert s["peak_reserved_bytes"] > 0
        assert len(s["step_thread_seconds"]) == 2
        assert all(isinstance(x, float) and x > 0 for x in s["step_thread_seconds"])
    if _has_upstream():
        p = results["paired"]["brs/upstream"]
        for key, kind in {"ratio": float, "sign_test_p": float, "steps": int,
                          "faster_steps": int}.items():
            assert isinstance(p[key], kind), key
        assert len(p["ci95"]) == 2 and all(isinstance(x, float) for x in p["ci95"])
        assert p["steps"] == 2 and 0 <= p["faster_steps"] <= 2
        assert p["ci95"][0] <= p["ratio"] <= p["ci95"][1]
    e = results["prediction_error"]
    assert isinstance(e["median"], float) and isinstance(e["p90"], float)
    assert 0 <= e["median"] <= e["p90"]
    assert results["verdict"].count(".") >= 1 and "\n" not in results["verdict"]
    assert (out / "report.md").read_text().startswith("# brs trial\n\n```sh\npython -m brs trial")
    assert "brs trial on cpu" in done.stdout
    wrote = next(line for line in done.stdout.splitlines() if "wrote" in line)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "trial.png" not in wrote and 'pip install "brs[plot]"' in done.stdout
        assert not (out / "trial.png").exists()
    else:
        assert "trial.png" in wrote and (out / "trial.png").stat().st_size > 0


def test_brs_plans_with_a_cost_model_fitted_here(cli_run):
    # no --cost-model: brs.calibrate fitted one on this model before timing, and brs's plans
    # used it (its alpha is the sampler's), which the report and the output say
    done, results, out = cli_run
    cm = results["cost_model"]
    assert cm["source"] == "fitted here" and cm["alpha"] > 0
    assert cm["alpha"] != pytest.approx(brs.CostModel.fixed().alpha)
    report = (out / "report.md").read_text()
    assert "fitted by brs.calibrate on this model and device before timing" in report
    assert f"alpha {cm['alpha']:.4g}" in report and "fitted here" in done.stdout


def test_a_given_cost_model_is_what_brs_plans_with(setup, tmp_path):
    _, model, lengths = setup
    given = brs.CostModel(0.0042, 17.0)
    results = brs.trial(str(model), str(lengths), per_device_batch_size=2, grad_accum=2,
                        dp_size=2, steps=2, pad_to_multiple_of=16, strategies=("brs", "random"),
                        device="cpu", progress=False, cost_model=given, out=tmp_path)
    assert results["cost_model"]["source"] == "given"
    assert results["cost_model"]["alpha"] == pytest.approx(0.0042, rel=1e-3)
    assert "given (--cost-model / cost_model=)" in (tmp_path / "report.md").read_text()


def test_the_verdict_reads_the_thread_time_and_says_so(cli_run):
    done, results, out = cli_run
    assert results["verdict_clock"] == "thread_time"
    assert "by the thread's CPU time" in results["verdict"]
    report = (out / "report.md").read_text()
    assert "**The verdict's clock.** the thread's CPU time" in report
    # 2 steps are too few: the output and the report warn
    assert any("2 timed steps are few" in w for w in results["warnings"])
    assert "**Warning.** 2 timed steps are few" in report
    assert "warning: 2 timed steps are few" in done.stdout


def test_report_ends_with_the_arguments_it_supports(cli_run):
    _, results, out = cli_run
    report = (out / "report.md").read_text()
    tail = report[report.index("## Next step"):]
    cm = results["cost_model"]
    assert "brs.BatchRebalanceSampler(lengths, per_device_batch_size=2, grad_accum=2, " \
           f"pad_to_multiple_of=16, alpha={cm['alpha']:.6g}, intercept={cm['intercept']:.6g}" \
           in tail
    assert f"RebalanceOptions(alpha={cm['alpha']:.6g}" in tail
    assert report.rstrip().endswith("```")


def test_the_report_says_where_each_strategys_time_goes(cli_run):
    # the modelled useful / padding / waiting shares of every strategy, the library's split of
    # the timed steps under the cost model brs planned with (recomputed here from the library)
    _, results, out = cli_run
    cm = results["cost_model"]
    sampler = brs.BatchRebalanceSampler(LENGTHS, per_device_batch_size=2, grad_accum=2,
                                        dp_size=2, rank=0, pad_to_multiple_of=16, seed=0,
                                        cost_model=brs.CostModel(cm["alpha"], cm["intercept"]))
    report = (out / "report.md").read_text()
    table = report[report.index("## Where the time goes (modelled)"):]
    table = table[:table.index("\n## ")]
    for name, s in results["strategies"].items():
        split = s["time_split"]
        assert set(split) == {"useful", "padding", "waiting"}
        assert sum(split.values()) == pytest.approx(1.0)
        assert all(0 <= x <= 1 for x in split.values())
        row = next(line for line in table.splitlines() if line.startswith(f"| {name}"))
        assert row.endswith(f"| {split['useful']:.1%} | {split['padding']:.1%} | "
                            f"{split['waiting']:.1%} |")
    # brs's own plans, and random's micro-batches priced by brs's sampler
    random = sampler.with_options(strategy="random")
    steps = {"brs": [sampler.plan(t, epoch=0) for t in results["timed_steps"]],
             "random": [sampler.describe([[mb.indices for mb in rank]
                                          for rank in random.plan(t, epoch=0).micro_batches],
                                         t, epoch=0) for t in results["timed_steps"]]}
    for name, plans_of_steps in steps.items():
        expected = brs.report.Strategy(name, plans_of_steps).time_shares
        assert tuple(results["strategies"][name]["time_split"][k]
                     for k in ("useful", "padding", "waiting")) == pytest.approx(expected)
    if _has_upstream():
        assert "| upstream (transformers' batch_rebalance) |" in table


def test_without_matplotlib_the_figure_is_not_claimed(cli_run, tmp_path, monkeypatch):
    from brs._trial import cli as trial_cli, output

    _, results, _ = cli_run
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    written = output.write(results, tmp_path)
    assert written == ["results.json", "report.md"] and not (tmp_path / "trial.png").exists()
    assert 'no trial.png: matplotlib is not installed (pip install "brs[plot]"' in \
           (tmp_path / "report.md").read_text()
    line = [x for x in trial_cli.summary(results, tmp_path, written).splitlines() if "wrote" in x]
    assert line == [f"  wrote {tmp_path}/results.json, report.md"]


def test_same_samples_for_brs_and_upstream(setup):
    if not _has_upstream():
        pytest.skip("transformers has no BatchRebalanceSampler")
    _, _, lengths_file = setup
    lengths = brs.read_lengths_file(str(lengths_file))[0]
    planner = plans.Planner(lengths, per_device_batch_size=2, grad_accum=2, dp_size=2, seed=0,
                            pad_to_multiple_of=16, max_tokens=None, sampler_options={})
    for t in range(planner.steps_per_epoch("brs")):
        ours = sorted(i for rank in planner.step("brs", t) for mb in rank for i in mb.indices)
        theirs = sorted(i for rank in planner.step("upstream", t) for mb in rank
                        for i in mb.indices)
        assert ours == theirs
        for rank in planner.step("upstream", t):
            for mb in rank:
                assert mb.padded_length % 16 == 0
                assert mb.padded_length >= max(lengths[i] for i in mb.indices)


# -- statistics, checked against values computed here ------------------------------------------

def _t975_by_hand(df):
    """The 0.975 quantile of Student's t by bisection on its CDF (regularised incomplete beta
    by numerical integration of the density): independent of the module's table and scipy."""
    def density(x):
        return (math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
                * (1 + x * x / df) ** (-(df + 1) / 2))

    def cdf(x, n=20000):  # Simpson over [0, x]
        h = x / n
        total = density(0) + density(x) + sum((4 if k % 2 else 2) * density(k * h)
                                               for k in range(1, n))
        return 0.5 + total * h / 3

    low, high = 0.0, 20.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < 0.975 else (low, mid)
    return (low + high) / 2


@pytest.mark.parametrize("df", [1, 2, 5, 11, 35])
def test_t_quantile(df, monkeypatch):
    expected = _t975_by_hand(df)
    assert stats.t975(df) == pytest.approx(expected, rel=2e-3)
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # the table without scipy
    assert stats.t975(df) == pytest.approx(expected, rel=2e-3)


def _paired_by_hand(ours, theirs):
    d = [math.log(a) - math.log(b) for a, b in zip(ours, theirs)]
    n = len(d)
    mean = sum(d) / n
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1) / n)
    t = _t975_by_hand(n - 1)
    wins = sum(a < b for a, b in zip(ours, theirs))
    losses = sum(a > b for a, b in zip(ours, theirs))
    m = wins + losses
    k = min(wins, losses)
    p = min(1.0, 2 * sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m) if m else 1.0
    return math.exp(mean), [math.exp(mean - t * se), math.exp(mean + t * se)], p, wins


def test_paired_interval_and_sign_test():
    ours = [0.91, 1.02, 0.88, 0.95, 0.97, 0.90, 1.05, 0.93]
    theirs = [1.00, 1.00, 0.97, 1.01, 0.99, 0.98, 1.01, 1.02]
    got = stats.paired(ours, theirs)
    ratio, ci, p, wins = _paired_by_hand(ours, theirs)
    assert got["ratio"] == pytest.approx(ratio, rel=1e-12)
    assert got["ci95"] == pytest.approx(ci, rel=1e-3)
    assert got["sign_test_p"] == pytest.approx(p, rel=1e-12)
    assert (got["faster_steps"], got["steps"]) == (wins, 8)
    # 6 of 8 faster: P(X <= 2) * 2 = 2 * (1 + 8 + 28) / 256
    assert got["sign_test_p"] == pytest.approx(74 / 256)
    scipy_stats = pytest.importorskip("scipy.stats")
    d = [math.log(a / b) for a, b in zip(ours, theirs)]
    interval = scipy_stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert got["ci95"] == pytest.approx([math.exp(interval.low), math.exp(interval.high)],
                                        rel=1e-9)
    assert got["sign_test_p"] == pytest.approx(scipy_stats.binomtest(6, 8).pvalue, rel=1e-12)


def test_sign_test_edges():
    assert stats.sign_test(0, 0) == 1.0
    assert stats.sign_test(5, 0) == pytest.approx(2 / 32)
    assert stats.sign_test(3, 3) == 1.0


def test_results_statistics_recomputed(cli_run):
    _, results, _ = cli_run
    if "brs/upstream" not in results["paired"]:
        pytest.skip("no upstream")
    s = results["strategies"]
    p = results["paired"]["brs/upstream"]
    # the verdict's clock on CPU: the thread's CPU time of each step
    ratio, ci, sign, wins = _paired_by_hand(s["brs"]["step_thread_seconds"],
                                            s["upstream"]["step_thread_seconds"])
    assert p["ratio"] == pytest.approx(ratio, rel=1e-9)
    assert p["ci95"] == pytest.approx(ci, rel=1e-3)
    assert p["sign_test_p"] == pytest.approx(sign)
    assert p["faster_steps"] == wins
    spans = p["ci95"][0] <= 1 <= p["ci95"][1]
    assert ("indistinguishable" in results["verdict"]) == spans


def test_bootstrap_is_seeded():
    a, b = [1.0, 1.1, 0.9, 1.05], [1.2, 1.3, 1.25, 1.1]
    one, two = stats.bootstrap_ratio(a, b, seed=3), stats.bootstrap_ratio(a, b, seed=3)
    assert one == two
    assert one["ci95"][0] <= one["ratio"] <= one["ci95"][1] < 1


# -- the largest batch under a memory budget ------------------------------------------------------

def test_memory_budget_stops_the_doubling(setup, tmp_path):
    _, model, lengths_file = setup
    lengths = brs.read_lengths_file(str(lengths_file))[0]
    planner = plans.Planner(lengths, per_device_batch_size=2, grad_accum=2, dp_size=2, seed=0,
                            pad_to_multiple_of=16, max_tokens=None, sampler_options={})
    module, _ = measure.resolve_model(str(model), torch.device("cpu"))
    runner = measure.Runner(module, measure.Rows(lengths, None, 100, 0), None, None,
                            torch.device("cpu"), torch)
    runner.settle(planner.step("random", 0)[0][0])
    at_2 = largest.probe(planner, "random", 2, runner, None)
    at_4 = largest.probe(planner, "random", 4, runner, None)
    assert at_2["fits"] and at_4["fits"] and at_4["peak_bytes"] > at_2["peak_bytes"]
    budget = (at_2["peak_bytes"] + at_4["peak_bytes"]) // 2

    results = brs.trial(str(model), str(lengths_file), per_device_batch_size=2, grad_accum=2,
                        dp_size=2, steps=2, pad_to_multiple_of=16, memory_budget=budget,
                        strategies=("brs", "random"), device="cpu", progress=False,
                        out=tmp_path / "budget")
    r = results["strategies"]["random"]
    probes = {p["per_device_batch_size"]: p for p in r["largest_batch_probes"]}
    assert probes[2]["fits"] and not probes[4]["fits"]  # the doubling stopped at 4
    assert probes[4]["peak_bytes"] > budget
    assert r["largest_batch"] in (2, 3) and probes[r["largest_batch"]]["fits"]
    assert all(not p["fits"] for size, p in probes.items() if size > r["largest_batch"])
    assert isinstance(results["strategies"]["brs"]["largest_batch"], int)
    saved = json.loads((tmp_path / "budget" / "results.json").read_text())
    assert saved["strategies"]["random"]["largest_batch"] == r["largest_batch"]


# -- bad input: status 2, one line, nothing timed -------------------------------------------------

def _one_line_error(done, out):
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("python -m brs trial: ")
    assert not (out / "results.json").exists()
    return lines[0]


def test_bad_config(setup, tmp_path):
    _, _, lengths = setup
    model = tmp_path / "bad"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "no-such-model"}))
    out = tmp_path / "out"
    line = _one_line_error(_run(["--model", str(model), "--lengths", str(lengths), "--out",
                                 str(out), *JOB], tmp_path), out)
    assert "cannot build a model" in line


def test_missing_model_folder(setup, tmp_path):
    _, _, lengths = setup
    out = tmp_path / "out"
    missing = tmp_path / "no-such-model"
    line = _one_line_error(_run(["--model", str(missing), "--lengths", str(lengths), "--out",
                                 str(out), *JOB], tmp_path), out)
    assert line == (f"python -m brs trial: model {missing}: no such folder, and no hub model "
                    "of that name in the local cache")


def test_bad_lengths_line(setup, tmp_path):
    _, model, _ = setup
    lengths = tmp_path / "bad.lengths"
    lengths.write_text("12\n40\nforty\n7\n")
    out = tmp_path / "out"
    line = _one_line_error(_run(["--model", str(model), "--lengths", str(lengths), "--out",
                                 str(out), *JOB], tmp_path), out)
    with pytest.raises(ValueError) as library:  # the library's own words
        brs.read_lengths_file(str(lengths))
    assert line == f"python -m brs trial: {library.value}"


def test_batch_that_never_fits(setup, tmp_path):
    _, model, lengths = setup
    out = tmp_path / "out"
    line = _one_line_error(_run(["--model", str(model), "--lengths", str(lengths), "--out",
                                 str(out), "--memory-budget", "64KiB", *JOB], tmp_path), out)
    assert "does not fit even at per_device_batch_size 1" in line
