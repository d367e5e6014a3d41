"""BatchRebalanceSampler as a DataLoader batch_sampler (workers included), and pickling."""

import pickle

import pytest

torch = pytest.importorskip("torch")

from brs import BatchRebalanceSampler  # noqa: E402
from brs_data import TokenDataset, pad_collate  # noqa: E402
from brs_testing import random_lengths  # noqa: E402

LENGTHS = random_lengths(240, seed=21, high=64)


def _sampler(**kw):
    kw = {"per_device_batch_size": 4, "grad_accum": 2, "dp_size": 2, "rank": 1, "seed": 3, **kw}
    return BatchRebalanceSampler(LENGTHS, **kw)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_dataloader_yields_the_plan_with_dynamic_padding(num_workers):
    sampler = _sampler()
    sampler.set_epoch(1)
    loader = torch.utils.data.DataLoader(TokenDataset(LENGTHS), batch_sampler=sampler,
                                         collate_fn=pad_collate, num_workers=num_workers)
    assert len(loader) == len(sampler)
    batches = list(loader)
    assert len(batches) == len(sampler)
    for i, batch in enumerate(batches):
        step, micro = divmod(i, sampler.grad_accum)
        mb = sampler.plan(step).micro_batches[1][micro]
        assert batch["index"].tolist() == mb.indices
        assert batch["input_ids"].numel() == mb.padded_tokens  # padded to this batch's longest
        assert int(batch["attention_mask"].sum()) == mb.real_tokens


def test_pickle_round_trip_keeps_configuration_epoch_and_position():
    sampler = _sampler(max_tokens=400, alpha=0.01)
    sampler.set_epoch(2)
    it = iter(sampler)
    consumed = [next(it) for _ in range(3)]
    clone = pickle.loads(pickle.dumps(sampler))
    assert clone.fingerprint == sampler.fingerprint
    assert (clone.epoch, clone.dp_size, clone.rank) == (2, 2, 1)
    assert clone.state_dict() == sampler.state_dict()
    assert list(clone) == consumed + list(it)  # a new iteration starts the epoch again


def test_pickled_resume_position_is_kept():
    sampler = _sampler()
    state = {**sampler.state_dict(), "step": 2, "micro": 1}
    sampler.load_state_dict(state)
    clone = pickle.loads(pickle.dumps(sampler))
    assert list(clone) == list(_sampler())[5:]


def test_pickle_of_a_borrowed_numpy_array():
    np = pytest.importorskip("numpy")
    sampler = BatchRebalanceSampler(np.array(LENGTHS, dtype=np.uint32), per_device_batch_size=4,
                                    dp_size=1)
    clone = pickle.loads(pickle.dumps(sampler))
    assert list(clone) == list(sampler)
