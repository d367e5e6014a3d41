"""PadToPlan: a collate_fn whose tensors have the plan's shape, not the longest sample's.

A padding collator (transformers' DataCollatorWithPadding, DataCollatorForLanguageModeling, ...)
pads a micro-batch to its longest sample, rounded to pad_to_multiple_of. The plan prices it at
its padded length: rounded to the length buckets too and, with max_shapes, to a length of the
shape vocabulary. PadToPlan runs the collator, then pads its 2-D tensors on to that length.

It learns the length from the samples it is given: the plan's padded length is a function of
the micro-batch's size and its longest sample (brs/_padding.py), which the collated width
gives. So it needs no message from the batch sampler, and works the same in the main process and
in DataLoader workers (it carries the small rule, not the sampler, into them).
"""

from collections.abc import Mapping

# Pad values by key; any other 2-D tensor of the micro-batch's width is padded with 0.
_PAD_VALUES = {"attention_mask": 0, "labels": -100, "position_ids": 0, "token_type_ids": 0}
# Where a collator keeps the one it wraps (transformers' RemoveColumnsCollator, partial, ours).
_WRAPPERS = ("data_collator", "func", "collate_fn")


def _inner(collator):
    """The collator and each one it wraps, outermost first."""
    seen = set()
    while collator is not None and id(collator) not in seen:
        seen.add(id(collator))
        yield collator
        collator = next((getattr(collator, name) for name in _WRAPPERS
                         if getattr(collator, name, None) is not None), None)


def _tokenizer_value(collator, name):
    for layer in _inner(collator):
        for owner in (getattr(layer, "tokenizer", None), getattr(layer, "processing_class", None),
                      layer):
            value = getattr(owner, name, None) if owner is not None else None
            if value is not None and not callable(value):
                return value
    return None


class PadToPlan:
    """``PadToPlan(collate_fn, sampler)``: a collate_fn for a DataLoader over ``sampler``.

        loader = DataLoader(dataset, batch_sampler=sampler,
                            collate_fn=brs.PadToPlan(collator, sampler))

    Each batch is ``collate_fn(samples)`` with its 2-D tensors of the micro-batch's width
    (``input_ids``'s) padded to the plan's padded length for a micro-batch of this size and
    longest sample (``sampler.padded_length``, equal to ``MicroBatch.padded_length``):
    ``input_ids`` with ``pad_token_id``, ``attention_mask`` with 0, ``labels`` with -100,
    ``position_ids`` and ``token_type_ids`` with 0, any other such tensor with 0. The side is
    ``padding_side``. Defaults: the collator's tokenizer's pad_token_id (else 0) and
    padding_side (else "right"). A batch that is one tensor is padded as input_ids.

    Build it once the sampler's options are final (after fill_unset); it keeps the sampler's
    padding rule (pad_to_multiple_of, length_buckets, shape vocabulary) from then on, also in
    DataLoader workers. Raises ValueError for a micro-batch no planned shape holds (samples
    longer than the lengths the sampler was given).

    Packed mode (``packed=True``, a flattening collator such as transformers'
    DataCollatorWithFlattening): the one row of ``(1, total)`` is padded on the right to the
    plan's padded total (a vocabulary row with max_shapes). ``position_ids`` are padded with 0,
    so that varlen attention sees each padding token as a sequence of its own (what the plan
    prices), and flash-attention's ``cu_seq_lens_q``/``cu_seq_lens_k``, where the collator gives
    them, gain one boundary per padding token.
    """

    def __init__(self, collate_fn, sampler, *, pad_token_id=None, padding_side=None):
        if not callable(collate_fn):
            raise TypeError(f"collate_fn must be callable; got {type(collate_fn).__name__}")
        if padding_side not in (None, "right", "left"):
            raise ValueError(f'padding_side must be "right" or "left"; got {padding_side!r}')
        self.collate_fn = collate_fn
        self.rule = sampler.padding_rule()
        if self.rule.packed:
            padding_side = "right"  # a packed row grows at its end
        if pad_token_id is None:
            pad_token_id = _tokenizer_value(collate_fn, "pad_token_id")
        self.pad_token_id = 0 if pad_token_id is None else int(pad_token_id)
        if padding_side is None:
            padding_side = _tokenizer_value(collate_fn, "padding_side")
        self.padding_side = padding_side if padding_side in ("right", "left") else "right"

    def __call__(self, samples):
        batch = self.collate_fn(samples)
        return self.pad(batch, len(samples))

    def pad(self, batch, batch_size=None):
        """``batch`` (a collated mapping, or one tensor) with its rows padded to the plan's
        length for ``batch_size`` samples (default: the rows of its input_ids)."""
        import torch

        if isinstance(batch, torch.Tensor):
            return self._padded(batch, self._length(batch, batch_size), self.pad_token_id)
        if not isinstance(batch, Mapping):
            raise TypeError("PadToPlan pads a collated mapping (input_ids, attention_mask, "
                            f"labels, ...) or one tensor; the collate_fn gave "
                            f"{type(batch).__name__}")
        ids = batch.get("input_ids")
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2:
            raise ValueError("PadToPlan needs the collated input_ids as a 2-D tensor (batch, "
                             "length); got " + (type(ids).__name__ if not isinstance(
                                 ids, torch.Tensor) else f"a {ids.dim()}-D tensor"))
        if self.rule.packed and ids.shape[0] != 1:
            raise ValueError(f"PadToPlan in packed mode pads one row a micro-batch; the collator "
                             f"gave {ids.shape[0]} rows: use a flattening collator (e.g. "
                             "transformers' DataCollatorWithFlattening)")
        width = ids.shape[1]
        length = self._length(ids, batch_size)
        if length == width:
            return batch
        for key in list(batch.keys()):
            value = batch[key]
            if (isinstance(value, torch.Tensor) and value.dim() == 2
                    and value.shape == ids.shape):
                fill = self.pad_token_id if key == "input_ids" else _PAD_VALUES.get(key, 0)
                batch[key] = self._padded(value, length, fill)
        if self.rule.packed:
            _one_sequence_per_padding_token(batch, width, length)
        return batch

    def _length(self, ids, batch_size):
        rows = ids.shape[0] if batch_size is None else batch_size
        return self.rule.padded_length(rows, ids.shape[1])

    def _padded(self, tensor, length, fill):
        import torch

        extra = length - tensor.shape[1]
        if extra <= 0:
            return tensor
        pad = torch.full((tensor.shape[0], extra), fill, dtype=tensor.dtype, device=tensor.device)
        parts = (tensor, pad) if self.padding_side == "right" else (pad, tensor)
        return torch.cat(parts, dim=1)

    def __repr__(self):
        return f"PadToPlan({self.collate_fn!r}, {self.rule!r})"


def _one_sequence_per_padding_token(batch, width, length):
    """A packed row padded from ``width`` to ``length`` tokens: flash-attention's sequence
    boundaries gain one per padding token, as its 0 position ids say."""
    import torch

    for key in ("cu_seq_lens_q", "cu_seq_lens_k"):
        bounds = batch.get(key)
        if isinstance(bounds, torch.Tensor) and bounds.dim() == 1:
            extra = torch.arange(width + 1, length + 1, dtype=bounds.dtype, device=bounds.device)
            batch[key] = torch.cat((bounds, extra))
