"""A hand-written accelerate training loop over brs.integrations.accelerate.prepare_dataloader.

    torchrun --nproc_per_node=2 run_accelerate.py --out DIR --save-at STEP        (full run)
    torchrun --nproc_per_node=2 run_accelerate.py --out DIR --resume CHECKPOINT   (resume)

The full run trains EPOCHS epochs and calls accelerator.save_state after optimizer step
STEP, with a progress file beside it; the resumed run loads that state, skips the micro-batches
already trained with accelerator.skip_first_batches and trains to the end. Writes
DIR/log-rank<r>.json (per micro-batch: epoch, the sampler's epoch, indices),
DIR/result-rank<r>.json and, from rank 0, DIR/weights.pt.
"""

import argparse
import datetime
import os

import torch
from accelerate import Accelerator, InitProcessGroupKwargs
from torch.utils.data import DataLoader

from _support import (GROUP_TIMEOUT_S, TokenDataset, closing_process_group, pad_collate,
                      read_json, scaled_lengths, tiny_gpt2, write_json)
from brs import BatchRebalanceSampler
from brs.integrations.accelerate import prepare_dataloader

NUM_SAMPLES = 90
PER_DEVICE = 3
GRAD_ACCUM = 2
EPOCHS = 2
SEED = 11


def build(accelerator):
    dataset = TokenDataset(scaled_lengths(NUM_SAMPLES, start=500))
    # dp_size and rank left unset: the sampler takes them from accelerate.
    sampler = BatchRebalanceSampler(dataset.lengths, per_device_batch_size=PER_DEVICE,
                                    grad_accum=GRAD_ACCUM, seed=SEED, drop_last=True)
    loader = prepare_dataloader(accelerator, DataLoader(dataset, batch_sampler=sampler,
                                                        collate_fn=pad_collate))
    model = tiny_gpt2()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer = accelerator.prepare(model, optimizer)
    return dataset, sampler, loader, model, optimizer


def train(accelerator, parts, start, save_at, save_dir):
    """Trains from ``start`` = (epoch, micro-batches done in it, global step) to the end."""
    _, sampler, loader, model, optimizer = parts
    first_epoch, done, step = start
    log = []
    for epoch in range(first_epoch, EPOCHS):
        skip = done if epoch == first_epoch else 0
        # On resume, set_epoch goes to the skipping loader: it must reach the sampler through
        # accelerate's SkipBatchSampler and BatchSamplerShard.
        batches = accelerator.skip_first_batches(loader, skip) if skip else loader
        batches.set_epoch(epoch)
        for micro, batch in enumerate(batches, start=skip):
            log.append({"epoch": epoch, "sampler_epoch": sampler.epoch,
                        "indices": batch.pop("sample_idx").tolist()})
            accelerator.backward(model(**batch).loss / GRAD_ACCUM)
            if (micro + 1) % GRAD_ACCUM:
                continue
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step == save_at:
                accelerator.save_state(save_dir)
                if accelerator.is_main_process:
                    write_json(os.path.join(save_dir, "progress.json"),
                               {"epoch": epoch, "done": micro + 1, "step": step})
                accelerator.wait_for_everyone()
    return log, step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--save-at", type=int)
    parser.add_argument("--resume")
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)

    timeout = InitProcessGroupKwargs(timeout=datetime.timedelta(seconds=GROUP_TIMEOUT_S))
    accelerator = Accelerator(cpu=True, kwargs_handlers=[timeout])
    parts = build(accelerator)
    start = (0, 0, 0)
    if options.resume:
        accelerator.load_state(options.resume)
        progress = read_json(os.path.join(options.resume, "progress.json"))
        start = (progress["epoch"], progress["done"], progress["step"])
    save_dir = os.path.join(options.out, "state")
    log, step = train(accelerator, parts, start, options.save_at, save_dir)

    rank = accelerator.process_index
    sampler = parts[1]
    write_json(os.path.join(options.out, f"log-rank{rank}.json"), log)
    write_json(os.path.join(options.out, f"result-rank{rank}.json"),
               {"steps": step, "dp_size": sampler.dp_size, "rank": sampler.rank,
                "micro_batches_per_epoch": len(sampler),
                "unpatched_prepare_len": unpatched_prepare_len(accelerator, parts[0])})
    if rank == 0:
        torch.save(accelerator.unwrap_model(parts[3]).state_dict(),
                   os.path.join(options.out, "weights.pt"))


def unpatched_prepare_len(accelerator, dataset):
    """How many micro-batches plain accelerator.prepare would give this rank (the control)."""
    sampler = BatchRebalanceSampler(dataset.lengths, per_device_batch_size=PER_DEVICE,
                                    grad_accum=GRAD_ACCUM, seed=SEED, drop_last=True)
    accelerator.even_batches = False
    plain = accelerator.prepare_data_loader(DataLoader(dataset, batch_sampler=sampler,
                                                       collate_fn=pad_collate))
    return len(plain)


if __name__ == "__main__":
    with closing_process_group():
        main()
