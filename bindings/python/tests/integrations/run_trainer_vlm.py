"""Trains the tiny Qwen2-VL with BatchRebalanceTrainer under torchrun and logs what every rank
trained, images included.

    torchrun --nproc_per_node=2 run_trainer_vlm.py --out DIR [--resume CHECKPOINT]

Writes DIR/log-rank<r>.json (one {"step", "indices", "patches", "images"} per micro-batch
trained, in order, read off the tensors the model got), DIR/result-rank<r>.json (global step,
the sampler's image cap and whether it holds the images) and, from rank 0, DIR/weights.pt.
Settings are fixed here so that every run of a test compares like with like.
"""

import argparse
import os

import torch
from transformers import TrainingArguments

from _support import GROUP_TIMEOUT_S, closing_process_group, write_json
from _vlm_support import tiny_qwen2_vl, vlm_collate, vlm_dataset
from brs.integrations.accelerate import find_rebalance_sampler
from brs.integrations.transformers import BatchRebalanceTrainer, RebalanceOptions

NUM_SAMPLES = 48
PER_DEVICE = 2
GRAD_ACCUM = 2
EPOCHS = 2
SAVE_STEPS = 8  # 6 steps per epoch: checkpoint-8 lies inside epoch 1
MAX_ENCODER_TOKENS = 160  # above the largest sample's 144 patches, below what text-only plans
# Fixed numbers rather than the model's: the tests plan the same epochs without the Trainer.
OPTIONS = RebalanceOptions(alpha=0.001, intercept=0.0, encoder_alpha=0.002,
                           max_encoder_tokens=MAX_ENCODER_TOKENS)


class LoggingTrainer(BatchRebalanceTrainer):
    """Records, per micro-batch trained, its optimizer step, indices, patches and images."""

    def training_step(self, model, inputs, num_items_in_batch=None):
        grids = inputs.get("image_grid_thw")
        self.index_log.append({
            "step": self.state.global_step,
            "indices": inputs.pop("sample_idx").tolist(),
            "patches": 0 if grids is None else int(grids.prod(dim=-1).sum()),
            "images": 0 if grids is None else len(grids)})
        return super().training_step(model, inputs, num_items_in_batch)

    @property
    def index_log(self):
        if "_index_log" not in self.__dict__:
            self._index_log = []
        return self._index_log


def training_arguments(out, **overrides):
    settings = dict(
        output_dir=os.path.join(out, "checkpoints"), per_device_train_batch_size=PER_DEVICE,
        gradient_accumulation_steps=GRAD_ACCUM, num_train_epochs=EPOCHS, learning_rate=1e-3,
        save_strategy="steps", save_steps=SAVE_STEPS, logging_steps=1000, report_to="none",
        use_cpu=True, ddp_backend="gloo", seed=7, ddp_timeout=GROUP_TIMEOUT_S,
        # A micro-batch of captions leaves the vision tower without gradients.
        ddp_find_unused_parameters=True,
        dataloader_drop_last=False, remove_unused_columns=False, disable_tqdm=True)
    settings.update(overrides)
    return TrainingArguments(**settings)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--resume")
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)

    trainer = LoggingTrainer(model=tiny_qwen2_vl(), args=training_arguments(options.out),
                             train_dataset=vlm_dataset(NUM_SAMPLES), data_collator=vlm_collate,
                             rebalance_options=OPTIONS)
    trainer.train(resume_from_checkpoint=options.resume)

    rank = trainer.args.process_index
    sampler = find_rebalance_sampler(trainer.callback_handler.train_dataloader)
    write_json(os.path.join(options.out, f"log-rank{rank}.json"), trainer.index_log)
    write_json(os.path.join(options.out, f"result-rank{rank}.json"),
               {"global_step": trainer.state.global_step, "world_size": trainer.args.world_size,
                "max_encoder_tokens": sampler.max_encoder_tokens,
                "encoder_loads_given": sampler.was_given("encoder_loads")})
    if rank == 0:
        torch.save(trainer.model.state_dict(), os.path.join(options.out, "weights.pt"))


if __name__ == "__main__":
    with closing_process_group():
        main()
