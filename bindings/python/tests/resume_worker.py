"""Interrupt a 2-epoch loop and resume it in a fresh process (driven by test_resume.py).

    python resume_worker.py first  DIR   # every case: train until the stop point, save state
    python resume_worker.py second DIR   # every case: load the state, train to the end

A case is (how, num_workers, where): how is "sampler" (a plain DataLoader and the sampler's own
state_dict) or "stateful" (torchdata's StatefulDataLoader state_dict); where is "mid" (inside
epoch 1, inside an optimizer step) or "boundary" (right after epoch 0 ended). Each run writes,
per case, the micro-batches it saw (as index lists) to DIR/<case>.<run>.json.
"""

import itertools
import json
import pathlib
import sys

import torch
from torchdata.stateful_dataloader import StatefulDataLoader

from brs import BatchRebalanceSampler
from brs_data import TokenDataset, pad_collate
from brs_testing import random_lengths

LENGTHS = random_lengths(150, seed=31, high=40)
EPOCHS = 2
STOPS = {"mid": (1, 5), "boundary": (0, None)}  # (epoch, micro-batches consumed; None = all)
CASES = [f"{how}-{workers}-{where}" for how, workers, where in
         itertools.product(("sampler", "stateful"), (0, 2), ("mid", "boundary"))]


def make_sampler():
    return BatchRebalanceSampler(LENGTHS, per_device_batch_size=3, grad_accum=2, dp_size=2,
                                 rank=1, seed=11)


def make_loader(how, sampler, workers):
    kind = StatefulDataLoader if how == "stateful" else torch.utils.data.DataLoader
    return kind(TokenDataset(LENGTHS), batch_sampler=sampler, collate_fn=pad_collate,
                num_workers=workers)


def save_state(how, sampler, loader, epoch, consumed):
    if how == "stateful":
        return {"epoch": epoch, "loader": loader.state_dict()}
    # A plain DataLoader's workers prefetch, so the sampler is ahead of the loop: say how far
    # the loop got. Without workers the sampler's own position is exact.
    exact = sampler.state_dict() if loader.num_workers == 0 else None
    state = sampler.state_dict(consumed=consumed)
    assert exact is None or exact == state, (exact, state)
    return {"epoch": epoch, "sampler": state}


def first(case, out):
    how, workers, where = case.split("-")
    stop_epoch, stop_at = STOPS[where]
    sampler = make_sampler()
    loader = make_loader(how, sampler, int(workers))
    seen = []
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        consumed = 0
        for batch in loader:
            seen.append(batch["index"].tolist())
            consumed += 1
            if epoch == stop_epoch and consumed == stop_at:
                break
        if epoch == stop_epoch:
            state = save_state(how, sampler, loader, epoch, consumed)
            break
    (out / f"{case}.state.json").write_text(json.dumps(state))
    return seen


def second(case, out):
    how, workers, _ = case.split("-")
    state = json.loads((out / f"{case}.state.json").read_text())
    sampler = make_sampler()
    loader = make_loader(how, sampler, int(workers))
    if how == "stateful":
        loader.load_state_dict(state["loader"])
    else:
        sampler.load_state_dict(state["sampler"])
    seen = []
    for epoch in range(state["epoch"], EPOCHS):
        sampler.set_epoch(epoch)
        seen.extend(batch["index"].tolist() for batch in loader)
    return seen


def main(run, out):
    out = pathlib.Path(out)
    for case in CASES:
        seen = (first if run == "first" else second)(case, out)
        (out / f"{case}.{run}.json").write_text(json.dumps(seen))


if __name__ == "__main__":
    main(*sys.argv[1:])
