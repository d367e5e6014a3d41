"""The Trainer with online calibration, one process or under torchrun (2 gloo ranks).

    [torchrun --nproc_per_node=2] run_online_calibration.py --out DIR [--every N]
        [--save-steps N] [--resume CHECKPOINT]

Micro-batches are timed by the real clock, but the seconds fitted are a known function of the
shape (SECONDS, different on each rank), so the fit and the switch are exact and testable.
Writes DIR/result-rank<r>.json: the micro-batches trained ({"step", "indices"}), the
brs/calibration_* log entries, the sampler's cost model, its cost switch and fingerprint.
"""

import argparse
import os

from transformers import TrainingArguments

from _support import (GROUP_TIMEOUT_S, IndexLogMixin, TokenDataset, closing_process_group,
                      pad_collate, scaled_lengths, tiny_gpt2, write_json)
from brs.calibration import online
from brs.integrations.accelerate import find_rebalance_sampler
from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions

NUM_SAMPLES = 64
PER_DEVICE = 4
GRAD_ACCUM = 2
EPOCHS = 2
# seconds = C0 + C1*bs*L + C2*bs*L^2 on rank 0; rank r has the intercept C0 * (1 + r), so
# that a fit of one rank's timings alone differs from the fit of all ranks' together.
C0, C1, C2 = 2e-4, 1e-6, 5e-7


def seconds(rank, batch_size, length):
    return C0 * (1 + rank) + C1 * batch_size * length + C2 * batch_size * length ** 2


class Trainer(IndexLogMixin, BatchRebalanceTrainer):
    pass


def synthetic_clock(rank):
    add = online.Statistics.add

    def timed(self, batch_size, length, real_tokens, measured):
        assert measured > 0  # the real clock ran
        return add(self, batch_size, length, real_tokens, seconds(rank, batch_size, length))

    def first_run(self, batch_size, length, measured):
        # SECONDS has no first-run price, so a shape's first run is fitted like the others:
        # the 16 micro-batches of epoch 0 are then enough for the fit
        return timed(self, batch_size, length, batch_size * length, measured)

    online.Statistics.add = timed
    online.Statistics.add_first = first_run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--every", type=int)
    parser.add_argument("--save-steps", type=int)
    parser.add_argument("--resume")
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    synthetic_clock(int(os.environ.get("RANK", "0")))
    args = TrainingArguments(
        output_dir=os.path.join(options.out, "checkpoints"),
        per_device_train_batch_size=PER_DEVICE, gradient_accumulation_steps=GRAD_ACCUM,
        num_train_epochs=EPOCHS, learning_rate=1e-3,
        save_strategy="steps" if options.save_steps else "no", save_steps=options.save_steps,
        logging_steps=1000, report_to="none", use_cpu=True,
        # Under torchrun only: in one process accelerate would look for a group to join.
        ddp_backend="gloo" if "RANK" in os.environ else None,
        ddp_find_unused_parameters=False, ddp_timeout=GROUP_TIMEOUT_S, seed=7,
        dataloader_drop_last=False, remove_unused_columns=False, disable_tqdm=True)
    trainer = Trainer(model=tiny_gpt2(), args=args, data_collator=pad_collate,
                      train_dataset=TokenDataset(scaled_lengths(NUM_SAMPLES)),
                      rebalance_options=RebalanceOptions(calibrate_online=True,
                                                         recalibrate_every=options.every))
    trainer.train(resume_from_checkpoint=options.resume)
    sampler = find_rebalance_sampler(trainer.callback_handler.train_dataloader)
    state = sampler.state_dict()
    write_json(os.path.join(options.out, f"result-rank{trainer.args.process_index}.json"),
               {"trained": trainer.index_log, "cost_model": state["cost_model"],
                "cost_switch": state["cost_switch"], "fingerprint": state["fingerprint"],
                "steps_per_epoch": sampler.steps_per_epoch, "dp_size": sampler.dp_size,
                "calibrations": [entry for entry in trainer.state.log_history
                                 if "brs/calibration_alpha" in entry]})


if __name__ == "__main__":
    with closing_process_group():
        main()
