"""A token dataset and a dynamic-padding collate function, for the DataLoader tests and scripts.

Module level (not inside a test) so that DataLoader workers can unpickle them.
"""

import torch

VOCAB = 50


class TokenDataset(torch.utils.data.Dataset):
    """Sample i is ``lengths[i]`` token ids that depend only on (i, position)."""

    def __init__(self, lengths):
        self.lengths = list(lengths)

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        ids = (torch.arange(self.lengths[i]) * 7 + i * 13) % (VOCAB - 1) + 1  # 0 is padding
        return {"index": i, "input_ids": ids}


def pad_collate(samples):
    """Pads to the longest sample of THIS micro-batch (dynamic padding), with a mask."""
    longest = max(len(s["input_ids"]) for s in samples)
    ids = torch.zeros(len(samples), longest, dtype=torch.long)
    mask = torch.zeros(len(samples), longest, dtype=torch.bool)
    for row, s in enumerate(samples):
        ids[row, :len(s["input_ids"])] = s["input_ids"]
        mask[row, :len(s["input_ids"])] = True
    return {"index": torch.tensor([s["index"] for s in samples]), "input_ids": ids,
            "attention_mask": mask}
