"""The Python package plans exactly what the C CLI plans for the same inputs (`brs plan`)."""

import json
import subprocess

import pytest

from brs import BatchRebalanceSampler
from brs_testing import DATA, read_lengths

# (lengths file or None for the clipped manpages, CLI flags, sampler keywords)
CASES = [
    ("gsm8k_train.lengths", [], {}),
    ("gsm8k_train.lengths",
     ["--batch-size", "6", "--grad-accum", "2", "--dp-size", "3", "--seed", "5", "--epoch", "2",
      "--alpha", "0.01", "--intercept", "3"],
     dict(per_device_batch_size=6, grad_accum=2, dp_size=3, seed=5, epoch=2, alpha=0.01,
          intercept=3.0)),
    ("jargon.lengths", ["--batch-size", "4", "--dp-size", "2", "--packed", "--max-tokens", "9000"],
     dict(per_device_batch_size=4, dp_size=2, packed=True, max_tokens=9000)),
    ("fortunes.lengths", ["--batch-size", "16", "--grad-accum", "4", "--max-tokens", "2400",
                          "--no-drop-last"],
     dict(per_device_batch_size=16, grad_accum=4, max_tokens=2400, drop_last=False)),
    (None, ["--batch-size", "8", "--dp-size", "4", "--no-shuffle", "--no-drop-last"],
     dict(per_device_batch_size=8, dp_size=4, shuffle=False, drop_last=False)),
]


def _lengths_file(name, tmp_path):
    if name is not None:
        return DATA / name, read_lengths(name)
    clipped = [min(v, 4096) for v in read_lengths("manpages.lengths", limit=3001)]
    path = tmp_path / "manpages_clipped.lengths"
    path.write_text("".join(f"{v}\n" for v in clipped))
    return path, clipped


def _cli_plan(cli, path, flags):
    done = subprocess.run([cli, "plan", "--lengths", str(path), *flags], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("name, flags, kwargs", CASES)
def test_same_plans_as_the_cli(cli, tmp_path, name, flags, kwargs):
    path, lengths = _lengths_file(name, tmp_path)
    kwargs = dict(kwargs)
    epoch = kwargs.pop("epoch", 0)
    kwargs.setdefault("per_device_batch_size", 8)
    kwargs.setdefault("dp_size", 1)
    sampler = BatchRebalanceSampler(lengths, rank=0, **kwargs)
    sampler.set_epoch(epoch)
    lines = _cli_plan(cli, path, flags)
    assert len(lines) == sampler.steps_per_epoch * sampler.dp_size * sampler.grad_accum
    plans = {}
    for line in lines:
        plan = plans.get(line["step"]) or plans.setdefault(line["step"], sampler.plan(line["step"]))
        mb = plan.micro_batches[line["rank"]][line["micro"]]
        assert line["epoch"] == epoch
        assert line["indices"] == mb.indices
        assert line["padded_tokens"] == mb.padded_tokens
        assert line["cost"] == pytest.approx(mb.cost, rel=1e-12)


def test_one_rank_and_step_of_the_cli_is_that_ranks_iteration(cli):
    lengths = read_lengths("jargon.lengths")
    flags = ["--batch-size", "4", "--grad-accum", "2", "--dp-size", "2", "--seed", "9"]
    lines = _cli_plan(cli, DATA / "jargon.lengths", flags + ["--step", "3", "--rank", "1"])
    sampler = BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=2, dp_size=2,
                                    rank=1, seed=9)
    assert [line["indices"] for line in lines] == list(sampler)[6:8]
