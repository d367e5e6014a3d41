"""Real training over chosen steps of a plan: every micro-batch timed, the optimizer stepped.

One process stands in for all dp ranks: it runs every rank's micro-batch of a step one after
the other, accumulating gradients, then takes one AdamW step (the all-reduced step of the real
job). Each micro-batch's forward+backward is timed alone: CUDA events around it, read after a
synchronise, on GPU; perf_counter on CPU. From those MEASURED times summary.py computes the
step time a dp-rank job would see. Peak memory: torch.cuda.max_memory_allocated on GPU; on CPU
torch's profiler memory events over an extra, untimed run of each step's largest micro-batches.
"""

import time

import torch

from brs.calibration import memory as _memory
from brs.cost_model import COST_TERMS, cost_terms

PAD_ID = 0
CPU_MEMORY_METHOD = ("torch profiler memory events: peak bytes of each step's largest "
                     "micro-batches above the tensors live before them (parameters, optimizer "
                     "state)")


def make_batch(lengths, indices, vocab, device, generator):
    """Right-padded ids with random tokens, the attention mask, labels -100 on padding."""
    width = max(lengths[i] for i in indices)
    ids = torch.randint(1, vocab, (len(indices), width), generator=generator)
    mask = torch.zeros_like(ids)
    for row, i in enumerate(indices):
        mask[row, :lengths[i]] = 1
    ids = ids.masked_fill(mask == 0, PAD_ID)
    labels = ids.masked_fill(mask == 0, -100)
    return ids.to(device), mask.to(device), labels.to(device)


class Timer:
    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.device = device

    def start(self):
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def stop(self, started):
        """An opaque mark; seconds() turns (start, stop) pairs into seconds after a sync."""
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return (started, event)
        return time.perf_counter() - started

    def seconds(self, mark):
        if self.cuda:
            torch.cuda.synchronize(self.device)
            return mark[0].elapsed_time(mark[1]) / 1000.0
        return mark


def micro_step(model, batch):
    ids, mask, labels = batch
    out = model(input_ids=ids, attention_mask=mask, labels=labels)
    out.loss.backward()


class Session:
    """One sampler's measured steps: its own AdamW over the shared model, every micro-batch
    timed. ``step(t)`` trains step t of the plan; ``result()`` is
    {'micro': [[seconds per micro] per rank] per step, 'optimizer': [s], 'shapes': [...],
    'peak_bytes': int or None}. An OOM propagates (the caller records it)."""

    def __init__(self, model, plan, lengths, vocab, device, seed):
        self.model, self.plan, self.lengths, self.vocab = model, plan, lengths, vocab
        self.device, self.timer = device, Timer(device)
        self.generator = torch.Generator().manual_seed(seed)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
        self.probe = _memory.PeakProbe(device)
        self.out = {"micro": [], "optimizer": [], "shapes": [], "steps": []}
        self.warm = False
        self.cpu_peak = None

    def _batch(self, indices):
        return make_batch(self.lengths, indices, self.vocab, self.device, self.generator)

    def _warm_up(self, t):
        self.optimizer.zero_grad(set_to_none=True)  # nothing left over from an earlier OOM
        micro_step(self.model, self._batch(self.plan[t][0][0]))
        self.optimizer.zero_grad(set_to_none=True)
        if self.timer.cuda:  # the peak of the measured steps, the warm-up's left out
            torch.cuda.reset_peak_memory_stats(self.device)
        self.warm = True

    def step(self, t):
        if not self.warm:
            self._warm_up(t)
        timer, marks, shapes = self.timer, [], []
        for rank in self.plan[t]:
            row, shape_row = [], []
            for indices in rank:
                batch = self._batch(indices)
                started = timer.start()
                micro_step(self.model, batch)
                row.append(timer.stop(started))
                shape_row.append([len(indices), int(batch[0].shape[1]),
                                  int(sum(self.lengths[i] for i in indices))])
            marks.append(row)
            shapes.append(shape_row)
        started = timer.start()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        opt_mark = timer.stop(started)
        if not timer.cuda:
            self._cpu_peak(self.plan[t])
        self.out["micro"].append([[timer.seconds(m) for m in row] for row in marks])
        self.out["optimizer"].append(timer.seconds(opt_mark))
        self.out["shapes"].append(shapes)
        self.out["steps"].append(t)

    def _cpu_peak(self, step):
        """On CPU, where no allocator keeps statistics: the step's largest micro-batches (the
        largest in each cost term that grows with the shape: most padded tokens, most bs*L^2)
        trained once more, untimed and after the optimizer step, under torch's memory
        profiler; their gradients are discarded."""
        micro = [mb for rank in step for mb in rank]
        terms = [cost_terms(len(mb), max(self.lengths[i] for i in mb)) for mb in micro]
        picks = {max(range(len(micro)), key=lambda k: terms[k][term])
                 for term in range(1, len(COST_TERMS))}
        for k in sorted(picks):
            batch = self._batch(micro[k])
            _, peak = self.probe.measure(lambda: micro_step(self.model, batch))
            self.optimizer.zero_grad(set_to_none=True)
            if peak is not None:
                self.cpu_peak = max(self.cpu_peak or 0, peak)

    def result(self):
        if self.timer.cuda:
            torch.cuda.synchronize(self.device)
            self.out["peak_bytes"] = int(torch.cuda.max_memory_allocated(self.device))
            self.out["memory_method"] = "torch.cuda.max_memory_allocated over the measured steps"
        else:
            self.out["peak_bytes"] = self.cpu_peak
            self.out["memory_method"] = CPU_MEMORY_METHOD
        self.optimizer = None
        return self.out


def guarded(fn, device):
    """None after fn() ran, or {'oom': message} when the device ran out of memory."""
    try:
        fn()
        return None
    except Exception as exc:  # noqa: BLE001 - anything but an OOM propagates
        if not _memory.is_out_of_memory(exc):
            raise
        message = str(exc)  # whole: the allocator's figures (reserved, free) come after line 1
    _memory.free_cached(device)
    return {"oom": message}


def free_cached(device):
    _memory.free_cached(device)
