"""A max_tokens derived from a memory budget holds when the planned micro-batches train.

brs.calibrate measures each shape's peak memory (on CPU: torch's profiler memory events, exact
to the byte), fits it, and turns a memory budget into max_tokens; the sampler then plans under
that cap. Here the plans are trained for real and each micro-batch's peak measured the same
way: none may exceed the budget, and the cap must bind (some micro-batch comes close to it),
or the test would prove nothing.
"""

import random

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import brs  # noqa: E402
from brs.calibration import memory, shapes  # noqa: E402

BUDGET = 64 * 2**20


def tiny_model():
    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=512,
                                     n_positions=512, bos_token_id=0, eos_token_id=0)
    model = shapes.build_model(config, device="cpu", dtype=torch.float32)
    model.config.use_cache = False
    return model.train()


def test_the_calibrated_cap_holds_on_the_trained_micro_batches():
    torch.set_num_threads(1)
    model = tiny_model()
    rng = random.Random(0)
    lengths = [min(500, max(8, round(rng.lognormvariate(4.5, 0.9)))) for _ in range(400)]
    cm = brs.calibrate(model, lengths, batch_sizes=[1, 2, 4, 8], repeats=1,
                       memory_budget=BUDGET, progress=False)
    assert cm.max_tokens is not None and cm.max_tokens >= max(lengths)
    sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=8, dp_size=2,
                                        grad_accum=2, rank=0, cost_model=cm)
    probe = memory.PeakProbe(torch.device("cpu"))
    peaks = []
    for step in range(sampler.steps_per_epoch):
        for rank in sampler.plan(step).micro_batches:
            for mb in rank:
                width = max(lengths[i] for i in mb.indices)
                assert len(mb.indices) * width <= cm.max_tokens
                ids = torch.randint(1, 512, (len(mb.indices), width))
                _, peak = probe.measure(lambda: model(input_ids=ids, labels=ids).loss.backward())
                model.zero_grad(set_to_none=True)
                peaks.append(peak)
    assert max(peaks) <= BUDGET, f"a planned micro-batch peaked at {max(peaks)} > {BUDGET}"
    assert max(peaks) > BUDGET / 2, "the cap never bound: the budget proves nothing here"
