"""python -m brs report: the CLI's comparison, plus the figure from the library's strategies.

plan, compare and demo of `python -m brs` are the C command's own (same output, same status).
"""

import os
import re
import subprocess

import pytest

from brs import BatchRebalanceSampler, report
from brs_testing import DATA, child_env, read_lengths, record_error, run_python

FLAGS = ["--batch-size", "8", "--grad-accum", "2", "--dp-size", "4", "--seed", "3"]
# The library's strategy -> the row of `brs compare` that shows it.
ROWS = {"random": "random", "length_grouped": "length-grouped", "balanced": "brs"}


def _sampler():
    return BatchRebalanceSampler(read_lengths("gsm8k_train.lengths"), per_device_batch_size=8,
                                 grad_accum=2, dp_size=4, rank=0, seed=3)


def _cli_rows(cli):
    done = subprocess.run([cli, "compare", "--lengths", str(DATA / "gsm8k_train.lengths"),
                           *FLAGS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) == 8 and fields[0] in ROWS.values():
            # length-grouped draws other samples: no ratio to the bound ("-")
            rows[fields[0]] = [None if f == "-" else float(f.rstrip("%")) for f in fields[1:]]
    assert set(rows) == set(ROWS.values()), done.stdout
    bound = float(re.search(r"lower bound of these steps' samples, ([\d.e+]+)",
                            " ".join(done.stdout.split())).group(1))
    return rows, bound


def test_same_numbers_as_the_cli_compare(cli):
    rows, bound = _cli_rows(cli)
    comparison = report.compare(_sampler())
    assert comparison.time_lower_bound == pytest.approx(bound, rel=1e-5)
    assert set(comparison.strategies) == set(ROWS)
    for ours, theirs in ROWS.items():
        strategy = comparison.strategies[ours]
        peak, efficiency, micro_sync, _, step_sync, _, shapes = rows[theirs]
        assert strategy.peak_padded_tokens == peak
        assert strategy.shapes_per_rank == shapes
        assert 100 * strategy.padding_efficiency == pytest.approx(efficiency, abs=0.051)
        assert strategy.micro_sync_time == pytest.approx(micro_sync, rel=1e-5)
        assert strategy.step_sync_time == pytest.approx(step_sync, rel=1e-5)


@pytest.mark.parametrize("flags", [
    FLAGS,
    ["--max-tokens", "1500", "--dp-size", "2", "--no-drop-last", "--packed", "--epoch", "1"],
    ["--no-shuffle", "--alpha", "0.01", "--intercept", "7", "--grad-accum", "3"],
])
def test_report_text_is_the_cli_compare_text(cli, flags):
    lengths = str(DATA / "fortunes.lengths")
    ours = run_python(["-m", "brs", "report", "--lengths", lengths, *flags])
    theirs = subprocess.run([cli, "compare", "--lengths", lengths, *flags], capture_output=True,
                            text=True, timeout=120)
    assert ours.returncode == theirs.returncode == 0, ours.stderr + theirs.stderr
    # The same table and legend line for line; only the title, the timing and the block of where
    # the time goes differ (the report's adds batch_rebalance, checked below).
    def strip(text):
        lines = [line for line in text.splitlines()[1:] if not line.startswith("brs planning")]
        start = next(i for i, line in enumerate(lines) if line.startswith("where the time goes"))
        end = lines.index("", start)
        return lines[:start] + lines[end:], lines[start:end]

    (ours_rest, ours_time), (theirs_rest, theirs_time) = strip(ours.stdout), strip(theirs.stdout)
    assert ours_rest[:-1] == theirs_rest  # the report ends with where to get the figure
    # the library's three rows, the same shares in both
    assert [line.split()[:4] for line in ours_time[1:5] if not line.startswith("batch")] == \
        [line.split()[:4] for line in theirs_time[1:5]]


def _time_rows(text):
    """The report's "where the time goes" rows: name -> [useful, padding, waiting] in %."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("where the time goes"))
    rows = {}
    for line in lines[start + 2:]:
        fields = line.split()
        if len(fields) != 5 or not fields[1].endswith("%"):
            break
        rows[fields[0]] = [float(f.rstrip("%")) for f in fields[1:4]]
    return rows


def test_batch_rebalance_plans_brs_samples_with_its_own_assign():
    from transformers.trainer_pt_utils import BatchRebalanceSampler as Peer

    sampler = _sampler()
    comparison = report.compare(sampler, steps=range(4))
    peer = Peer(lengths=list(sampler.lengths), effective_batch_size=64, dp_size=4, grad_accum=2,
                seed=3, rank=0)
    for brs_plan, plan in zip(comparison.strategies["balanced"].plans,
                              comparison.peers["batch_rebalance"].plans):
        samples = [i for rank in brs_plan.micro_batches for mb in rank for i in mb.indices]
        theirs = peer._assign(samples, [sampler.lengths[i] for i in samples])
        # the same samples, in upstream's own micro-batches, priced by the library
        assert [[list(mb.indices) for mb in rank] for rank in plan.micro_batches] == theirs
        assert plan.total_real_tokens == brs_plan.total_real_tokens
        assert plan.time_lower_bound == pytest.approx(brs_plan.time_lower_bound)
        assert plan.step_time >= plan.time_lower_bound * (1 - 1e-9)


def test_report_shows_where_the_time_goes_for_every_strategy_and_batch_rebalance():
    done = run_python(["-m", "brs", "report", "--lengths", str(DATA / "gsm8k_train.lengths"),
                       *FLAGS])
    assert done.returncode == 0, done.stderr
    rows = _time_rows(done.stdout)
    assert list(rows) == ["random", "length-grouped", "brs", "batch_rebalance"], done.stdout
    comparison = report.compare(_sampler())
    for shown, name in (("random", "random"), ("length-grouped", "length_grouped"),
                        ("brs", "balanced"), ("batch_rebalance", "batch_rebalance")):
        shares = comparison.columns[name].time_shares
        assert rows[shown] == pytest.approx([100 * s for s in shares], abs=0.051), shown
        assert sum(rows[shown]) == pytest.approx(100, abs=0.2)
    brs, peer = comparison.strategies["balanced"], comparison.peers["batch_rebalance"]
    assert f"brs's step time is {brs.step_time / peer.step_time:.3f}x batch_rebalance's" \
        in done.stdout
    assert "figure: --plot OUT.png" in done.stdout


def _hiding(tmp_path, *modules):
    """PYTHONPATH under which importing ``modules`` fails as where they are not installed."""
    for module in modules:
        (tmp_path / "hidden" / module).mkdir(parents=True)
        (tmp_path / "hidden" / module / "__init__.py").write_text(
            f"raise ImportError({'No module named ' + module!r})\n")
    return os.pathsep.join([str(tmp_path / "hidden"), child_env()["PYTHONPATH"]])


def test_without_transformers_the_report_says_so_in_one_line(tmp_path):
    done = run_python(["-m", "brs", "report", "--lengths", str(DATA / "fortunes.lengths"),
                       *FLAGS], PYTHONPATH=_hiding(tmp_path, "transformers"))
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if "batch_rebalance" in line]
    assert said == ["transformers' batch_rebalance: not compared: transformers is not installed "
                    "(pip install '.[trainer]', or pip install transformers)"]
    assert list(_time_rows(done.stdout)) == ["random", "length-grouped", "brs"]


def test_without_matplotlib_no_figure_is_claimed(tmp_path):
    path = _hiding(tmp_path, "matplotlib")
    figure = tmp_path / "report.png"
    args = ["-m", "brs", "report", "--lengths", str(DATA / "fortunes.lengths"), *FLAGS]
    done = run_python(args + ["--plot", str(figure)], PYTHONPATH=path)
    assert done.returncode == 2 and done.stdout == ""
    assert "matplotlib" in done.stderr and "pip install '.[plot]'" in done.stderr
    assert not figure.exists()
    table = run_python(args, PYTHONPATH=path)
    assert table.returncode == 0
    assert "needs matplotlib, not installed: pip install '.[plot]'" in table.stdout


def test_brs_lowers_the_memory_peak_and_beats_random_batches_on_real_lengths():
    comparison = report.compare(_sampler())
    brs, random = comparison.strategies["balanced"], comparison.strategies["random"]
    assert brs.peak_padded_tokens < comparison.strategies["length_grouped"].peak_padded_tokens
    assert brs.peak_padded_tokens < random.peak_padded_tokens
    assert brs.step_sync_time < random.step_sync_time
    assert brs.micro_sync_time < random.micro_sync_time
    assert brs.step_sync_time >= comparison.time_lower_bound * (1 - 1e-9)


def test_report_command_writes_the_table_and_the_figure(cli, tmp_path):
    pytest.importorskip("matplotlib")
    figure = tmp_path / "report.png"
    done = run_python(["-m", "brs", "report", "--lengths", str(DATA / "gsm8k_train.lengths"),
                       *FLAGS, "--max-tokens", "2048", "--plot", str(figure)])
    assert done.returncode == 0, done.stderr
    for label in ("random", "length-grouped", "brs", "peak tokens", "step-sync time",
                  "over cap"):
        assert label in done.stdout
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert figure.stat().st_size > 20000  # nine panels of data, not an empty canvas
    assert f"figure: {figure}" in done.stdout


def test_the_figure_stacks_the_shares_of_every_strategy(monkeypatch):
    pytest.importorskip("matplotlib")
    from brs import _plot

    comparison = report.compare(_sampler(), steps=range(3))
    figure = _plot._draw(comparison)
    bars = figure.axes[0]
    assert [t.get_text() for t in bars.get_yticklabels()] == list(comparison.columns)
    # each strategy's bar: three segments whose widths are its shares, summing to 100
    widths = {}
    for patch in bars.patches:
        widths.setdefault(round(patch.get_y() + patch.get_height() / 2), []).append(
            patch.get_width())
    for position, name in enumerate(comparison.columns):
        shares = comparison.columns[name].time_shares
        assert widths[position] == pytest.approx([100 * s for s in shares])


@pytest.mark.parametrize("args, message", [
    (["--lengths", "/nonexistent/x.lengths"], "cannot open"),
    (["--lengths", "BAD"], "line 3"),
    (["--lengths", "GOOD", "--dp-size", "0"], "dp_size"),
    (["--lengths", "GOOD", "--batch-size", "1", "--max-tokens", "5"], "--max-tokens"),
])
def test_bad_input_exits_2_with_one_line(cli, tmp_path, args, message):
    (tmp_path / "bad").write_text("5\n7\nseven\n")
    (tmp_path / "good").write_text("5\n7\n9\n11\n")
    args = [str(tmp_path / a.lower()) if a in ("BAD", "GOOD") else a for a in args]
    done = run_python(["-m", "brs", "report", *args])
    assert done.returncode == 2
    assert done.stdout == ""
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    record_error("python -m brs", "report", " ".join(a.replace(str(tmp_path), "DIR") for a in args),
                 "exit 2", done.stderr.strip().replace(str(tmp_path), "DIR"))


def test_without_the_c_command_the_report_still_draws_the_figure(tmp_path):
    pytest.importorskip("matplotlib")
    figure = tmp_path / "alone.svg"
    lengths = str(DATA / "fortunes.lengths")
    alone = dict(BRS_CLI="", PATH=str(tmp_path))  # no brs anywhere
    done = run_python(["-m", "brs", "report", "--lengths", lengths, "--no-shuffle", "--plot",
                       str(figure)], **alone)
    assert done.returncode == 0, done.stderr
    assert "no table" in done.stdout and "BRS_CLI" in done.stdout
    assert figure.read_text().startswith("<?xml") and "length_grouped" in figure.read_text()
    table_only = run_python(["-m", "brs", "report", "--lengths", lengths], **alone)
    assert table_only.returncode == 2 and "BRS_CLI" in table_only.stderr


def test_bad_report_flags_exit_2_with_one_line(tmp_path):
    (tmp_path / "good").write_text("5\n7\n9\n11\n")
    for flags in (["--strategy", "random"], ["--batch-size", "x"], ["--colour", "red"],
                  ["--sync", "fastest"]):
        done = run_python(["-m", "brs", "report", "--lengths", str(tmp_path / "good"), *flags,
                           "--plot", str(tmp_path / "x.png")], BRS_CLI="", PATH=str(tmp_path))
        assert done.returncode == 2 and done.stdout == "", flags
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("args", [
    ["plan", "--lengths", "FORTUNES", "--batch-size", "4", "--dp-size", "2", "--step", "1"],
    ["compare", "--lengths", "FORTUNES", "--no-shuffle"],
    ["plan", "--lengths", "FORTUNES", "--dp-size", "0"],
    ["plan", "--colour", "red"],
    ["--version"],
])
def test_plan_compare_and_demo_are_the_c_commands_own(cli, args):
    args = [str(DATA / "fortunes.lengths") if a == "FORTUNES" else a for a in args]
    ours = run_python(["-m", "brs", *args])
    theirs = subprocess.run([cli, *args], capture_output=True, text=True, timeout=120)
    assert ours.returncode == theirs.returncode
    if args[0] == "compare":  # the planning time is measured again
        strip = lambda text: [line for line in text.splitlines()  # noqa: E731
                              if not line.startswith("brs planning")]
        assert strip(ours.stdout) == strip(theirs.stdout)
    else:
        assert ours.stdout == theirs.stdout
    assert ours.stderr == theirs.stderr


@pytest.mark.parametrize("target, message", [
    ("/nonexistent/x.png", "the directory '/nonexistent' must exist and be writable"),
    ("FILE/x.png", "Not a directory: the directory 'DIR/file' must exist"),
    ("DIR/x.xyz", "Format 'xyz' is not supported"),
])
def test_an_unwritable_figure_exits_2_and_writes_nothing(tmp_path, target, message):
    pytest.importorskip("matplotlib")
    (tmp_path / "good").write_text("5\n7\n9\n11\n")
    (tmp_path / "file").write_text("")
    plot = target.replace("FILE", str(tmp_path / "file")).replace("DIR", str(tmp_path))
    done = run_python(["-m", "brs", "report", "--lengths", str(tmp_path / "good"),
                       "--batch-size", "2", "--plot", plot])
    assert done.returncode == 2
    stderr = done.stderr.strip().replace(str(tmp_path), "DIR")
    assert "cannot write the figure" in stderr and message in stderr, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "good"], "something was written"
    record_error("python -m brs", "report --plot", target, "exit 2", stderr)


def test_a_figure_failing_mid_write_leaves_neither_a_partial_file_nor_a_temporary(
        tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from brs.__main__ import main

    def disk_full(self, out, **kwargs):
        out.write(b"\x89PNG half a figure")
        raise OSError(28, "No space left on device")

    (tmp_path / "good").write_text("5\n7\n9\n11\n")
    target = tmp_path / "old.png"
    target.write_bytes(b"the previous figure")
    monkeypatch.setattr(Figure, "savefig", disk_full)
    status = main(["report", "--lengths", str(tmp_path / "good"), "--batch-size", "2",
                   "--plot", str(target)])
    assert status == 2
    assert "No space left on device" in capsys.readouterr().err
    assert target.read_bytes() == b"the previous figure", "the old figure must survive"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good", "old.png"]


def test_the_plot_speaks_seconds_with_a_calibrated_model():
    pytest.importorskip("matplotlib")
    from brs import CostModel, _plot

    lengths = read_lengths("gsm8k_train.lengths")[:400]
    calibrated = CostModel(0.001, 20.0, source="calibrated", seconds_per_unit=2e-6)
    for model, unit in ((None, "cost"), (calibrated, "seconds")):
        sampler = BatchRebalanceSampler(lengths, per_device_batch_size=8, dp_size=2, rank=0,
                                        cost_model=model)
        figure = _plot._draw(report.compare(sampler))
        label = figure.axes[1].get_ylabel()
        assert label.startswith(unit), label
        if model is not None:  # the costs are drawn in seconds
            drawn = max(max(line.get_ydata()) for line in figure.axes[1].get_lines())
            costs = max(max(step) for step in report.compare(sampler).strategies[
                "balanced"].rank_costs())
            assert drawn <= costs * 2e-6 * 1.0001
