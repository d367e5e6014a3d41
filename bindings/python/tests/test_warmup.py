"""brs.warmup runs each shape of the vocabulary once and leaves training bit-identical: a tiny
GPT-2 (dropout on) trained a few steps after a warmup, in the middle of a gradient
accumulation, ends with the same parameters, optimizer state and RNG states as without it."""

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import brs  # noqa: E402
from brs_data import TokenDataset, pad_collate  # noqa: E402
from brs_testing import random_lengths  # noqa: E402

LENGTHS = random_lengths(96, seed=11, low=4, high=100)


def _sampler(**kw):
    kw = {"per_device_batch_size": 4, "grad_accum": 2, "dp_size": 1, "rank": 0, "seed": 1,
          "max_shapes": 4, **kw}
    return brs.BatchRebalanceSampler(LENGTHS, **kw)


def _model():
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=100,
                                     n_positions=128)  # dropout left at 0.1: the RNG matters
    return transformers.GPT2LMHeadModel(config)


def _train(with_warmup, steps=3):
    sampler = _sampler()
    model = _model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    random.seed(3)
    np.random.seed(3)
    torch.manual_seed(3)
    loader = torch.utils.data.DataLoader(TokenDataset(LENGTHS), batch_sampler=sampler,
                                         collate_fn=brs.PadToPlan(pad_collate, sampler))
    ran = None
    for i, batch in enumerate(loader):
        if i == 2 * steps:
            break
        ids, mask = batch["input_ids"], batch["attention_mask"].long()
        loss = model(input_ids=ids, attention_mask=mask,
                     labels=ids.masked_fill(mask == 0, -100)).loss
        loss.backward()
        if i == 0 and with_warmup:  # between two micro-batches of one step: grads pending
            ran = brs.warmup(model, sampler)
        if i % 2 == 1:
            optimizer.step()
            optimizer.zero_grad()
    rng = (random.getstate(), np.random.get_state()[1].tolist(), torch.get_rng_state())
    return model, optimizer, rng, ran


def test_training_after_warmup_is_bit_identical():
    plain, plain_optimizer, plain_rng, _ = _train(False)
    warmed, warmed_optimizer, warmed_rng, ran = _train(True)
    assert ran == _sampler().shape_vocabulary() and len(ran) <= 4
    for (name, a), (_, b) in zip(plain.named_parameters(), warmed.named_parameters()):
        assert torch.equal(a, b), name
    for a, b in zip(plain_optimizer.state.values(), warmed_optimizer.state.values()):
        assert all(torch.equal(a[key], b[key]) for key in a)
    assert plain_rng[0] == warmed_rng[0] and plain_rng[1] == warmed_rng[1]
    assert torch.equal(plain_rng[2], warmed_rng[2])


class _Normed(torch.nn.Module):
    """An embedding and a BatchNorm: its running statistics are buffers a pass changes."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.norm = torch.nn.BatchNorm1d(4)
        self.shapes = []

    def forward(self, input_ids, attention_mask, labels):
        self.shapes.append(tuple(input_ids.shape))
        return self.norm(self.embed(input_ids).mean(1)).sum()


def test_buffers_modes_and_gradients_are_restored_and_the_collator_builds_the_batch():
    model = _Normed().eval()
    model.norm.train()
    grads = [torch.full_like(p, 2.0) for p in model.parameters()]
    for p, grad in zip(model.parameters(), grads):
        p.grad = grad
    buffers = [b.clone() for b in model.buffers()]
    sampler = _sampler(pad_to_multiple_of=8)
    collate = brs.PadToPlan(pad_collate, sampler)
    ran = brs.warmup(model, sampler, collate_fn=lambda rows: collate(
        [{"index": 0, "input_ids": torch.tensor(row["input_ids"])} for row in rows]),
        forward=lambda m, batch: m(batch["input_ids"], batch["attention_mask"],
                                   batch["labels"]))
    assert model.shapes == ran == sampler.shape_vocabulary()
    assert all(length % 8 == 0 for _, length in ran)
    assert all(p.grad is grad for p, grad in zip(model.parameters(), grads))
    assert all(torch.equal(a, b) for a, b in zip(model.buffers(), buffers))
    assert not model.training and model.norm.training and not model.embed.training


def test_without_max_shapes_it_runs_this_ranks_epoch_shapes():
    sampler = _sampler(max_shapes=None)
    model = _Normed()
    assert brs.warmup(model, sampler, forward=lambda m, b: m(**b)) == sampler.shapes()
