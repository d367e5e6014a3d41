"""Real torch.distributed: torchrun --nproc_per_node=2 with gloo, guarded by a timeout."""

import collections
import json

import pytest

pytest.importorskip("torch")

import brs_testing  # noqa: E402
from brs_testing import TESTS  # noqa: E402

pytestmark = pytest.mark.distributed  # scripts/soak-distributed runs these

TIMEOUT_S = 150


def torchrun(script, *args):
    brs_testing.torchrun(TESTS / script, *args, timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def training(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp") / "result.json"
    torchrun("ddp_train.py", out)
    return json.loads(out.read_text())


def test_ranks_were_detected_and_agree_on_len(training):
    ranks = training["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1]
    assert {r["dp_size"] for r in ranks} == {2}
    assert len({r["len"] for r in ranks}) == 1


def test_every_sample_once_per_epoch_and_reshuffled(training):
    orders = []
    for epoch in ("0", "1"):
        trained = [i for r in training["ranks"] for mb in r["seen"][epoch] for i in mb]
        counts = collections.Counter(trained)
        assert max(counts.values()) == 1, f"epoch {epoch}: a sample was trained twice"
        assert len(counts) == training["n"], f"epoch {epoch}: samples were left out"
        orders.append([mb for r in training["ranks"] for mb in r["seen"][epoch]])
    assert orders[0] != orders[1]


def test_global_token_normalisation_matches_the_single_process_reference(training):
    assert len(set(training["step0_sizes"])) > 1, "the test needs variable micro-batch sizes"
    scale = training["reference_norm"]
    assert training["exact_vs_reference"] <= 1e-9 * max(1.0, scale)
    # The naive per-micro-batch mean is biased by the variable sizes, and the test sees it.
    assert training["naive_vs_reference"] > 1e-4 * scale


def test_fingerprint_mismatch_raises_on_every_rank(tmp_path):
    torchrun("ddp_mismatch.py", tmp_path)
    for rank in (0, 1):
        message = (tmp_path / f"rank{rank}.txt").read_text()
        assert message.startswith("RuntimeError"), message
        assert "rank(s) [1]" in message and "seed" in message


def test_a_failing_rank_is_reported_with_its_exit_code_and_stderr():
    with pytest.raises(pytest.fail.Exception) as info:
        torchrun("ddp_failing_rank.py")
    report = str(info.value)
    assert "ddp_failing_rank.py failed" in report
    assert "rank 1: exit code 1;" in report
    assert "ValueError: rank 1 fails on purpose" in report.split("rank 1: exit code")[1]
