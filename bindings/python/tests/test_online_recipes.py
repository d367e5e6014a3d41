"""Recipes for data that has no epoch, on CPU with a tiny GPT-2 of one layer.

(a) RL: rollouts generated on each of 2 gloo ranks (torchrun), planned with brs.plan_batch,
    one training step (rl_plan_batch.py).
(c) a `datasets` streaming IterableDataset built from a generator, read through
    brs.RebalancedStream by two ranks, a short training loop each.
"""

import collections
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import brs_testing  # noqa: E402
from brs_testing import TESTS  # noqa: E402

from brs import RebalancedStream  # noqa: E402


@pytest.mark.distributed
def test_rl_step_planned_with_plan_batch_over_torchrun(tmp_path):
    out = tmp_path / "rl.json"
    brs_testing.torchrun(TESTS / "rl_plan_batch.py", out, timeout=240)
    result = json.loads(out.read_text())
    ranks = result["ranks"]
    trained = collections.Counter(i for r in ranks for mb in r["positions"] for i in mb)
    assert sorted(trained) == list(range(result["n"])) and set(trained.values()) == {1}
    assert {len(r["positions"]) for r in ranks} == {2}, "ranks ran different micro-step counts"
    assert max(p for r in ranks for p in r["padded"]) <= result["max_tokens"]
    assert len({len(mb) for r in ranks for mb in r["positions"]}) > 1, \
        "the recipe needs variable micro-batch sizes to show anything"
    # DDP kept the replicas equal, and the step moved them
    assert ranks[0]["checksum"] == ranks[1]["checksum"]
    assert ranks[0]["checksum"] != ranks[0]["initial"]


def _streaming_dataset(count):
    datasets = pytest.importorskip("datasets")

    def generate():
        for i in range(count):
            n = 2 + (i * 37) % 29 + (20 if i % 9 == 0 else 0)
            yield {"id": i, "input_ids": [(i * 7 + j) % 60 + 1 for j in range(n)]}

    return datasets.IterableDataset.from_generator(generate)


def _train(stream, steps, grad_accum):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=64,
                                       n_positions=64, bos_token_id=63, eos_token_id=63))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    seen, losses = [], []
    for position, rows in enumerate(stream):
        if position == steps * grad_accum:
            break
        longest = max(len(row["input_ids"]) for row in rows)
        ids = torch.zeros(len(rows), longest, dtype=torch.long)
        labels = torch.full_like(ids, -100)
        for r, row in enumerate(rows):
            ids[r, :len(row["input_ids"])] = torch.tensor(row["input_ids"])
            labels[r, :len(row["input_ids"])] = ids[r, :len(row["input_ids"])]
        loss = model(ids, labels=labels).loss / grad_accum
        loss.backward()
        if position % grad_accum == grad_accum - 1:
            optimizer.step()
            optimizer.zero_grad()
        seen.append([row["id"] for row in rows])
        losses.append(float(loss.detach()))
    return seen, losses


def test_datasets_streaming_through_rebalanced_stream():
    dataset = _streaming_dataset(90)
    options = dict(length=lambda row: len(row["input_ids"]), per_device_batch_size=3,
                   dp_size=2, grad_accum=2, window_steps=2, seed=3, max_tokens=200)
    runs = [_train(RebalancedStream(dataset, rank=rank, **options), steps=3, grad_accum=2)
            for rank in range(2)]
    for seen, losses in runs:
        assert len(seen) == 6 and all(loss == loss for loss in losses)  # no NaN
    # 3 steps x 12 items: the first 36 items of the stream's 2 windows of 24, each once
    trained = [i for seen, _ in runs for mb in seen for i in mb]
    assert len(trained) == len(set(trained)) == 36 and max(trained) < 48
    # the whole stream, every item once, and the same micro-step count on both ranks
    whole = [list(RebalancedStream(dataset, rank=rank, **options)) for rank in range(2)]
    assert len(whole[0]) == len(whole[1])
    ids = sorted(row["id"] for run in whole for mb in run for row in mb)
    assert ids == list(range(90))
