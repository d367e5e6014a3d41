"""What the trial runs and how it measures it: the model, the micro-batches built from the plans'
samples, one training micro-step (forward and backward; the optimizer's step once per step),
its clock and its peak memory.

Clock: calibration's (calibration/timing.py): CUDA events around the call after a
synchronisation; on CPU time.perf_counter around the call, and the thread's CPU time beside it,
with torch on one thread (the trial sets torch.set_num_threads(1) while it times).
Peak memory: CUDA torch.cuda.max_memory_reserved (the caching allocator's pool, what a job
must fit in), reset before each strategy's block; CPU the torch profiler's memory events
(brs.calibration.memory.cpu_peak_bytes: every byte torch allocates during a micro-step above
what was live before it, exact and blind to other processes) added to the live bytes of the
parameters, gradients and AdamW state, measured on untimed runs.
"""

from collections.abc import Mapping

from ..calibration import batches as _batches, memory as _memory, shapes as _shapes, \
    timing as _timing


def resolve_model(model, device, dtype=None):
    """(module, name) of a torch module, a transformers config, a built-in shape name, a
    directory with config.json or a locally cached hub name: random weights, no download.
    ValueError naming the model when it cannot be built."""
    import torch

    if isinstance(model, torch.nn.Module):
        return model.to(device), type(model).__name__
    name = str(model) if isinstance(model, str) or hasattr(model, "__fspath__") else None
    try:
        config = model if name is None else _load_config(name)
        if not hasattr(config, "to_dict") or not hasattr(config, "model_type"):
            raise TypeError(f"needs a torch.nn.Module, a transformers config, a directory with "
                            f"config.json or a cached hub name; got {type(model).__name__}")
        dtype = dtype or (torch.bfloat16 if device.type == "cuda" else torch.float32)
        module = _shapes.build_model(config, device=device, dtype=dtype)
    except Exception as exc:  # noqa: BLE001 - any failure to build is the user's input
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"cannot build a model from {name or type(model).__name__}: "
                         f"{text}") from None
    return module, name or getattr(config, "model_type", "model")


def _load_config(name):
    import os

    if os.path.isdir(name) or name in _shapes.SHAPES:
        return _shapes.load_config(name)
    from transformers import AutoConfig  # a hub name found in the local cache only

    return AutoConfig.from_pretrained(name, local_files_only=True)


class Rows:
    """The rows of a micro-batch's samples, as a tokenized dataset yields them: the dataset's
    own rows, or for lengths alone ``{"input_ids": ids}`` of each sample's length, the ids
    drawn from the model's vocabulary (seeded by the sample's index: the same every run)."""

    def __init__(self, lengths, dataset, vocab, seed):
        self.lengths, self.dataset = lengths, dataset
        self.vocab, self.seed = max(int(vocab), 1), seed

    def __call__(self, indices):
        import numpy as np

        if self.dataset is not None:
            return [self.dataset[int(i)] for i in indices]
        return [{"input_ids": np.random.default_rng([self.seed, int(i)]).integers(
            0, self.vocab, int(self.lengths[i])).tolist()} for i in indices]


def collate_to(rows, length, pad_id, torch):
    """brs.calibration's default collate (right padding, attention_mask, labels -100 on
    padding), padded to the plan's ``length``: the tensor the plan priced."""
    batch = _batches.default_collate(rows, pad_id, torch)
    extra = length - batch["input_ids"].shape[1]
    if extra > 0:
        pad = torch.nn.functional.pad
        batch = {"input_ids": pad(batch["input_ids"], (0, extra), value=pad_id),
                 "attention_mask": pad(batch["attention_mask"], (0, extra), value=0),
                 "labels": pad(batch["labels"], (0, extra), value=_batches.IGNORE_INDEX)}
    return batch


