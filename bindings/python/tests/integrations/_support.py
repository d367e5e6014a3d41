"""Shared by the integration tests and by the scripts they launch under torchrun.

Synthetic token datasets whose lengths are real ones (data/gsm8k_train.lengths) scaled down so
that a one-layer GPT-2 trains on them in seconds; a padding collator that also carries each
row's dataset index, so that a test sees exactly which samples every micro-batch trained.
"""

import json
import os
import pathlib

import numpy as np
import torch

import brs_testing

REPO = pathlib.Path(__file__).resolve().parents[4]
VOCAB = 96
PAD = 0
SCALE = 4  # gsm8k lengths are 32..423 tokens; /4 keeps the model's context small


def scaled_lengths(count, start=0):
    """``count`` gsm8k lengths from line ``start``, divided by SCALE (at least 2 tokens)."""
    lengths = np.loadtxt(REPO / "data" / "gsm8k_train.lengths", dtype=np.int64)
    if start + count > len(lengths):
        raise ValueError(f"gsm8k_train.lengths has {len(lengths)} lines")
    return np.maximum(lengths[start:start + count] // SCALE, 2)


def tokens(index, length):
    """Deterministic token ids of sample ``index`` (never the padding id)."""
    return [1 + (index * 7 + position * 3) % (VOCAB - 1) for position in range(length)]


class TokenDataset(torch.utils.data.Dataset):
    """Rows {"input_ids": [...], "sample_idx": i}; counts row reads (to detect length scans)."""

    def __init__(self, lengths):
        self.lengths = [int(length) for length in lengths]
        self.row_reads = 0

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, index):
        self.row_reads += 1
        return {"input_ids": tokens(index, self.lengths[index]), "sample_idx": index}


class ColumnTokenDataset(TokenDataset):
    """A TokenDataset that also offers a precomputed "length" column, the datasets way."""

    column_names = ["input_ids", "sample_idx", "length"]

    def __getitem__(self, key):
        if key == "length":
            return list(self.lengths)
        return super().__getitem__(key)


def pad_collate(rows):
    """Right-pads input_ids; labels are -100 on padding; keeps sample_idx for the logs."""
    width = max(len(row["input_ids"]) for row in rows)
    ids = torch.full((len(rows), width), PAD, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, :len(row["input_ids"])] = torch.tensor(row["input_ids"])
        mask[i, :len(row["input_ids"])] = 1
    batch = {"input_ids": ids, "attention_mask": mask, "labels": ids.masked_fill(mask == 0, -100)}
    if "sample_idx" in rows[0]:
        batch["sample_idx"] = torch.tensor([row["sample_idx"] for row in rows])
    return batch


def tiny_gpt2(seed=0):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    # No dropout: a resumed run must be able to reproduce the uninterrupted one bit for bit.
    config = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=VOCAB, n_positions=128,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1)
    return GPT2LMHeadModel(config)


class IndexLogMixin:
    """Records, per micro-batch trained, the optimizer step it belongs to and its indices."""

    def training_step(self, model, inputs, num_items_in_batch=None):
        indices = inputs.pop("sample_idx").tolist()
        self.index_log.append({"step": self.state.global_step, "indices": indices})
        return super().training_step(model, inputs, num_items_in_batch)

    @property
    def index_log(self):
        if "_index_log" not in self.__dict__:
            self._index_log = []
        return self._index_log


def write_json(path, value):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as handle:
        json.dump(value, handle)
    os.replace(tmp, path)


def read_json(path):
    with open(path) as handle:
        return json.load(handle)


GROUP_TIMEOUT_S = brs_testing.GROUP_TIMEOUT_S  # the Trainer's ddp_timeout, accelerate's timeout
closing_process_group = brs_testing.closing_process_group  # what every torchrun script exits by

