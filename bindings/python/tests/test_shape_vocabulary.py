"""max_shapes: the run's shape vocabulary, MicroBatch.padded_length, and brs.PadToPlan, checked
on the tensors a real DataLoader builds (workers included) on every rank over two epochs, padded
and packed (transformers' flattening collator)."""

import pickle

import pytest

torch = pytest.importorskip("torch")

import brs  # noqa: E402
from brs import BatchRebalanceSampler, PadToPlan  # noqa: E402
from brs_data import TokenDataset, pad_collate  # noqa: E402
from brs_testing import random_lengths  # noqa: E402

LENGTHS = random_lengths(320, seed=5, low=4, high=300)
DP = 4


def _sampler(rank=0, **kw):
    kw = {"per_device_batch_size": 4, "grad_accum": 2, "dp_size": DP, "rank": rank, "seed": 7,
          "max_shapes": 8, **kw}
    return BatchRebalanceSampler(LENGTHS, **kw)


def _micro_batches(sampler, epoch):
    for step in range(sampler.steps_per_epoch):
        for micro in sampler.plan(step, epoch=epoch).micro_batches[sampler.rank]:
            yield micro


def test_max_shapes_is_a_keyword_read_back_and_kept_by_with_options():
    sampler = _sampler()
    assert sampler.max_shapes == 8 and sampler.was_given("max_shapes")
    assert BatchRebalanceSampler(LENGTHS, per_device_batch_size=4).max_shapes == 0
    assert sampler.with_options(max_shapes=4).max_shapes == 4
    assert pickle.loads(pickle.dumps(sampler)).shape_vocabulary() == sampler.shape_vocabulary()


def test_vocabulary_is_sorted_bounded_and_none_without_max_shapes():
    vocabulary = _sampler().shape_vocabulary()
    assert vocabulary == sorted(vocabulary) and len(set(vocabulary)) == len(vocabulary)
    assert 1 <= len(vocabulary) <= 8
    assert all(isinstance(size, int) and isinstance(length, int) for size, length in vocabulary)
    assert _sampler(max_shapes=None).shape_vocabulary() is None
    assert _sampler(max_shapes=0).shape_vocabulary() is None


def test_vocabulary_is_the_same_on_every_rank_and_rounded_like_the_collator():
    vocabularies = {tuple(_sampler(rank).shape_vocabulary()) for rank in range(DP)}
    assert len(vocabularies) == 1
    rounded = _sampler(pad_to_multiple_of=16).shape_vocabulary()
    assert all(length % 16 == 0 for _, length in rounded)


def test_every_micro_batch_of_every_rank_and_epoch_has_a_vocabulary_shape():
    vocabulary = set(_sampler().shape_vocabulary())
    for rank in range(DP):
        sampler = _sampler(rank)
        for epoch in range(2):
            assert set(sampler.shapes(epoch)) <= vocabulary, (rank, epoch)
            for mb in _micro_batches(sampler, epoch):
                assert mb.padded_tokens == mb.num_samples * mb.padded_length
                assert (mb.num_samples, mb.padded_length) in vocabulary
                longest = max(LENGTHS[i] for i in mb.indices)
                assert mb.padded_length >= longest
                assert sampler.padded_length(mb.num_samples, longest) == mb.padded_length


def test_max_shapes_search_moves_the_vocabulary_alike_on_every_rank():
    greedy = _sampler().shape_vocabulary()
    searched = [_sampler(rank, max_shapes_search=300) for rank in (0, DP - 1)]
    vocabulary = searched[0].shape_vocabulary()
    assert vocabulary != greedy and searched[1].shape_vocabulary() == vocabulary
    assert len(vocabulary) <= 8 and searched[0].max_shapes_search == 300
    for epoch in range(2):
        assert set(searched[0].shapes(epoch)) <= set(vocabulary)
    assert _sampler(max_shapes_search=0).shape_vocabulary() == greedy
    with pytest.raises(ValueError, match="max_shapes_search"):
        _sampler(max_shapes_search=-1)


