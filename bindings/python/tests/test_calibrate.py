"""brs.calibrate and python -m brs calibrate: the fit recovers known coefficients, the grid and
budget rules, the errors (nothing written), and a real Trainer run driven by the JSON.

Time is never asserted: the fake model below advances a fake clock by a known cost, so the
recovered coefficients are exact whatever the machine's load.
"""

import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import brs  # noqa: E402
from brs import CostModel  # noqa: E402
from brs.calibration import memory, record as timing_record, timing  # noqa: E402
from brs.calibration.fit import fit_three_terms  # noqa: E402

LENGTHS = [int(x) for x in np.random.default_rng(0).integers(16, 200, 300)]


# -- the fit -----------------------------------------------------------------------------------

def grid():
    bs, length = np.meshgrid([1, 2, 4, 8], [16, 64, 128, 256, 512])
    return bs.ravel(), length.ravel()


def test_the_fit_recovers_known_coefficients_from_noisy_timings():
    bs, length = grid()
    c0, a, b = 2e-3, 3e-6, 5e-9
    clean = c0 + a * bs * length + b * bs * length ** 2
    noisy = clean * np.random.default_rng(1).normal(1.0, 0.02, clean.size)
    fit = fit_three_terms(bs, length, noisy)
    assert fit["c2"] / fit["c1"] == pytest.approx(b / a, rel=0.1)
    assert fit["c0"] / fit["c1"] == pytest.approx(c0 / a, rel=0.15)
    assert fit["r2"] > 0.99 and fit["worst"] < 0.1


def test_the_fit_never_returns_a_negative_coefficient():
    bs, length = grid()
    values = 1e-6 * bs * length - 1e-3 + 1e-2  # a large intercept, then one forced to 0 below
    assert fit_three_terms(bs, length, values)["c0"] > 0
    falling = 5e-3 + 1e-6 * bs * length - 1e-12 * bs * length ** 2
    fit = fit_three_terms(bs, length, falling)
    assert min(fit["c0"], fit["c1"], fit["c2"]) >= 0


def test_one_slowed_shape_is_left_out_of_a_robust_fit():
    bs, length = grid()
    values = 1e-3 + 2e-6 * bs * length + 4e-9 * bs * length ** 2
    values[3] *= 10  # another process stole the core for that shape
    fit = fit_three_terms(bs, length, values, robust=True)
    assert fit["outliers"] == [3]
    assert fit["c2"] / fit["c1"] == pytest.approx(2e-3, rel=1e-6)


def test_a_grid_with_one_length_cannot_fit():
    with pytest.raises(ValueError, match="cannot fit"):
        fit_three_terms([1, 2, 4], [64, 64, 64], [1.0, 2.0, 4.0])


# -- calibrate on a model with known cost -------------------------------------------------------

C0, A, B = 4e-3, 2e-6, 6e-9  # seconds; so alpha = B/A = 0.003 and intercept = C0/A = 2000
MEM0, MEM1, MEM2 = 1e6, 1000.0, 2.0  # bytes


