"""Real training over chosen steps of a plan: every micro-batch timed, the optimizer stepped.

One process stands in for all dp ranks: it runs every rank's micro-batch of a step one after
the other, accumulating gradients, then takes one AdamW step (the all-reduced step of the real
job). Each micro-batch's forward+backward is timed alone: CUDA events around it, read after a
synchronise, on GPU; perf_counter on CPU. From those MEASURED times summary.py computes the
step time a dp-rank job would see.
"""

import time

import torch

from brs import _memory

PAD_ID = 0


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


def run_steps(model, optimizer, plan, steps, lengths, vocab, device, seed):
    """{'micro': [[seconds per (rank, micro)] per step], 'optimizer': [s], 'shapes': [...],
    'peak_bytes': int or None}; raises on OOM (the caller records it)."""
    timer, generator = Timer(device), torch.Generator().manual_seed(seed)
    optimizer.zero_grad(set_to_none=True)  # nothing left over from an earlier OOM
    probe = _memory.PeakProbe(device)
    first = plan[steps[0]][0][0]
    micro_step(model, make_batch(lengths, first, vocab, device, generator))  # warm-up
    optimizer.zero_grad(set_to_none=True)
    probe.set_baseline()
    probe.reset()
    out = {"micro": [], "optimizer": [], "shapes": []}
    for t in steps:
        marks, shapes = [], []
        for rank in plan[t]:
            row, shape_row = [], []
            for indices in rank:
                batch = make_batch(lengths, indices, vocab, device, generator)
                started = timer.start()
                micro_step(model, batch)
                row.append(timer.stop(started))
                shape_row.append([len(indices), int(batch[0].shape[1]),
                                  int(sum(lengths[i] for i in indices))])
            marks.append(row)
            shapes.append(shape_row)
        started = timer.start()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        opt_mark = timer.stop(started)
        out["micro"].append([[timer.seconds(m) for m in row] for row in marks])
        out["optimizer"].append(timer.seconds(opt_mark))
        out["shapes"].append(shapes)
    # On CPU the probe is the process's peak RSS, which the C allocator's cached pages from the
    # previous sampler distort: a comparison between samplers would be wrong, so none is made.
    out["peak_bytes"] = probe.peak() if probe.cuda else None
    out["memory_method"] = probe.method if probe.cuda else "not measured on CPU"
    return out


def guarded(fn, device):
    """fn()'s result, or {'oom': message} when the device ran out of memory."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - anything but an OOM propagates
        if not _memory.is_out_of_memory(exc):
            raise
        message = str(exc).splitlines()[0][:200]
    _memory.free_cached(device)
    return {"oom": message}
