"""brs.calibrate times what training runs: padded batches with their attention masks, the
user's collator and loss, each shape's first run apart from its warm runs, and on CUDA the
caching allocator's reserved bytes; online calibration leaves first runs out of its fit.

Most models here advance a fake clock (test_calibrate.py's), so what is recovered is exact.
One spins for known amounts of this thread's CPU time: thread time is what the spin consumes
whatever else runs, so the recovered numbers do not depend on the machine's load.
"""

import os
import sys
import time
import types
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import brs  # noqa: E402
from brs.calibration import batches, memory, online, result, timing  # noqa: E402
from brs.calibration import record as timing_record  # noqa: E402
from brs.integrations import _memory_budget  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import test_calibrate as known_cost  # noqa: E402  (its fake clock)

LENGTHS = known_cost.LENGTHS  # 16..199
C0, A, B = 3e-3, 2e-6, 4e-9
MASK_COST = 1.3  # a padded batch's attention takes the masked (slower) path


def known_seconds(bs, length):
    return C0 + A * bs * length + B * bs * length ** 2


@pytest.fixture
def fake_clock(monkeypatch):
    clock = known_cost.FakeClock()
    monkeypatch.setattr(timing, "time", clock)
    monkeypatch.setattr(timing_record, "load_average", lambda: 0.0)
    return clock


class MaskCostModel(torch.nn.Module):
    """Costs MASK_COST times more when the attention mask has a zero (padding)."""

    def __init__(self, clock):
        super().__init__()
        self.embedding = torch.nn.Embedding(50, 4)
        self.clock = clock

    def forward(self, input_ids, labels, attention_mask=None):
        bs, length = input_ids.shape
        padded = attention_mask is not None and bool((attention_mask == 0).any())
        self.clock.now += known_seconds(bs, length) * (MASK_COST if padded else 1.0)
        return types.SimpleNamespace(loss=self.embedding(input_ids).sum())


def training_batch(bs, length, rng):
    """A batch as training pads it: bs samples of the dataset, the longest of length L."""
    rows = [{"input_ids": [1] * length}]
    rows += [{"input_ids": [1] * int(n)} for n in rng.choice([x for x in LENGTHS if x <= length],
                                                            size=bs - 1)]
    return batches.default_collate(rows, 0, torch)


def test_predict_matches_padded_training_batches(fake_clock):
    model = MaskCostModel(fake_clock)
    cm = brs.calibrate(model, LENGTHS, batch_sizes=[1, 2, 4, 8], repeats=2,
                       memory_budget="1GiB", progress=False)
    rng = np.random.default_rng(3)
    errors = []
    for bs in (2, 3, 5, 6, 12):
        for length in (40, 90, 150, 199):
            before = fake_clock.now
            batch = training_batch(bs, length, rng)
            model(**batch)
            measured = fake_clock.now - before
            errors.append(abs(cm.predict(bs, length) - measured) / measured)
    assert np.median(errors) <= 0.12
    # the shapes of batch size 1 have no padding: cheaper, and left out of the fit as such
    assert {r["batch_size"] for r in cm.timings if r.get("outlier")} <= {1}


def test_a_mask_free_calibration_misses_the_padding_cost(fake_clock):
    """The control: full rows (no zeros in the mask) price the padded batches too low."""
    def full_rows(rows):
        longest = max(len(r["input_ids"]) for r in rows)
        return batches.default_collate([{"input_ids": [1] * longest} for _ in rows], 0, torch)

    model = MaskCostModel(fake_clock)
    cm = brs.calibrate(model, LENGTHS, collate_fn=full_rows, batch_sizes=[1, 2, 4, 8],
                       repeats=2, memory_budget="1GiB", progress=False)
    batch = training_batch(4, 150, np.random.default_rng(0))
    before = fake_clock.now
    model(**batch)
    measured = fake_clock.now - before
    assert cm.predict(4, 150) < measured / 1.2


# -- the batches calibrate builds ----------------------------------------------------------------

