"""Beyond pure data parallelism: one plan per data-parallel replica (dp=2 x tp=2, 4 gloo ranks).

The two ranks of a tensor-parallel replica must see identical micro-batches, the two replicas
disjoint ones, and over each epoch the replicas together cover every sample once. The topology
comes from a torch DeviceMesh ("dp", "tp") and from accelerate's ParallelismConfig mesh.
"""

import pytest

import run_replicas as cfg
from _support import read_json

pytestmark = pytest.mark.distributed  # scripts/soak-distributed runs these

pytest.importorskip("torch.distributed.device_mesh")

RANKS = 4


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("replicas")
    torchrun("run_replicas.py", "--out", out, nproc=RANKS)
    return [read_json(out / f"rank{rank}.json") for rank in range(RANKS)]


def replicas(ranks):
    """dp rank -> the mesh results of its ranks."""
    grouped = {}
    for result in ranks:
        grouped.setdefault(result["mesh"]["dp_rank"], []).append(result["mesh"])
    return grouped


def test_the_mesh_gives_two_replicas_of_two_ranks(ranks):
    grouped = replicas(ranks)
    assert sorted(grouped) == [0, 1]
    for members in grouped.values():
        assert sorted(member["tp_rank"] for member in members) == [0, 1]
        assert all(member["dp_size"] == 2 for member in members)


def test_ranks_of_one_replica_see_identical_micro_batches(ranks):
    for dp_rank, members in replicas(ranks).items():
        assert members[0]["epochs"] == members[1]["epochs"], f"replica {dp_rank}"
        assert all(len(epoch) == len(members[0]["epochs"][0]) for epoch in members[0]["epochs"])


def test_replicas_are_disjoint_and_cover_every_epoch(ranks):
    grouped = replicas(ranks)
    for epoch in range(cfg.EPOCHS):
        seen = [sorted(i for batch in grouped[dp][0]["epochs"][epoch] for i in batch)
                for dp in (0, 1)]
        assert not set(seen[0]) & set(seen[1]), f"epoch {epoch}"
        assert sorted(seen[0] + seen[1]) == list(range(cfg.NUM_SAMPLES)), f"epoch {epoch}"
    first = grouped[0][0]["epochs"]
    assert first[0] != first[1]  # a new shuffle each epoch


def test_accelerate_parallelism_config_gives_the_same_replicas(ranks):
    for rank, result in enumerate(ranks):
        mesh, accelerate = result["mesh"], result["accelerate"]
        assert accelerate["mesh_dims"] == ["dp_shard", "tp"]
        assert (accelerate["dp_size"], accelerate["dp_rank"]) == (2, mesh["dp_rank"]), rank
        assert accelerate["flattened_dp"] == [2, mesh["dp_rank"]]  # accelerate's flattened "dp"
        assert accelerate["tp_rank"] == mesh["tp_rank"]
