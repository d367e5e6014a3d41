"""Context parallelism trains correctly: torchrun --nproc_per_node=4 (gloo, CPU) runs dp_size 2
x cp_size 2 ranks of brs's reference CP decoder (cp_train.py) over an epoch of a CP plan; its
losses, first-step gradients and final parameters match one process training the same samples
whole, and every token of every sample is computed exactly once."""

import json

import pytest

torch = pytest.importorskip("torch")

import brs_testing  # noqa: E402
from brs_testing import TESTS  # noqa: E402

pytestmark = pytest.mark.distributed


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cp") / "result.json"
    brs_testing.torchrun(TESTS / "cp_train.py", out, nproc=4, timeout=240)
    return json.loads(out.read_text())


def reference(run):
    """One process, every sample whole (degree 1), the same steps, model and optimiser."""
    import cp_train
    from brs.integrations import context_parallel as cp

    lengths, tokens = cp_train.lengths_and_tokens()
    torch.manual_seed(0)
    model = cp.TinyDecoder()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    losses, first = [], None

    class Whole:
        def __init__(self, index):
            self.cp_ranks, self.padded_tokens = (0,), lengths[index]
            self.token_ranges = [(index, 0, lengths[index])]

    for samples in run["steps"]:
        count = sum(lengths[i] - 1 for i in samples)
        optimizer.zero_grad()
        total = torch.zeros(())
        for index in samples:
            loss = model.loss_sum(cp.shard(Whole(index), lambda i: tokens[i]), {}) / count
            loss.backward()
            total = total + loss.detach()
        losses.append(float(total))
        if first is None:
            first = {name: p.grad.flatten().tolist() for name, p in model.named_parameters()}
        optimizer.step()
    return losses, first, {k: v.flatten().tolist() for k, v in model.state_dict().items()}


def test_the_plan_used_several_degrees(run):
    assert run["degrees"] == [1, 2]


def test_every_token_of_every_sample_once(run):
    trained = [i for step in run["steps"] for i in step]
    assert len(trained) == len(set(trained)) == len(run["lengths"])
    assert {int(k): v for k, v in run["covered"].items()} == dict(enumerate(run["lengths"]))


def test_no_rank_holds_more_than_the_cap(run):
    """The shards cp_train.py built, not the plan's numbers: the longest one any rank held."""
    assert 0 < run["held"] <= run["cap"]


def test_losses_gradients_and_parameters_match_one_process(run):
    losses, grads, params = reference(run)
    assert run["losses"] == pytest.approx(losses, rel=1e-5, abs=1e-6)
    for name, values in grads.items():
        assert run["grads"][name] == pytest.approx(values, rel=1e-4, abs=1e-6), name
    for name, values in params.items():
        assert run["params"][name] == pytest.approx(values, rel=1e-4, abs=1e-5), name