class Recorder(torch.nn.Module):
    """Takes the inputs the user's forward gives it, and remembers them."""

    def __init__(self, clock):
        super().__init__()
        self.embedding = torch.nn.Embedding(50, 4)
        self.clock, self.seen = clock, []

    def forward(self, ids, marker):
        self.seen.append((tuple(ids.shape), marker))
        self.clock.now += known_seconds(*ids.shape)
        return self.embedding(ids).sum()


def test_the_users_collate_fn_and_forward_build_and_run_every_batch(fake_clock):
    collated, forwarded = [], []

    def collate_fn(rows):  # pads to a multiple of 32, as pad_to_multiple_of does
        lengths = [len(r["input_ids"]) for r in rows]
        collated.append(lengths)
        padded = -(-max(lengths) // 32) * 32
        ids = torch.zeros((len(rows), padded), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, :len(row["input_ids"])] = torch.tensor(row["input_ids"])
        return {"ids": ids, "marker": "collated by the user"}

    def forward(model, batch):
        forwarded.append(batch["ids"].shape)
        return model(batch["ids"], batch["marker"])

    model = Recorder(fake_clock)
    cm = brs.calibrate(model, LENGTHS, collate_fn=collate_fn, forward=forward,
                       batch_sizes=[1, 2, 4], seq_lens=[40, 100, 199], repeats=2,
                       memory_budget="1GiB", progress=False)
    assert model.seen and all(marker == "collated by the user" for _, marker in model.seen)
    assert len(forwarded) == len(model.seen)
    # one batch per shape: bs rows, one of length L, the others the dataset's lengths <= L
    assert len(collated) == 9
    for lengths in collated:
        longest = max(lengths)
        assert longest in (40, 100, 199) and lengths[0] == longest
        assert all(n in LENGTHS for n in lengths[1:])
    # the fit is of the tensors built: the collator's rounded lengths
    assert {r["length"] for r in cm.timings} == {64, 128, 224}
    assert {r["grid_length"] for r in cm.timings} == {40, 100, 199}


def test_the_default_batch_pads_masks_and_ignores_padding_in_the_labels():
    rows = [{"input_ids": [5, 6, 7]}, {"input_ids": [8]}]
    batch = batches.default_collate(rows, 0, torch)
    assert batch["input_ids"].tolist() == [[5, 6, 7], [8, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert batch["labels"].tolist() == [[5, 6, 7], [8, -100, -100]]


def test_a_timed_batch_has_bs_rows_padded_to_its_length():
    made = batches.Batches(np.array(LENGTHS), 50, 0, None, torch.device("cpu"), torch)
    batch = made((6, 120))
    assert tuple(batch["input_ids"].shape) == (6, 120)
    real = batch["attention_mask"].sum(dim=1).tolist()
    assert real[0] == 120 and all(n <= 120 and n in LENGTHS for n in real[1:])
    assert made((6, 120)) is batch  # built once: every repeat times the same batch


# -- the first run of a shape ---------------------------------------------------------------------

# The fixed and per-token parts are large beside the ~0.3 ms the harness adds to every run
# (autograd, the timer), which would otherwise move the fitted intercept and alpha by 10%.
SPIN_C0, SPIN_A, SPIN_ALPHA, FIRST = 10e-3, 3e-6, 0.004, 20e-3


def spin(seconds):
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        pass


class FirstShapeModel(torch.nn.Module):
    """Spins SPIN_A * (bs*L + SPIN_ALPHA*bs*L^2) + SPIN_C0 seconds of this thread's CPU, and
    FIRST more on the first call of each shape (a plan built, a kernel compiled)."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(1))
        self.shapes = set()

    def forward(self, input_ids, labels, attention_mask=None):
        bs, length = input_ids.shape
        tokens = bs * length
        first = (bs, length) not in self.shapes
        self.shapes.add((bs, length))
        spin(SPIN_C0 + SPIN_A * (tokens + SPIN_ALPHA * tokens * length) + (FIRST if first else 0))
        return self.weight.sum()


def test_first_runs_are_priced_apart_and_kept_out_of_the_fit(one_thread, tmp_path, monkeypatch):
    monkeypatch.setattr(timing_record, "load_average", lambda: 0.0)  # busy or not: same result
    with pytest.warns(UserWarning, match="first run of a new") as caught:
        cm = brs.calibrate(FirstShapeModel(), LENGTHS, batch_sizes=[1, 2, 4, 8],
                           seq_lens=[64, 256, 512], repeats=3, memory_budget="1GiB",
                           progress=False)
    assert any("length_buckets or pad_to_multiple_of" in str(w.message) for w in caught)
    assert cm.timing["clock"] == "thread_time"
    assert cm.alpha == pytest.approx(SPIN_ALPHA, rel=0.10), cm.timings
    assert cm.intercept == pytest.approx(SPIN_C0 / SPIN_A, rel=0.10), cm.timings
    assert cm.first_shape_seconds == pytest.approx(FIRST, rel=0.25)
    measured = [r for r in cm.timings if r["first_seconds"] is not None]
    assert len(measured) == len(cm.timings) - 1  # the shape that warmed the model up is not
    cm.save(tmp_path / "cost.json")
    assert brs.CostModel.load(tmp_path / "cost.json").first_shape_seconds == \
        cm.first_shape_seconds


def test_first_shape_seconds_is_the_median_extra_and_never_negative():
    rows = [{"seconds": 1.0, "first_seconds": f} for f in (1.5, 1.2, 3.0)]
    rows.append({"seconds": 1.0, "first_seconds": None})
    assert result.first_shape_seconds(rows) == pytest.approx(0.5)
    assert result.first_shape_seconds([{"seconds": 1.0, "first_seconds": 0.9}]) == 0.0
    assert result.first_shape_seconds([{"seconds": 1.0, "first_seconds": None}]) == 0.0


def test_a_cost_model_file_without_first_shape_seconds_still_loads(tmp_path):
    path = tmp_path / "old.json"
    path.write_text('{"format": "brs-cost-model", "version": 1, "alpha": 0.001, '
                    '"intercept": 0}')
    assert brs.CostModel.load(path).first_shape_seconds == 0.0
    path.write_text('{"format": "brs-cost-model", "version": 1, "alpha": 0.001, '
                    '"intercept": 0, "first_shape_seconds": -1}')
    with pytest.raises(ValueError, match="first_shape_seconds"):
        brs.CostModel.load(path)


# -- checks before any work -----------------------------------------------------------------------

def test_a_budget_that_cannot_hold_the_model_is_refused_before_it_is_built(monkeypatch):
    from brs.calibration import shapes

    built, build = [], shapes.build_model
    monkeypatch.setattr(shapes, "build_model",
                        lambda *a, **k: built.append(str(k.get("device"))) or build(*a, **k))
    with pytest.raises(ValueError, match="cannot hold the model") as error:
        brs.calibrate("gpt2-tiny", LENGTHS, memory_budget="1KB", progress=False)
    assert "\n" not in str(error.value)
    assert built == ["meta"]  # counted on the meta device: nothing allocated, nothing timed


def test_the_checks_run_in_order_lengths_grid_budget():
    with pytest.raises(ValueError, match="at least one token count"):
        brs.calibrate("gpt2-tiny", [], seq_lens=[64], memory_budget="1KB")
    with pytest.raises(ValueError, match="cannot fit"):
        brs.calibrate("gpt2-tiny", LENGTHS, seq_lens=[64], memory_budget="1KB")


# -- CUDA: the caching allocator's reserved bytes --------------------------------------------------

MEM0, MEM1 = 50e6, 4000.0  # allocated bytes: model and gradients, then per padded token
FRAGMENTATION = 1.3  # the pool ends this much above the live tensors' peak


class FakeAllocator:
    """torch.cuda's memory queries over a CPU run: each call's allocated peak follows its
    shape; the reserved pool only grows, to FRAGMENTATION x the largest live peak."""

    def __init__(self):
        self.allocated = self.peak_allocated = 0
        self.reserved = self.peak_reserved = int(MEM0)

    def run(self, tokens):
        self.peak_allocated = int(MEM0 + MEM1 * tokens)
        self.reserved = max(self.reserved, int(FRAGMENTATION * self.peak_allocated))
        self.peak_reserved = self.reserved

    def install(self, monkeypatch):
        cuda = torch.cuda
        monkeypatch.setattr(cuda, "reset_peak_memory_stats", lambda device=None: None)
        monkeypatch.setattr(cuda, "synchronize", lambda device=None: None)
        monkeypatch.setattr(cuda, "max_memory_allocated", lambda device=None: self.peak_allocated)
        monkeypatch.setattr(cuda, "max_memory_reserved", lambda device=None: self.peak_reserved)
        monkeypatch.setattr(cuda, "memory_reserved", lambda device=None: self.reserved)
        monkeypatch.setattr(cuda, "mem_get_info", lambda device=None: (8 << 30, 16 << 30))
        monkeypatch.setattr(cuda, "get_device_name", lambda device=None: "Fake GPU")
        monkeypatch.setattr(cuda, "Event", FakeEvent)


class FakeEvent:
    def __init__(self, enable_timing=False):
        self.at = None

    def record(self):
        self.at = time.perf_counter()

    def elapsed_time(self, end):
        return (end.at - self.at) * 1e3


class AllocatingModel(torch.nn.Module):
    def __init__(self, allocator, clock):
        super().__init__()
        self.embedding = torch.nn.Embedding(50, 4)
        self.allocator, self.clock = allocator, clock

    def forward(self, input_ids, labels, attention_mask=None):
        self.allocator.run(input_ids.numel())
        self.clock.now += known_seconds(*input_ids.shape)
        return types.SimpleNamespace(loss=self.embedding(input_ids).sum())


def test_on_cuda_the_cap_holds_in_reserved_bytes(monkeypatch, fake_clock):
    allocator = FakeAllocator()
    allocator.install(monkeypatch)
    monkeypatch.setattr(time, "perf_counter", fake_clock.perf_counter)
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:256,expandable_segments:True")
    device = torch.device("cuda")
    model = AllocatingModel(allocator, fake_clock)
    grid = [(1, 64), (2, 64), (4, 128), (8, 128), (4, 64), (8, 199)]
    made = batches.Batches(np.array(LENGTHS), 50, 0, None, torch.device("cpu"), torch)
    probe = memory.PeakProbe(device)
    rows, clock = timing.measure(grid, made, 3, timing.TrainingStep(model, None, None, torch),
                                 probe, device, False, torch)
    assert clock == "cuda_events"
    budget = 4 << 30
    cm = result.cost_model(rows, np.array(LENGTHS), budget, "given", probe.method, "fake",
                           device, {}, probe.reserved_record())
    mem = cm.memory
    assert mem["measure"] == "reserved" and mem["expandable_segments"] is True
    assert mem["reserved_over_allocated"] == pytest.approx(FRAGMENTATION, rel=1e-3)
    assert all(r["reserved_bytes"] >= r["allocated_bytes"] for r in rows)
    longest = max(LENGTHS)
    in_reserved = (budget - FRAGMENTATION * MEM0) / (FRAGMENTATION * MEM1)
    assert cm.max_tokens == pytest.approx(in_reserved, rel=1e-3)
    assert cm.max_tokens < (budget - MEM0) / MEM1 / 1.25  # the allocated-bytes cap, too high
    assert cm.device == "cuda:Fake GPU" and cm.max_tokens >= longest

    # memory_budget="auto" plans in the same terms: the optimizer's bytes scaled alike
    class OnCuda:
        def __init__(self):
            self.p = types.SimpleNamespace(device=device, numel=lambda: 1000,
                                           element_size=lambda: 4, requires_grad=True)

        def parameters(self):
            return iter([self.p])

    free = (8 << 30) + allocator.reserved - max(memory.CUDA_MARGIN_MIN,
                                               int(memory.CUDA_MARGIN_FRACTION * (16 << 30)))
    cap = _memory_budget.derive("auto", OnCuda(), cm, longest)
    per_token = mem["bytes_per_token"] + mem["bytes_per_token_length"] * longest
    expected = (free - 1000 * 12 * FRAGMENTATION - mem["base_bytes"]) / per_token
    assert cap == pytest.approx(expected, abs=1)


def test_expandable_segments_is_read_from_the_allocator_settings(monkeypatch):
    monkeypatch.delenv("PYTORCH_ALLOC_CONF", raising=False)
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False")
    assert memory.expandable_segments() is False
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF")
    assert memory.expandable_segments() is False
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "expandable_segments:True")
    assert memory.expandable_segments() is True


def test_an_out_of_memory_error_keeps_the_devices_whole_message(fake_clock):
    text = "CUDA out of memory. Tried to allocate 2.00 GiB. " + "x" * 400 + " the end"

    class Oom(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(1))

        def forward(self, input_ids, labels, attention_mask=None):
            if input_ids.numel() > 300:
                raise torch.OutOfMemoryError(text)
            fake_clock.now += known_seconds(*input_ids.shape)
            return self.w.sum()

    with pytest.raises(ValueError, match="ran out of memory") as error:
        brs.calibrate(Oom(), LENGTHS, batch_sizes=[1, 2, 4], seq_lens=[32, 100],
                      repeats=1, memory_budget="1GiB", progress=False)
    assert text in str(error.value)


# -- online calibration ---------------------------------------------------------------------------

def test_the_online_fit_leaves_first_runs_out_and_logs_them(monkeypatch):
    clock = known_cost.FakeClock()
    monkeypatch.setattr(online, "time", clock)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    timer = online.Timer()
    shapes = [(bs, length) for bs in (1, 2, 4, 8) for length in (16, 40, 90)]
    extra = 0.05
    for rep in range(3):
        for bs, length in shapes:
            timer.start(torch.device("cpu"))
            clock.now += known_seconds(bs, length) + (extra if rep == 0 else 0.0)
            timer.stop(bs, length, bs * length)
    stats = timer.take()
    assert stats["n"] == 2 * len(shapes) and stats["first_n"] == len(shapes)
    assert stats.fit()[:3] == pytest.approx((C0, A, B), rel=1e-6)  # warm runs only

    calibration = online.OnlineCalibration()
    calibration.timer = timer
    timer.local = stats
    sampler = brs.BatchRebalanceSampler(LENGTHS, per_device_batch_size=4)
    metrics = calibration.recalibrate(sampler, 1)
    assert metrics["brs/first_shape_count"] == len(shapes)
    assert metrics["brs/first_shape_seconds"] == pytest.approx(extra * len(shapes), rel=1e-6)
    assert sampler.cost_model.first_shape_seconds == pytest.approx(extra, rel=1e-6)


def test_saved_statistics_from_before_the_first_run_fields_restore():
    old_fields = [f for f in online.FIELDS if not f.startswith("first_")]
    stats = online.Statistics.from_saved(list(range(len(old_fields))), old_fields)
    assert stats["n"] == 0.0 and stats["real_tokens"] == len(old_fields) - 1
    assert stats["first_n"] == 0.0


def test_warnings_name_no_first_shape_cost_when_there_is_none(fake_clock):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm = brs.calibrate(MaskCostModel(fake_clock), LENGTHS, batch_sizes=[1, 2, 4],
                           seq_lens=[32, 100], repeats=1, memory_budget="1GiB", progress=False)
    assert cm.first_shape_seconds == 0.0


# -- the command line and the integrations --------------------------------------------------------

def test_the_cli_reads_the_lengths_before_the_model_and_refuses_a_small_budget(tmp_path):
    out = tmp_path / "cost.json"
    missing = known_cost.cli("--model", "no-such-shape", "--lengths", tmp_path / "absent",
                             "-o", out)
    assert missing.returncode == 2 and "lengths file" in missing.stderr
    lengths = tmp_path / "l.txt"
    lengths.write_text("10\n20\n30\n")
    small = known_cost.cli("--model", "gpt2-tiny", "--lengths", lengths, "--memory-budget",
                           "1KB", "-o", out)
    assert small.returncode == 2 and "cannot hold the model" in small.stderr
    assert len(small.stderr.strip().splitlines()) == 1 and not out.exists()


class CountingCollator:
    def __init__(self):
        self.calls = 0

    def __call__(self, rows):
        self.calls += 1
        return known_cost.pad(rows)


def test_the_trainer_calibrates_with_its_collator_and_compute_loss(tmp_path, monkeypatch,
                                                                    fake_clock):
    transformers = pytest.importorskip("transformers")
    from brs.integrations.transformers import BatchRebalanceTrainer

    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=96,
                                     n_positions=64)
    model = transformers.AutoModelForCausalLM.from_config(config)
    lengths = [int(x) for x in np.random.default_rng(2).integers(4, 60, 64)]
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "run"), report_to="none",
                                          use_cpu=True, remove_unused_columns=False,
                                          disable_tqdm=True, save_strategy="no")
    collator = CountingCollator()
    trainer = BatchRebalanceTrainer(model=model, args=args, data_collator=collator,
                                    train_dataset=known_cost.TokenRows(lengths))
    losses = []
    compute_loss = trainer.compute_loss

    def timed_loss(model, inputs, *args, **kwargs):  # known seconds: the fit is exact
        losses.append(tuple(inputs["input_ids"].shape))
        fake_clock.now += known_seconds(*inputs["input_ids"].shape)
        return compute_loss(model, inputs, *args, **kwargs)

    monkeypatch.setattr(trainer, "compute_loss", timed_loss)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm = trainer.calibrate_cost_model(batch_sizes=[1, 4, 16], seq_lens=[8, 24, 59],
                                          repeats=1, memory_budget="1GiB", progress=False)
    assert collator.calls == 9  # one batch per shape, built by the Trainer's collator
    assert len(losses) == 9 * 3 + 1  # every run through compute_loss
    assert trainer.rebalance_options.cost_model is cm
    assert cm.alpha == pytest.approx(B / A, rel=1e-6) and cm.first_shape_seconds == 0.0


class Rows(torch.utils.data.Dataset):
    def __len__(self):
        return len(LENGTHS)

    def __getitem__(self, i):
        return {"input_ids": [1] * LENGTHS[i]}


def rebalance_loader(collate, wrap=lambda sampler: sampler):
    sampler = brs.BatchRebalanceSampler(LENGTHS, per_device_batch_size=4)
    return torch.utils.data.DataLoader(Rows(), batch_sampler=wrap(sampler), collate_fn=collate)


def test_an_accelerate_loop_calibrates_with_its_loader_and_loss(fake_clock):
    pytest.importorskip("accelerate")
    from brs.integrations.accelerate import calibrate_loader

    collator, losses = CountingCollator(), []
    model = MaskCostModel(fake_clock)

    def loss_fn(model, batch):
        losses.append(tuple(batch["input_ids"].shape))
        return model(**batch).loss

    cm = calibrate_loader(model, rebalance_loader(collator), forward=loss_fn,
                          batch_sizes=[2, 4, 8], seq_lens=[40, 199], repeats=1,
                          memory_budget="1GiB", progress=False)
    assert collator.calls == 6 and len(losses) == 6 * 3 + 1
    assert cm.alpha == pytest.approx(B / A, rel=1e-6)  # every batch padded: one mask cost


def test_a_lightning_module_calibrates_with_its_training_step(fake_clock):
    pytest.importorskip("lightning")
    import lightning.pytorch as pl
    from brs.integrations.lightning import LightningBatchSampler, calibrate_module

    collator = CountingCollator()

    class Module(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.inner, self.steps = MaskCostModel(fake_clock), 0

        def train_dataloader(self):
            return rebalance_loader(collator, LightningBatchSampler)

        def training_step(self, batch, batch_idx):
            self.steps += 1
            return {"loss": self.inner(**batch).loss}

    module = Module()
    cm = calibrate_module(module, batch_sizes=[2, 4, 8], seq_lens=[40, 199], repeats=1,
                          memory_budget="1GiB", progress=False)
    assert collator.calls == 6 and module.steps == 6 * 3 + 1
    assert cm.alpha == pytest.approx(B / A, rel=1e-6)
