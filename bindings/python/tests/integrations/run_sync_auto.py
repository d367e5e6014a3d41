"""The Trainer under DDP (torchrun, gloo) with gradient accumulation: which sync it plans for.

    torchrun --nproc_per_node=2 run_sync_auto.py --out DIR

Trains the tiny GPT-2 for STEPS optimizer steps with gradient_accumulation_steps GRAD_ACCUM and
the default RebalanceOptions (sync="auto"). Writes DIR/result-rank<r>.json: the sampler's sync
and its saved options as the library reads them back, its fingerprint, the micro-batches
trained ({"step", "indices"}) and the "brs" logger's records.
"""

import argparse
import logging
import os

from transformers import TrainingArguments

from _support import (GROUP_TIMEOUT_S, IndexLogMixin, TokenDataset, closing_process_group,
                      pad_collate, scaled_lengths, tiny_gpt2, write_json)
from brs.integrations.accelerate import find_rebalance_sampler
from brs.integrations.transformers import BatchRebalanceTrainer

# Step 0 of this shuffle is planned differently for the two sync models (the test checks it).
NUM_SAMPLES = 64
PER_DEVICE = 4
GRAD_ACCUM = 2
STEPS = 1
SEED = 26


class Trainer(IndexLogMixin, BatchRebalanceTrainer):
    pass


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    out = parser.parse_args().out
    records = Records()
    brs_logger = logging.getLogger("brs")
    brs_logger.addHandler(records)
    brs_logger.setLevel(logging.INFO)
    args = TrainingArguments(
        output_dir=os.path.join(out, "checkpoints"), per_device_train_batch_size=PER_DEVICE,
        gradient_accumulation_steps=GRAD_ACCUM, max_steps=STEPS, learning_rate=1e-3,
        save_strategy="no", logging_steps=1000, report_to="none", use_cpu=True,
        ddp_backend="gloo", ddp_find_unused_parameters=False, ddp_timeout=GROUP_TIMEOUT_S,
        seed=SEED, dataloader_drop_last=False, remove_unused_columns=False, disable_tqdm=True)
    trainer = Trainer(model=tiny_gpt2(), args=args, data_collator=pad_collate,
                      train_dataset=TokenDataset(scaled_lengths(NUM_SAMPLES)))
    trainer.train()
    sampler = find_rebalance_sampler(trainer.callback_handler.train_dataloader)
    write_json(os.path.join(out, f"result-rank{trainer.args.process_index}.json"),
               {"sync": sampler.sync, "saved_sync": sampler.state_dict()["options"]["sync"],
                "dp_size": sampler.dp_size, "fingerprint": sampler.fingerprint,
                "distributed_type": trainer.accelerator.distributed_type.value,
                "trained": trainer.index_log, "log": records.messages})


if __name__ == "__main__":
    with closing_process_group():
        main()
