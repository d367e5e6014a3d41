"""Trains the tiny GPT-2 with a Trainer under torchrun and logs what every rank trained.

    torchrun --nproc_per_node=2 run_trainer.py --out DIR [--sampler ours|upstream]
             [--stop-at STEP] [--resume CHECKPOINT]

Writes DIR/log-rank<r>.json (one {"step", "indices"} per micro-batch trained, in order),
DIR/result-rank<r>.json (global_step, sampler epoch) and, from rank 0, DIR/weights.pt.
Settings are fixed here so that every run of a test compares like with like.
"""

import argparse
import os

import torch
from transformers import Trainer, TrainerCallback, TrainingArguments

from _support import (GROUP_TIMEOUT_S, IndexLogMixin, TokenDataset, closing_process_group,
                      pad_collate, scaled_lengths, tiny_gpt2, write_json)
from brs.integrations.accelerate import find_rebalance_sampler
from brs.integrations.transformers import BatchRebalanceTrainer

NUM_SAMPLES = 100
PER_DEVICE = 4
GRAD_ACCUM = 2
EPOCHS = 2
SAVE_STEPS = 10


class OursTrainer(IndexLogMixin, BatchRebalanceTrainer):
    pass


class UpstreamTrainer(IndexLogMixin, Trainer):
    pass


class StopAt(TrainerCallback):
    """Ends training right after the optimizer step ``step`` (and its checkpoint)."""

    def __init__(self, step):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            control.should_training_stop = True


def training_arguments(out, sampler, **overrides):
    settings = dict(
        output_dir=os.path.join(out, "checkpoints"), per_device_train_batch_size=PER_DEVICE,
        gradient_accumulation_steps=GRAD_ACCUM, num_train_epochs=EPOCHS, learning_rate=1e-3,
        save_strategy="steps", save_steps=SAVE_STEPS, logging_steps=1000, report_to="none",
        use_cpu=True, ddp_backend="gloo", ddp_find_unused_parameters=False, seed=7,
        ddp_timeout=GROUP_TIMEOUT_S,
        dataloader_drop_last=False, remove_unused_columns=False, disable_tqdm=True,
        train_sampling_strategy="batch_rebalance" if sampler == "upstream" else "random")
    settings.update(overrides)
    return TrainingArguments(**settings)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--sampler", choices=("ours", "upstream"), default="ours")
    parser.add_argument("--stop-at", type=int)
    parser.add_argument("--resume")
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)

    trainer_class = OursTrainer if options.sampler == "ours" else UpstreamTrainer
    args = training_arguments(options.out, options.sampler)
    trainer = trainer_class(model=tiny_gpt2(), args=args,
                            train_dataset=TokenDataset(scaled_lengths(NUM_SAMPLES)),
                            data_collator=pad_collate)
    if options.stop_at is not None:
        trainer.add_callback(StopAt(options.stop_at))
    trainer.train(resume_from_checkpoint=options.resume)

    rank = trainer.args.process_index
    sampler = find_rebalance_sampler(trainer.callback_handler.train_dataloader)
    write_json(os.path.join(options.out, f"log-rank{rank}.json"), trainer.index_log)
    write_json(os.path.join(options.out, f"result-rank{rank}.json"),
               {"global_step": trainer.state.global_step, "world_size": trainer.args.world_size,
                "sampler_epoch": getattr(sampler, "epoch", None)})
    if rank == 0:
        torch.save(trainer.model.state_dict(), os.path.join(options.out, "weights.pt"))


if __name__ == "__main__":
    with closing_process_group():
        main()
