"""The micro-batches calibrate times, built the way training builds them.

A timed batch of shape (bs, L) holds exactly bs rows: one of length L and bs-1 whose lengths
are drawn from the dataset's lengths up to L, so its padding (and the attention mask's zeros)
is that of a training batch, not a full rectangle. Rows are what a tokenized dataset yields,
``{"input_ids": [ids of the drawn length]}``; the user's ``collate_fn(rows)`` turns them into
the batch, else ``default_collate`` (padded to the longest, attention_mask, labels -100 on
padding). The batch runs through the user's ``forward(model, batch) -> loss``, else
``model(**batch)`` and its ``.loss``. Every batch is built once, before anything is timed:
collation is the data loader's work, not the training step's.
"""

from collections.abc import Mapping

#: labels of padding positions: the value torch's cross-entropy ignores.
IGNORE_INDEX = -100


class Batches:
    """shape -> the collated batch on the device, built once, the same on every call."""

    def __init__(self, data, vocab, pad_id, collate_fn, device, torch):
        import numpy as np

        self._sorted = np.sort(np.asarray(data))
        self._vocab, self._pad_id = max(int(vocab), 1), int(pad_id)
        self._collate = collate_fn
        self._device, self._torch = device, torch
        self._built = {}

    def __call__(self, shape):
        if shape not in self._built:
            self._built[shape] = self._build(*shape)
        return self._built[shape]

    #: What to pass instead when a shape runs out of memory.
    remedy = "smaller batch_sizes or seq_lens (or a smaller model)"

    @staticmethod
    def describe(shape):
        return f"batch size {shape[0]} x length {shape[1]}"

    def row_keys(self, shape):
        """The shape's keys in its timings row: a collator that rounds L up trains (and so is
        fitted at) the rounded length, with the grid's in grid_length."""
        collated = self.collated_length(shape)
        keys = {"batch_size": shape[0], "length": collated}
        if collated != shape[1]:
            keys["grid_length"] = shape[1]
        return keys

    def collated_length(self, shape):
        """The padded length of the batch as collated (a collator may round L up): its
        input_ids', else its first bs x n tensor's; L when it has neither."""
        batch = self(shape)
        values = list(batch.values()) if isinstance(batch, Mapping) else [batch]
        if isinstance(batch, Mapping) and "input_ids" in batch:
            values.insert(0, batch["input_ids"])
        for value in values:
            if getattr(value, "ndim", 0) == 2 and int(value.shape[0]) == shape[0]:
                return int(value.shape[1])
        return shape[1]

    def _build(self, bs, length):
        import numpy as np

        rng = np.random.default_rng([bs, length])  # a shape's batch is the same in every run
        lengths = [length] + [int(x) for x in self._drawn(bs - 1, length, rng)]
        rows = [{"input_ids": rng.integers(0, self._vocab, n).tolist()} for n in lengths]
        if self._collate is None:
            batch = default_collate(rows, self._pad_id, self._torch)
        else:
            batch = self._collate(rows)
        return to_device(batch, self._device)

    def _drawn(self, count, length, rng):
        """count lengths drawn (with replacement) from the dataset's lengths <= length."""
        import numpy as np

        fitting = self._sorted[:np.searchsorted(self._sorted, length, side="right")]
        if count <= 0 or fitting.size == 0:
            return [length] * max(count, 0)
        return rng.choice(fitting, size=count)


def default_collate(rows, pad_id, torch):
    """Rows padded on the right to the longest: input_ids, attention_mask (1 on tokens, 0 on
    padding) and labels (the ids, IGNORE_INDEX on padding), as transformers' padding collators
    build a causal-LM batch."""
    longest = max(len(r["input_ids"]) for r in rows)
    ids = torch.full((len(rows), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), longest), dtype=torch.long)
    for i, row in enumerate(rows):
        n = len(row["input_ids"])
        ids[i, :n] = torch.tensor(row["input_ids"], dtype=torch.long)
        mask[i, :n] = 1
    labels = ids.masked_fill(mask == 0, IGNORE_INDEX)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def to_device(batch, device):
    """The batch (a tensor, or a mapping of tensors) on ``device``."""
    if hasattr(batch, "to") and not isinstance(batch, Mapping):
        return batch.to(device)
    if isinstance(batch, Mapping):
        return {k: v.to(device) if hasattr(v, "to") else v for k, v in batch.items()}
    return batch


def default_forward(model, batch):
    """model(**batch)'s loss: a tensor output, or an output's ``.loss``."""
    if not isinstance(batch, Mapping):
        raise TypeError(f"calibrate: the collated batch is a {type(batch).__name__}, not a dict "
                        "of model inputs; pass forward=(model, batch) -> loss to run it")
    try:
        return model(**batch)
    except TypeError as exc:
        if "unexpected keyword" not in str(exc):
            raise
        raise TypeError(f"calibrate: the model does not take the batch's keys "
                        f"{sorted(batch)} ({exc}); pass collate_fn= building the inputs it takes, "
                        "or forward=(model, batch) -> loss") from None


def loss_of(output, torch):
    """The loss tensor of a forward's output (a tensor, or an object with .loss)."""
    loss = output if isinstance(output, torch.Tensor) else getattr(output, "loss", None)
    if loss is None:
        raise TypeError("calibrate: the model's output has no .loss and is not a tensor; it "
                        "must compute a loss from the batch's labels (or pass forward= "
                        "returning the loss)")
    return loss


def pad_id_of(module):
    """The model's padding id, else 0: padding's value never reaches the loss."""
    pad = getattr(getattr(module, "config", None), "pad_token_id", None)
    return pad if isinstance(pad, int) and pad >= 0 else 0