def test_padded_length_is_the_rounded_one_without_max_shapes():
    sampler = _sampler(max_shapes=None, pad_to_multiple_of=8, length_buckets=[64, 128, 256, 304])
    for mb in _micro_batches(sampler, 0):
        longest = max(LENGTHS[i] for i in mb.indices)
        assert mb.padded_length in (64, 128, 256, 304) and mb.padded_length >= longest
        assert mb.padded_tokens == mb.num_samples * mb.padded_length
        assert sampler.padded_length(mb.num_samples, longest) == mb.padded_length
    plain = _sampler(max_shapes=None)
    for mb in _micro_batches(plain, 0):
        assert mb.padded_length == max(LENGTHS[i] for i in mb.indices)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_dataloader_tensors_have_the_planned_shape(num_workers):
    vocabulary = set(_sampler().shape_vocabulary())
    for rank in (0, DP - 1):
        sampler = _sampler(rank)
        for epoch in range(2):
            sampler.set_epoch(epoch)
            loader = torch.utils.data.DataLoader(
                TokenDataset(LENGTHS), batch_sampler=sampler, num_workers=num_workers,
                collate_fn=PadToPlan(pad_collate, sampler, pad_token_id=0))
            planned = list(_micro_batches(sampler, epoch))
            batches = list(loader)
            assert len(batches) == len(planned)
            for batch, mb in zip(batches, planned):
                shape = (mb.num_samples, mb.padded_length)
                assert batch["index"].tolist() == mb.indices
                assert tuple(batch["input_ids"].shape) == shape in vocabulary
                assert tuple(batch["attention_mask"].shape) == shape
                assert int(batch["attention_mask"].sum()) == mb.real_tokens


def test_packed_rows_from_a_flattening_collator_have_vocabulary_shapes():
    """Packed mode: transformers' DataCollatorWithFlattening builds one row per micro-batch;
    wrapped in PadToPlan it is padded to its vocabulary row, each padding token a sequence of
    its own (position 0, a boundary of its own, label -100)."""
    from transformers import DataCollatorWithFlattening

    class Rows(torch.utils.data.Dataset):
        def __len__(self):
            return len(LENGTHS)

        def __getitem__(self, i):
            return {"input_ids": [(i * 13 + t * 7) % 97 + 1 for t in range(LENGTHS[i])]}

    kw = {"packed": True, "max_tokens": 1024, "max_shapes": 4, "pad_to_multiple_of": 16}
    vocabulary = _sampler(**kw).shape_vocabulary()
    assert 1 <= len(vocabulary) <= 4 and {size for size, _ in vocabulary} == {1}
    assert vocabulary[-1] == (1, 1024)
    collator = DataCollatorWithFlattening(return_flash_attn_kwargs=True)
    for rank in (0, DP - 1):
        sampler = _sampler(rank, **kw)
        loader = torch.utils.data.DataLoader(Rows(), batch_sampler=sampler,
                                             collate_fn=PadToPlan(collator, sampler))
        planned = list(_micro_batches(sampler, 0))
        batches = list(loader)
        assert len(batches) == len(planned)
        for batch, mb in zip(batches, planned):
            real, padded = mb.real_tokens, mb.padded_length
            assert padded == mb.padded_tokens and (1, padded) in vocabulary
            assert sampler.padded_length(mb.num_samples, real) == padded
            assert tuple(batch["input_ids"].shape) == (1, padded)
            assert tuple(batch["labels"].shape) == tuple(batch["position_ids"].shape)
            assert batch["labels"][0, real:].eq(-100).all()
            assert batch["position_ids"][0, real:].eq(0).all()
            bounds = batch["cu_seq_lens_q"].tolist()
            assert bounds[-1] == padded and len(bounds) == mb.num_samples + 1 + padded - real
            assert bounds == sorted(set(bounds))
    with pytest.raises(ValueError, match="flattening collator"):
        PadToPlan(pad_collate, _sampler(**kw))([{"index": 0, "input_ids": torch.ones(5)}] * 2)


def _calibrated(first_shape_seconds=0.02):
    return brs.CostModel(alpha=2e-4, intercept=300.0, source="calibrated",
                         seconds_per_unit=1e-6, first_shape_seconds=first_shape_seconds)


