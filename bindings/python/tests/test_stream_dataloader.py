"""RebalancedStream under torch's DataLoader: an IterableDataset (batch_size=None), workers that
split this rank's micro-batches round-robin without changing their order, a resume from the
count of micro-batches trained, and a state that refuses another configuration."""

import pytest

from brs import RebalancedStream

torch = pytest.importorskip("torch")

ITEMS = [{"id": i, "n": 1 + (i * 7919) % 97 + (300 if i % 13 == 0 else 0)} for i in range(203)]


def length(item):
    return item["n"]


def ids(batch):
    return [item["id"] for item in batch]


def stream(**options):
    settings = dict(length=length, per_device_batch_size=3, grad_accum=2, window_steps=4,
                    dp_size=2, rank=1, seed=4)
    settings.update(options)
    return RebalancedStream(ITEMS, **settings)


def loader(source, workers=0):
    return torch.utils.data.DataLoader(source, batch_size=None, collate_fn=ids,
                                       num_workers=workers)


def test_is_an_iterable_dataset():
    assert isinstance(stream(), torch.utils.data.IterableDataset)


@pytest.mark.parametrize("workers", [0, 2, 3])
def test_dataloader_yields_the_streams_order_with_any_workers(workers):
    expected = [ids(batch) for batch in stream()]
    assert list(loader(stream(), workers)) == expected


@pytest.mark.parametrize("consumed", [0, 3, 8, 13])
def test_resume_from_the_count_trained_under_workers(consumed):
    expected = [ids(batch) for batch in stream()]
    trained = stream()
    head = []
    for batch in loader(trained, workers=2):  # the workers move copies, never `trained`
        if len(head) == consumed:
            break
        head.append(batch)
    state = trained.state_dict(consumed=consumed)
    resumed = stream()
    resumed.load_state_dict(state)
    assert head + list(loader(resumed, workers=2)) == expected


def test_state_carries_the_fingerprint_and_refuses_another():
    state = stream().state_dict()
    assert state["fingerprint"] == stream().fingerprint
    assert len(state["fingerprint"]) == 16
    assert stream(seed=5).fingerprint != state["fingerprint"]
    with pytest.raises(ValueError, match="fingerprint"):
        stream().load_state_dict({**state, "fingerprint": "0" * 16})
    with pytest.raises(ValueError, match="seed"):
        stream(seed=5).load_state_dict(state)


def test_consumed_must_be_a_count():
    with pytest.raises(ValueError, match="consumed"):
        stream().state_dict(consumed=-1)


@pytest.mark.parametrize("taken", [1, 4, 9])
def test_torchdata_stateful_dataloader_resumes_exactly_with_workers(taken):
    stateful = pytest.importorskip("torchdata.stateful_dataloader")
    expected = [ids(batch) for batch in stream()]

    def make():
        return stateful.StatefulDataLoader(stream(), batch_size=None, collate_fn=ids,
                                           num_workers=2)

    first = make()
    iterator = iter(first)
    head = [next(iterator) for _ in range(taken)]
    state = first.state_dict()
    del iterator
    resumed = make()
    resumed.load_state_dict(state)
    assert head + list(resumed) == expected
