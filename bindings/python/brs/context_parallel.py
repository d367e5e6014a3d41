"""A reference context-parallel attention for brs plans, for users without a CP implementation.

A context-parallel plan (BatchRebalanceSampler(..., cp_size=C, packed=True)) gives global rank r,
at each micro-step, a micro-batch ``mb`` with ``mb.cp_ranks`` (the group sharing it) and
``mb.token_ranges`` (the (index, start, end) slices of its samples rank r computes). This module
turns that into tensors and runs causal attention across the group by all-gathering keys and
values within it (exact, simple, not fast: a ring or Megatron's/torchtitan's CP attention is the
production path, docs/python.md "Context parallelism"):

    groups = brs.distributed.cp_process_groups(C)           # once, on every rank
    shard = context_parallel.shard(mb, tokens_of)          # input ids, positions, sequence ids
    out = context_parallel.attention(q, k, v, shard, groups)

``TinyDecoder`` is a one-layer causal decoder built on it (the one the 4-process test trains).
"""

import math

import torch
import torch.distributed as dist


class Shard:
    """Rank r's tensors of one micro-batch, padded to ``mb.padded_tokens`` (the same length on
    every rank of the group, so an all-gather needs no sizes): ``input_ids``, ``targets`` (the
    next token within its sequence, -100 where there is none or on padding), ``positions`` (in
    the sequence), ``sequence_ids`` (the dataset index; -1 on padding), ``valid``."""

    def __init__(self, input_ids, targets, positions, sequence_ids, cp_ranks):
        self.input_ids, self.targets, self.positions = input_ids, targets, positions
        self.sequence_ids, self.cp_ranks = sequence_ids, tuple(cp_ranks)
        self.valid = sequence_ids >= 0


def shard(mb, tokens_of, length=None):
    """The Shard of micro-batch ``mb`` (a brs.MicroBatch or a batch the sampler yields) on this
    rank; ``tokens_of(index)`` gives sample ``index``'s token ids (a 1-D tensor or list). Padded
    to ``length`` (default mb.padded_tokens); ranges holding more tokens than that are refused
    (the shard would break the per-rank cap the plan's padded_tokens promises)."""
    length = mb.padded_tokens if length is None else length
    ids, targets, positions, sequences = [], [], [], []
    for index, start, end in mb.token_ranges:
        tokens = torch.as_tensor(tokens_of(index), dtype=torch.long)
        ids.append(tokens[start:end])
        nxt = torch.full((end - start,), -100, dtype=torch.long)
        last = min(end, len(tokens) - 1)
        if last > start:
            nxt[:last - start] = tokens[start + 1:last + 1]
        targets.append(nxt)
        positions.append(torch.arange(start, end))
        sequences.append(torch.full((end - start,), index, dtype=torch.long))
    used = sum(len(x) for x in ids)
    if used > length:
        raise ValueError(f"this rank's token ranges hold {used} tokens, more than the "
                         f"{length} its micro-batch is padded to")
    pad = length - used
    ids.append(torch.zeros(pad, dtype=torch.long))
    targets.append(torch.full((pad,), -100, dtype=torch.long))
    positions.append(torch.zeros(pad, dtype=torch.long))
    sequences.append(torch.full((pad,), -1, dtype=torch.long))
    return Shard(torch.cat(ids), torch.cat(targets), torch.cat(positions), torch.cat(sequences),
                 mb.cp_ranks)


class _GatherInGroup(torch.autograd.Function):
    """all_gather along dim 0 within a group; backward sums the gradient over the group and
    keeps this rank's slice (gloo has all_reduce, not reduce_scatter for autograd)."""

    @staticmethod
    def forward(ctx, x, group, position, size):
        ctx.group, ctx.position, ctx.rows = group, position, x.shape[0]
        parts = [torch.empty_like(x) for _ in range(size)]
        dist.all_gather(parts, x.contiguous(), group=group)
        return torch.cat(parts, dim=0)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous().clone()
        dist.all_reduce(grad, group=ctx.group)
        start = ctx.position * ctx.rows
        return grad[start:start + ctx.rows], None, None, None


def gather(x, cp_ranks, groups, differentiable=True):
    """``x`` of every rank of the group, concatenated in rank order (x alone at degree 1)."""
    if len(cp_ranks) == 1:
        return x
    group = groups[tuple(cp_ranks)]
    position = list(cp_ranks).index(dist.get_rank())
    if differentiable:
        return _GatherInGroup.apply(x, group, position, len(cp_ranks))
    parts = [torch.empty_like(x) for _ in cp_ranks]
    dist.all_gather(parts, x.contiguous(), group=group)
    return torch.cat(parts, dim=0)


def attention(q, k, v, shard, groups):
    """Causal attention of this rank's queries over the keys and values of the whole group,
    within each sequence: query (s, p) sees key (s, p') for p' <= p. q, k, v: (tokens, dim)."""
    keys, values = gather(k, shard.cp_ranks, groups), gather(v, shard.cp_ranks, groups)
    key_pos = gather(shard.positions, shard.cp_ranks, groups, differentiable=False)
    key_seq = gather(shard.sequence_ids, shard.cp_ranks, groups, differentiable=False)
    mask = ((shard.sequence_ids[:, None] == key_seq[None, :]) & (key_seq[None, :] >= 0)
            & (key_pos[None, :] <= shard.positions[:, None]))
    scores = q @ keys.T / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, -1e30)  # a padding query sees nothing; its loss is 0
    return torch.softmax(scores, dim=-1) @ values


class TinyDecoder(torch.nn.Module):
    """Embeddings, one causal attention layer run across the plan's CP group, an MLP and a
    head: small enough for CPU tests, exact enough to compare with a single process."""

    def __init__(self, vocab=64, dim=16, max_len=4096):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.position = torch.nn.Embedding(max_len, dim)
        self.q = torch.nn.Linear(dim, dim)
        self.k = torch.nn.Linear(dim, dim)
        self.v = torch.nn.Linear(dim, dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 2 * dim), torch.nn.Tanh(),
                                       torch.nn.Linear(2 * dim, dim))
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, shard, groups):
        x = self.embed(shard.input_ids) + self.position(shard.positions)
        x = x + attention(self.q(x), self.k(x), self.v(x), shard, groups)
        x = x + self.mlp(x)
        return self.head(x)

    def loss_sum(self, shard, groups):
        """The summed next-token cross entropy of this rank's tokens (divide by the step's
        global count of targets)."""
        logits = self(shard, groups)
        return torch.nn.functional.cross_entropy(logits, shard.targets, ignore_index=-100,
                                                 reduction="sum")