class Runner:
    """The model, its AdamW optimizer and the micro-batches built from plans' samples, timed
    and probed by the measurement layer brs.calibrate uses (calibration/timing.py's Clock and
    TrainingStep, calibration/memory.py's PeakProbe)."""

    def __init__(self, module, rows, collate_fn, forward, device, torch):
        self.module, self.rows, self.device, self.torch = module, rows, device, torch
        self.collate_fn = collate_fn
        self.pad_id = _batches.pad_id_of(module)
        self.optimizer = torch.optim.AdamW(module.parameters(), lr=1e-6)
        self.step = _timing.TrainingStep(module, forward, self.optimizer, torch)
        self.probe = _memory.PeakProbe(device)
        self.cuda = device.type == "cuda"
        self.clock = None  # made by start_clock, once the thread count is set for timing
        module.train()

    def batch(self, mb):
        """The collated batch of a plan's micro-batch, on the device."""
        rows = self.rows(mb.indices)
        if self.collate_fn is not None:
            batch = self.collate_fn(rows)
        else:
            batch = collate_to(rows, mb.padded_length, self.pad_id, self.torch)
        return _batches.to_device(batch, self.device)

    @staticmethod
    def shape_of(batch, mb):
        """(batch size, padded length) of the collated batch (its input_ids', else the plan's)."""
        ids = batch.get("input_ids") if isinstance(batch, Mapping) else None
        if getattr(ids, "ndim", 0) == 2:
            return int(ids.shape[0]), int(ids.shape[1])
        return mb.shape

    def micro_step(self, batch):
        """Forward and backward of one micro-batch; gradients accumulate, as in training."""
        self.step.micro_step(batch)

    def optimizer_step(self):
        self.step.optimizer_step()

    def zero_grad(self):
        self.step.zero_grad()

    def start_clock(self):
        """The clock of the timed calls, chosen by the thread count in force now."""
        self.clock = _timing.Clock(self.device, self.torch)
        return self.clock

    thread_seconds = None

    def timed(self, fn, *args):
        """Wall seconds of fn(*args) (CUDA events on CUDA), with the thread's CPU time in
        ``thread_seconds``: another process preempting this one cannot inflate it."""
        clock = self.clock or self.start_clock()
        fitted, wall, cpu = clock.run(fn, *args)
        self.thread_seconds = None if self.cuda else cpu
        return fitted if self.cuda else wall

    def settle(self, mb):
        """One untimed micro-step and optimizer step: the gradients and AdamW's state exist
        from here on, as in a training job past its first step."""
        self.micro_step(self.batch(mb))
        self.optimizer_step()
        self.zero_grad()

    def held_bytes(self):
        """Bytes of the live parameters, gradients and optimizer state tensors."""
        seen, total = set(), 0

        def add(t):
            nonlocal total
            if isinstance(t, self.torch.Tensor) and id(t) not in seen:
                seen.add(id(t))
                total += t.numel() * t.element_size()

        for p in self.module.parameters():
            add(p)
            add(p.grad)
        for state in self.optimizer.state.values():
            for value in state.values():
                add(value)
        return total

    def peak_bytes(self, mb):
        """The peak bytes of one micro-step of ``mb`` (untimed): CUDA the pool's reserved
        peak, CPU the live model state plus the profiler's peak above it. Raises
        calibration's OutOfMemory."""
        def run():
            batch = self.batch(mb)
            held = 0 if self.cuda else self.held_bytes()
            above = self.probe.pool_peak(lambda: self.micro_step(batch))
            return None if above is None else held + above

        peak = _timing.guarded(run, self.device, lambda said: said, cleanup=self.zero_grad)
        self.zero_grad()
        return peak

    def memory_method(self):
        if self.cuda:
            return "torch.cuda.max_memory_reserved (reset before each strategy's block)"
        return ("torch profiler memory events: peak torch bytes of a micro-step above the live "
                "parameters, gradients and AdamW state, plus those (untimed runs of the "
                "strategy's largest timed shapes)")


def pareto_largest(shapes):
    """The shapes no other shape dominates in both batch size and padded length: the only
    candidates for a strategy's peak (memory grows with both)."""
    shapes = sorted(set(shapes), key=lambda s: (-s[0], -s[1]))
    kept, longest = [], -1
    for size, length in shapes:
        if length > longest:
            kept.append((size, length))
            longest = length
    return kept
