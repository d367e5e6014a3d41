"""The padded length a plan gives a micro-batch, as a small picklable rule.

The library pads a micro-batch of b samples whose longest has l tokens to l rounded up to
pad_to_multiple_of, then to the smallest length bucket that holds it, and, with max_shapes, to
the shortest vocabulary length of batch size b that holds that (libbrs/planner/padding.c;
docs/algorithm.md, "Shape vocabulary"). The rule depends on (b, l) alone, so a collator running in a DataLoader
worker, which sees the samples but not the plan, finds the plan's length from them. In packed mode
a micro-batch is one row: l is the row's total and the shape is (1, padded total).
"""

import bisect


class PaddingRule:
    """``padded_length(batch_size, longest)`` of one sampler's configuration (picklable)."""

    __slots__ = ("multiple", "buckets", "vocabulary", "packed")

    def __init__(self, multiple, buckets, vocabulary, packed=False):
        self.packed = bool(packed)  # one row a micro-batch: its batch size is 1
        self.multiple = max(1, int(multiple or 1))
        self.buckets = tuple(int(b) for b in buckets or ())
        # batch size -> its vocabulary lengths, increasing; None: any shape
        table = None
        if vocabulary is not None:
            table = {}
            for size, length in vocabulary:
                table.setdefault(int(size), []).append(int(length))
            table = {size: tuple(sorted(lengths)) for size, lengths in table.items()}
        self.vocabulary = table

    def __getstate__(self):
        return (self.multiple, self.buckets, self.vocabulary, self.packed)

    def __setstate__(self, state):
        self.multiple, self.buckets, self.vocabulary, self.packed = state

    def padded_length(self, batch_size, longest):
        if longest < 0 or batch_size < 1:
            raise ValueError(f"padded_length needs batch_size >= 1 and longest >= 0; got "
                             f"batch_size={batch_size}, longest={longest}")
        length = -(-int(longest) // self.multiple) * self.multiple
        if self.buckets:
            at = bisect.bisect_left(self.buckets, length)
            if at == len(self.buckets):
                raise ValueError(f"no length bucket holds {longest} tokens (rounded: {length}); "
                                 f"the longest bucket is {self.buckets[-1]}")
            length = self.buckets[at]
        if self.vocabulary is None:
            return length
        if self.packed:
            batch_size = 1
        lengths = self.vocabulary.get(int(batch_size))
        if lengths is None:
            raise ValueError(f"the shape vocabulary has no micro-batch of {batch_size} samples "
                             f"(its batch sizes: {sorted(self.vocabulary)}): the samples are "
                             "not a micro-batch this sampler planned")
        at = bisect.bisect_left(lengths, length)
        if at == len(lengths):
            raise ValueError(f"no vocabulary shape of {batch_size} samples holds {longest} tokens "
                             f"(its longest is {lengths[-1]}): the samples are longer than the "
                             "lengths the sampler was given")
        return lengths[at]

    def __repr__(self):
        return (f"PaddingRule(multiple={self.multiple}, buckets={list(self.buckets)}, "
                f"vocabulary={self.vocabulary}, packed={self.packed})")
