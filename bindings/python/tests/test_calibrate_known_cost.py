"""brs.calibrate recovers the cost of a module whose cost is known: its forward busy-works the
calling thread for k * (bs*L + alpha*bs*L^2) seconds of CPU time, so the fitted alpha must be
alpha within 10% (and the intercept near 0), whatever else runs on the machine. No timing is
asserted beyond what the fit must recover."""

import time

import pytest

torch = pytest.importorskip("torch")

import brs  # noqa: E402

ALPHA = 0.004
SECONDS_PER_UNIT = 2e-5  # bs 8 x L 256: 2048 + 0.004 * 8 * 256^2 = 4145 units, 83 ms


class KnownCost(torch.nn.Module):
    """A module of no compute whose forward costs exactly what the formula says."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids, **_):
        bs, length = input_ids.shape
        _busy(SECONDS_PER_UNIT * (bs * length + ALPHA * bs * length * length))
        return self.weight.sum() * 0.0  # no work that grows with the batch beside the formula


def _busy(seconds):
    """Spin this thread for ``seconds`` of its own CPU time (what calibrate's CPU clock reads,
    with torch on one thread)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def _forward(model, batch):
    return model(batch["input_ids"])


def test_calibrate_recovers_a_known_alpha():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        lengths = [16 + (i * 37) % 240 for i in range(400)]
        model = brs.calibrate(KnownCost(), lengths, forward=_forward, device="cpu",
                              batch_sizes=[1, 2, 4, 8], seq_lens=[32, 64, 128, 192, 256],
                              progress=False)
    finally:
        torch.set_num_threads(threads)
    assert model.alpha == pytest.approx(ALPHA, rel=0.10)
    # the intercept is in bs*L units: a few units of Python overhead at most, against 2048+
    assert model.intercept < 0.05 * 8 * 256
