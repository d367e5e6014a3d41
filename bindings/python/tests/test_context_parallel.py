"""Context parallelism through brs.BatchRebalanceSampler(..., dp_size=D, cp_size=C,
max_tokens_per_rank=T, packed=True): plan(step).micro_batches[r][m] for every global rank
r = dp index x C + cp index; groups aligned within a block; the same indices on every rank of a
group; token ranges covering each sample once; nothing above T; the step's samples those of the
sampler without cp_size; iteration yields each rank's micro-batches with the same fields."""

import collections
import random

import pytest

import brs

D, C, G, T = 2, 4, 3, 4096


def long_tail(n=480, seed=3):
    rng = random.Random(seed)
    return [min(16384, max(1, int(rng.lognormvariate(7.0, 1.2)))) for _ in range(n)]


def sampler(lengths, rank=0, **options):
    kwargs = dict(per_device_batch_size=4, grad_accum=G, dp_size=D, cp_size=C,
                  max_tokens_per_rank=T, packed=True, rank=rank, seed=11)
    kwargs.update(options)
    return brs.BatchRebalanceSampler(lengths, **kwargs)


def test_plan_gives_every_global_rank_its_group_and_ranges():
    lengths = long_tail()
    s = sampler(lengths)
    plain = brs.BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=G, dp_size=D,
                                      packed=True, rank=0, seed=11)
    seen = collections.Counter()
    for step in range(s.steps_per_epoch):
        plan = s.plan(step)
        assert len(plan.micro_batches) == D * C
        assert {len(rank) for rank in plan.micro_batches} == {G}
        covered = collections.Counter()
        step_samples = []
        for r in range(D * C):
            for m, mb in enumerate(plan.micro_batches[r]):
                ranks = mb.cp_ranks
                c = len(ranks)
                assert r in ranks and c & (c - 1) == 0 and c <= C
                assert ranks[0] % c == 0 and ranks == tuple(range(ranks[0], ranks[0] + c))
                assert ranks[0] // C == ranks[-1] // C
                for other in ranks:
                    assert plan.micro_batches[other][m].indices == mb.indices
                    assert plan.micro_batches[other][m].cp_ranks == ranks
                if not mb.indices:
                    assert ranks == (r,) and mb.real_tokens == 0 and mb.token_ranges == []
                assert mb.padded_tokens <= T
                assert sum(end - start for _, start, end in mb.token_ranges) == mb.real_tokens
                for index, start, end in mb.token_ranges:
                    assert index in mb.indices and 0 <= start < end <= lengths[index]
                    covered[index] += end - start
                if r == ranks[0]:
                    step_samples += mb.indices
        assert all(covered[i] == lengths[i] for i in step_samples)
        without = [i for rank in plain.plan(step).micro_batches for mb in rank for i in mb.indices]
        assert sorted(step_samples) == sorted(without)
        seen.update(step_samples)
    assert max(seen.values()) == 1


def test_iterating_rank_r_yields_its_micro_batches():
    lengths = long_tail()
    for rank in (0, 5, 7):
        s = sampler(lengths, rank=rank)
        assert s.rank == rank and s.dp_size == D and len(s) == s.steps_per_epoch * G
        batches = list(s)
        assert len(batches) == len(s)
        for k, batch in enumerate(batches[:2 * G]):
            mb = s.plan(k // G).micro_batches[rank][k % G]
            assert list(batch) == mb.indices == batch.indices
            assert batch.cp_ranks == mb.cp_ranks and batch.token_ranges == mb.token_ranges
            assert batch.padded_tokens == mb.padded_tokens
            assert batch.real_tokens == mb.real_tokens


def test_deterministic_and_fingerprinted():
    lengths = long_tail()
    a, b = sampler(lengths), sampler(lengths)
    assert a.plan(1) == b.plan(1)
    assert a.fingerprint != sampler(lengths, cp_size=2, max_tokens_per_rank=8192).fingerprint
    assert a.stream_fingerprint == sampler(lengths, cp_size=2, max_tokens_per_rank=8192).stream_fingerprint


def test_a_sample_too_long_for_the_widest_group_is_refused():
    lengths = long_tail()
    with pytest.raises(ValueError, match="max_tokens_per_rank"):
        sampler(lengths, max_tokens_per_rank=1000)


def test_the_shards_a_plan_builds_hold_at_most_the_cap():
    torch = pytest.importorskip("torch")
    from brs.integrations import context_parallel as cp

    lengths = long_tail()
    s = sampler(lengths)
    cap = s.max_tokens_per_rank
    for step in range(3):
        for rank in s.plan(step).micro_batches:
            for mb in rank:
                shard = cp.shard(mb, lambda i: torch.zeros(lengths[i], dtype=torch.long))
                assert int(shard.valid.sum()) == sum(e - s for _, s, e in mb.token_ranges)
                assert len(shard.input_ids) <= cap


def test_a_shard_fuller_than_its_padding_is_refused():
    torch = pytest.importorskip("torch")
    from brs.integrations import context_parallel as cp

    class Overfull:
        cp_ranks, padded_tokens, token_ranges = (0,), 8, [(0, 0, 10)]

    with pytest.raises(ValueError, match="more than the 8"):
        cp.shard(Overfull(), lambda i: torch.zeros(10, dtype=torch.long))


def test_a_cost_model_file_carries_the_cp_terms_to_the_sampler(tmp_path):
    path = tmp_path / "cost.json"
    brs.CostModel(0.001, 0.0, cp_comm_cost=0.25, cp_latency=40.0).save(path)
    loaded = brs.CostModel.load(path)
    assert (loaded.cp_comm_cost, loaded.cp_latency) == (0.25, 40.0)
    s = sampler(long_tail(), cost_model=path)
    assert (s.cp_comm_cost, s.cp_latency) == (0.25, 40.0)
    assert sampler(long_tail(), cost_model=path, cp_latency=7.0).cp_latency == 7.0
    # options away from their defaults enter the fingerprint
    assert s.fingerprint != sampler(long_tail()).fingerprint


def test_the_default_latency_keeps_short_samples_whole():
    lengths = [2048] * 4 + [32768] * 4
    s = brs.BatchRebalanceSampler(lengths, per_device_batch_size=1, grad_accum=4, dp_size=1,
                                  cp_size=8, max_tokens_per_rank=32768, packed=True, rank=0,
                                  shuffle=False)
    for mb in (mb for r in s.plan(0).micro_batches for mb in r if mb.indices):
        assert (len(mb.cp_ranks) > 1) == (lengths[mb.indices[0]] == 32768)
