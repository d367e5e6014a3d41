"""Trains the tiny GPT-2 with lightning.Trainer(strategy="ddp") under torchrun, logs each rank.

    torchrun --nproc_per_node=2 run_lightning.py --out DIR [--stop-at STEP] [--resume CKPT]
             [--no-distributed-sampler] [--bare [--no-callback]]

Lightning's defaults otherwise (use_distributed_sampler=True): it re-creates the batch sampler
around its DistributedSampler, from which LightningBatchSampler takes the ranks. With --bare the
DataLoader's batch_sampler is the BatchRebalanceSampler itself, which Lightning's re-creation
wraps in LightningBatchSampler; --no-callback leaves out RebalanceCallback too. Writes
DIR/log-rank<r>.json (one {"epoch", "step", "indices"} per micro-batch trained, in order),
DIR/result-rank<r>.json and, from rank 0, DIR/weights.pt; with --stop-at, a checkpoint at that
optimizer step under DIR/ckpt.
"""

import argparse
import os

import torch
from lightning.pytorch.callbacks import ModelCheckpoint

import _lightning_app as app
import _teardown
from _support import write_json

PER_DEVICE = 2  # x 2 ranks x grad_accum 2: the same global batch of 8 as the one-device tests


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--stop-at", type=int)
    parser.add_argument("--resume")
    parser.add_argument("--no-distributed-sampler", action="store_true")
    parser.add_argument("--bare", action="store_true", help="no LightningBatchSampler")
    parser.add_argument("--no-callback", action="store_true", help="no RebalanceCallback (bare)")
    options = parser.parse_args()
    callbacks, overrides = [], {}
    if options.no_distributed_sampler:
        overrides["use_distributed_sampler"] = False
    if options.stop_at:
        callbacks.append(ModelCheckpoint(dirpath=os.path.join(options.out, "ckpt"),
                                         every_n_train_steps=options.stop_at, save_top_k=-1))
        overrides.update(max_steps=options.stop_at, enable_checkpointing=True)
    module = _module(options)
    trainer = app.trainer(options.out, callbacks=callbacks, devices=2, strategy="ddp",
                          rebalance=not options.no_callback, **overrides)
    trainer.fit(module, ckpt_path=options.resume)
    rank = trainer.global_rank
    write_json(os.path.join(options.out, f"log-rank{rank}.json"), module.index_log)
    batch_sampler = trainer.train_dataloader.batch_sampler
    write_json(os.path.join(options.out, f"result-rank{rank}.json"),
               {"global_step": trainer.global_step, "world_size": trainer.world_size,
                "injected": type(getattr(batch_sampler, "distributed_sampler", None)).__name__,
                "batch_sampler": type(batch_sampler).__name__,
                # a bare sampler: Lightning's re-created batch sampler holds the module's own
                "same_sampler": getattr(batch_sampler, "sampler", None) is getattr(
                    module, "sampler", None),
                "metrics": {name: float(value) for name, value in trainer.logged_metrics.items()
                            if name.startswith("brs/")}})
    if rank == 0:
        torch.save(module.state_dict(), os.path.join(options.out, "weights.pt"))


def _module(options):
    if options.no_callback and not options.bare:
        raise SystemExit("--no-callback needs --bare: TinyLM's loss asks the callback's step_plan")
    if options.bare:
        return (app.PlainBareLM if options.no_callback else app.BareLM)(PER_DEVICE)
    return app.TinyLM(PER_DEVICE)


if __name__ == "__main__":
    _teardown.run(main)