def test_auto_max_shapes_takes_the_count_of_the_fastest_modelled_run():
    """Each candidate's run is priced as run_steps steps at its plans' mean step time plus a
    first run per shape; the least wins, short runs take fewer shapes than long ones, and the
    sampler then is the sampler of that count."""
    chosen = {}
    for run_steps in (2, 10 ** 6):
        sampler = _sampler(max_shapes="auto", cost_model=_calibrated(), run_steps=run_steps)
        table = sampler.max_shapes_choice
        assert [row["max_shapes"] for row in table][0] == 0 and len(table) >= 3
        for row in table:
            bounded = _sampler(max_shapes=row["max_shapes"] or None, cost_model=_calibrated())
            steps = bounded.steps_per_epoch
            picked = sorted({i * steps // 16 for i in range(min(16, steps))})
            mean = sum(bounded.plan(t, epoch=0).micro_sync_time for t in picked) / len(picked)
            assert row["step_seconds"] == pytest.approx(mean * 1e-6)
            assert row["run_seconds"] == pytest.approx(run_steps * row["step_seconds"]
                                                       + 0.02 * row["shapes"])
            if row["max_shapes"]:
                assert row["shapes"] == len(bounded.shape_vocabulary()) <= row["max_shapes"]
        best = min(table, key=lambda row: (row["run_seconds"], row["max_shapes"]))
        assert sampler.max_shapes == best["max_shapes"] and sampler.was_given("max_shapes")
        assert sampler.shape_vocabulary() == _sampler(
            max_shapes=best["max_shapes"] or None, cost_model=_calibrated()).shape_vocabulary()
        assert pickle.loads(pickle.dumps(sampler)).max_shapes == sampler.max_shapes
        chosen[run_steps] = best
    assert chosen[2]["shapes"] < chosen[10 ** 6]["shapes"]


def test_auto_max_shapes_says_what_it_needs():
    with pytest.raises(ValueError, match="calibrated cost_model"):
        _sampler(max_shapes="auto", run_steps=100)
    with pytest.raises(ValueError, match="first_shape_seconds"):
        _sampler(max_shapes="auto", run_steps=100, cost_model=_calibrated(0.0))
    with pytest.raises(ValueError, match="run_steps"):
        _sampler(max_shapes="auto", cost_model=_calibrated())
    with pytest.raises(ValueError, match="run_steps"):
        _sampler(max_shapes=8, run_steps=100)
    started = _sampler(max_shapes=None, cost_model=_calibrated())
    next(iter(started))
    with pytest.raises(RuntimeError, match="started iterating"):
        started.choose_max_shapes(100)


def test_pad_to_plan_pads_each_tensor_with_its_value_on_the_tokenizers_side():
    sampler = _sampler(max_shapes=None, length_buckets=[16, 32, 304])

    def collate(samples):
        width = max(len(s) for s in samples)
        ids = torch.tensor([s + [9] * (width - len(s)) for s in samples])
        mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in samples])
        return {"input_ids": ids, "attention_mask": mask, "labels": ids.clone(),
                "position_ids": torch.arange(width).expand(len(samples), width).clone(),
                "scores": torch.ones(len(samples))}

    class Tokenizer:
        pad_token_id, padding_side = 9, "left"

    collate.tokenizer = Tokenizer()
    batch = PadToPlan(collate, sampler)([[1, 2, 3], [4, 5, 6, 7, 8]])
    assert batch["input_ids"].shape == (2, 16)
    assert batch["input_ids"][0].tolist() == [9] * 11 + [1, 2, 3, 9, 9]
    assert batch["attention_mask"][1].tolist() == [0] * 11 + [1] * 5
    assert batch["labels"][1, :11].tolist() == [-100] * 11
    assert batch["position_ids"][1].tolist() == [0] * 11 + [0, 1, 2, 3, 4]
    assert batch["scores"].shape == (2,)
    right = PadToPlan(collate, sampler, pad_token_id=0, padding_side="right")
    assert right([[1] * 20])["input_ids"][0].tolist() == [1] * 20 + [0] * 12


def test_errors_raise_value_error_with_the_librarys_message():
    with pytest.raises(ValueError, match="max_shapes"):
        _sampler(max_shapes=-1)
    with pytest.raises(ValueError, match="max_tokens"):
        _sampler(max_shapes=4, packed=True)
    sampler = _sampler()
    vocabulary = sampler.shape_vocabulary()
    longest = max(length for _, length in vocabulary)
    with pytest.raises(ValueError, match="holds"):
        sampler.padded_length(vocabulary[-1][0], longest + 1)
    with pytest.raises(ValueError, match="no micro-batch of 1000 samples"):
        sampler.padded_length(1000, 1)


def test_exported_from_brs():
    assert "PadToPlan" in brs.__all__ and "warmup" in brs.__all__
    assert brs.PadToPlan is PadToPlan and callable(brs.warmup)