class FakeClock:
    """Stands in for the time module: the wall clock and the thread's CPU clock agree."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def thread_time(self):
        return self.now


class KnownCostModel(torch.nn.Module):
    """A causal-LM-shaped module whose forward 'takes' C0 + A*bs*L + B*bs*L^2 fake seconds."""

    def __init__(self, clock, probe_log):
        super().__init__()
        self.embedding = torch.nn.Embedding(50, 4)
        self.clock, self.probe_log = clock, probe_log

    def forward(self, input_ids, labels, attention_mask=None):
        bs, length = input_ids.shape
        self.clock.now += C0 + A * bs * length + B * bs * length ** 2
        self.probe_log.append((bs, length))
        return types.SimpleNamespace(loss=self.embedding(input_ids).sum())


class FakeProbe(memory.PeakProbe):
    """Peak memory MEM0 + MEM1*bs*L + MEM2*bs*L^2 of the last shape run."""

    def __init__(self, log):
        super().__init__(torch.device("cpu"))
        self.method, self.log = "fake", log

    def measure(self, fn):
        result = fn()
        bs, length = self.log[-1]
        return result, int(MEM0 + MEM1 * bs * length + MEM2 * bs * length ** 2)


@pytest.fixture
def known(monkeypatch):
    clock, log = FakeClock(), []
    monkeypatch.setattr(timing, "time", clock)
    monkeypatch.setattr(timing_record, "load_average", lambda: 0.0)  # a quiet machine
    monkeypatch.setattr(memory, "PeakProbe", lambda device: FakeProbe(log))
    return KnownCostModel(clock, log)


def test_calibrate_returns_brs_units_and_the_budget_cap(known):
    cm = brs.calibrate(known, LENGTHS, batch_sizes=[1, 2, 4], seq_lens=[16, 64, 128],
                       repeats=2, memory_budget="64MiB", progress=False)
    assert cm.source == "calibrated" and cm.device == "cpu"
    assert cm.alpha == pytest.approx(B / A, rel=1e-6)
    assert cm.intercept == pytest.approx(C0 / A, rel=1e-6)
    assert cm.seconds_per_unit == pytest.approx(A, rel=1e-6)
    assert cm.r2 == pytest.approx(1.0) and cm.worst_residual < 1e-6
    longest = max(LENGTHS)
    expected = (64 * 2**20 - MEM0) // (MEM1 + MEM2 * longest)
    assert abs(cm.max_tokens - expected) <= 1
    assert [(r["batch_size"], r["length"]) for r in cm.timings] == sorted(
        [(b, l) for b in (1, 2, 4) for l in (16, 64, 128)], key=lambda s: (s[0] * s[1], s))


def test_the_default_grid_spans_the_dataset_lengths(known):
    cm = brs.calibrate(known, LENGTHS, repeats=1, memory_budget=2**30, progress=False)
    lengths = sorted({r["length"] for r in cm.timings})
    assert lengths[0] <= np.quantile(LENGTHS, 0.1) + 8 and lengths[-1] == max(LENGTHS)
    assert len(lengths) >= 4
    assert cm.alpha == pytest.approx(B / A, rel=1e-6)


def test_a_budget_below_one_longest_sample_is_an_error(known):
    with pytest.raises(ValueError, match="memory_budget"):
        brs.calibrate(known, LENGTHS, batch_sizes=[1, 2], seq_lens=[16, 64], repeats=1,
                      memory_budget="1MiB", progress=False)


def test_an_out_of_memory_shape_is_a_clear_error(known, monkeypatch):
    forward = known.forward

    def forward_or_oom(input_ids, labels, attention_mask=None):
        if input_ids.shape[0] * input_ids.shape[1] > 200:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return forward(input_ids, labels)

    monkeypatch.setattr(known, "forward", forward_or_oom)
    with pytest.raises(ValueError, match="batch size 4 x length 64 ran out of memory"):
        brs.calibrate(known, LENGTHS, batch_sizes=[1, 2, 4], seq_lens=[16, 64], repeats=1,
                      progress=False)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(model=None), TypeError, "model is required"),
    (dict(model=42), TypeError, "model must be"),
    (dict(model="no-such-shape"), ValueError, "neither a built-in shape"),
    (dict(lengths=[]), ValueError, "at least one"),
    (dict(lengths=[5, 0]), ValueError, ">= 1"),
    (dict(seq_lens=[64]), ValueError, "cannot fit"),
    (dict(batch_sizes=[0, 1]), ValueError, "batch_sizes"),
    (dict(repeats=0), ValueError, "repeats"),
    (dict(memory_budget="lots"), ValueError, "not a size"),
    (dict(optimizer="adam"), TypeError, "optimizer"),
])
def test_bad_arguments_are_named(known, kwargs, error, message):
    call = dict(model=known, lengths=LENGTHS, batch_sizes=[1, 2], seq_lens=[16, 32],
                repeats=1, progress=False)
    call.update(kwargs)
    with pytest.raises(error, match=message):
        brs.calibrate(call.pop("model"), call.pop("lengths"), **call)


def test_a_model_without_a_loss_is_refused(known, monkeypatch):
    monkeypatch.setattr(known, "forward", lambda input_ids, labels, attention_mask=None: types.SimpleNamespace())
    with pytest.raises(TypeError, match="loss"):
        brs.calibrate(known, LENGTHS, batch_sizes=[1, 2], seq_lens=[16, 32], repeats=1,
                      progress=False)


# -- the CLI and a real Trainer ------------------------------------------------------------------

def tiny_config_dir(tmp_path):
    # Wide enough that a 16 x 64 batch costs clearly more than a 1 x 8 one on a CPU.
    config = transformers.GPT2Config(n_layer=1, n_embd=128, n_head=2, vocab_size=2048,
                                     n_positions=64, bos_token_id=0, eos_token_id=0)
    folder = tmp_path / "tiny"
    config.save_pretrained(folder)
    return folder


def cli(*args):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "brs", "calibrate", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=300)


def test_cli_errors_exit_2_and_write_nothing(tmp_path):
    lengths = tmp_path / "l.txt"
    lengths.write_text("10\n20\n30\n")
    out = tmp_path / "cost.json"
    bad_model = cli("--model", tmp_path / "absent", "--lengths", lengths, "-o", out)
    assert bad_model.returncode == 2 and "--model" not in bad_model.stdout
    assert "neither a built-in shape" in bad_model.stderr
    one_length = cli("--model", tiny_config_dir(tmp_path), "--lengths", lengths,
                     "--seq-lens", "16", "--no-progress", "-o", out)
    assert one_length.returncode == 2 and "cannot fit" in one_length.stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.txt", "tiny"]


class TokenRows(torch.utils.data.Dataset):
    def __init__(self, lengths):
        self.lengths = lengths

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        return {"input_ids": [1 + (i + j) % 90 for j in range(self.lengths[i])]}


def pad(rows):
    width = max(len(r["input_ids"]) for r in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, r in enumerate(rows):
        ids[i, :len(r["input_ids"])] = torch.tensor(r["input_ids"])
        mask[i, :len(r["input_ids"])] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": ids.masked_fill(mask == 0, -100)}


def test_the_calibrated_json_drives_a_real_trainer_run(tmp_path):
    from brs.integrations.accelerate import find_rebalance_sampler
    from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions

    lengths = [int(x) for x in np.random.default_rng(2).integers(4, 60, 64)]
    lengths_file = tmp_path / "lengths.txt"
    lengths_file.write_text("".join(f"{n}\n" for n in lengths))
    out = tmp_path / "cost.json"
    folder = tiny_config_dir(tmp_path)
    run = cli("--model", folder, "--lengths", lengths_file, "--batch-sizes", "1,4,16",
              "--seq-lens", "8,24,60", "--repeats", "1", "--memory-budget", "1GiB",
              "--no-progress", "-o", out)
    assert run.returncode == 0, run.stderr
    for word in ("alpha", "intercept", "max_tokens", "R^2"):
        assert word in run.stdout
    cm = CostModel.load(out)
    assert json.loads(out.read_text())["source"] == "calibrated" and cm.max_tokens >= 60

    config = transformers.AutoConfig.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_config(config)  # what the CLI timed
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "run"),
                                          per_device_train_batch_size=4, max_steps=3,
                                          report_to="none", use_cpu=True,
                                          remove_unused_columns=False, disable_tqdm=True,
                                          save_strategy="no")
    trainer = BatchRebalanceTrainer(model=model, args=args, train_dataset=TokenRows(lengths),
                                    data_collator=pad,
                                    rebalance_options=RebalanceOptions(cost_model=str(out)))
    sampler = find_rebalance_sampler(trainer.get_train_dataloader())
    # the sampler reads back what the library stores: alpha and intercept resolved to 1e-6
    assert (sampler.alpha, sampler.intercept, sampler.max_tokens) == (
        pytest.approx(cm.alpha, abs=5e-7), pytest.approx(cm.intercept, abs=5e-7), cm.max_tokens)
    result = trainer.train()
    assert trainer.state.global_step == 3 and np.isfinite(result.training_loss)


def test_the_trainer_defaults_to_the_config_analytic_model(tmp_path):
    from brs.integrations.accelerate import find_rebalance_sampler
    from brs.integrations.transformers import BatchRebalanceTrainer

    config = transformers.AutoConfig.from_pretrained(tiny_config_dir(tmp_path))
    model = transformers.AutoModelForCausalLM.from_config(config)
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "run"),
                                          per_device_train_batch_size=4, report_to="none",
                                          use_cpu=True, remove_unused_columns=False)
    trainer = BatchRebalanceTrainer(model=model, args=args, train_dataset=TokenRows([8] * 40),
                                    data_collator=pad)
    sampler = find_rebalance_sampler(trainer.get_train_dataloader())
    assert sampler.alpha == pytest.approx(CostModel.from_config(config).alpha, abs=5e-7)
    assert sampler.alpha != CostModel.fixed().alpha
