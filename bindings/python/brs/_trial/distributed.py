"""The trial's process group: one process per dp rank under torchrun, or one process that
simulates every rank.

run.py talks to a group object and never asks which mode it is in: ``Local`` (one process,
its collectives the identity) and ``Group`` (torch.distributed) offer the same few calls
(barrier, max, gather, broadcast, close), so the simulated and the distributed trial share
every line but the clock's.

torch.distributed is used only where it is initialised already (the user's group, left as it
is) or where the environment names a multi-process job (torchrun's WORLD_SIZE > 1 and RANK):
then the trial initialises the default group itself (gloo on CPU, nccl on CUDA) and destroys
it at the end.
"""

import os
import sys


def _dist():
    """torch.distributed where it can be used, else None."""
    import torch.distributed as dist

    return dist if dist.is_available() else None


def _initialised():
    dist = _dist()
    return dist is not None and dist.is_initialized()


def _launched():
    """(world size, rank) where the environment names a multi-process job, else None."""
    world, rank = os.environ.get("WORLD_SIZE"), os.environ.get("RANK")
    if world is None or rank is None:
        return None
    try:
        world, rank = int(world), int(rank)
    except ValueError:
        raise ValueError(f"RANK={rank!r} and WORLD_SIZE={world!r} must be integers; fix the "
                         "launcher's environment") from None
    return (world, rank) if world > 1 else None


def processes():
    """The process count of the job the trial joins (the initialised group's, else the
    launcher's), or None where one process simulates the ranks. Read before any group is
    created, so a dp_size that disagrees fails with no group to tear down."""
    if _initialised():
        return _dist().get_world_size()
    launched = _launched()
    return None if launched is None else launched[0]


def is_main():
    """Whether this process prints and writes: rank 0, or the only process. Also right after
    the trial destroyed its group (the launcher's RANK still says)."""
    if _initialised():
        return _dist().get_rank() == 0
    launched = _launched()
    return launched is None or launched[1] == 0


def local_device(device):
    """Under a launcher, a bare "cuda" means this process's own GPU (LOCAL_RANK), as every
    torchrun script selects it; an explicit index is the user's and kept."""
    import torch

    if device.type != "cuda" or device.index is not None or processes() is None:
        return device
    local = int(os.environ.get("LOCAL_RANK", _rank_or_zero() % torch.cuda.device_count()))
    return torch.device("cuda", local)


def _rank_or_zero():
    if _initialised():
        return _dist().get_rank()
    launched = _launched()
    return 0 if launched is None else launched[1]


def run_in_group(device, body, out):
    """body(group)'s results in the group ``join`` gives, torn down whatever happens; then,
    with the group gone (a file rank 0 cannot write leaves no rank waiting for it), rank 0
    writes them to ``out`` (brs/_trial/output.py) when it is given."""
    group = join(device)
    failed = True
    try:
        results = body(group)
        failed = False
    finally:
        group.close(failed)
    if out is not None and group.rank == 0:
        from . import output as _output

        _output.write(results, out)
    return results


def join(device):
    """The group the trial runs in: the initialised one, one created here from the launcher's
    environment, or Local where neither exists."""
    if not _initialised() and _launched() is None:
        return Local()
    if _dist() is None:
        raise ValueError("WORLD_SIZE > 1 asks for one process per dp rank, but this torch has "
                         "no torch.distributed")
    if device.type == "cuda":
        import torch

        torch.cuda.set_device(device)  # nccl's object collectives use the current device
    created = not _initialised()
    if created:
        _dist().init_process_group("nccl" if device.type == "cuda" else "gloo")
    return Group(_dist(), device, created)


class Local:
    """One process simulates every dp rank: nothing to synchronise, each collective is the
    identity over a world of one."""

    rank, world = 0, 1

    @staticmethod
    def describe():
        return "one process simulates the dp ranks"

    def barrier(self):
        pass

    def max(self, values):
        return list(values)

    def gather(self, value):
        return [value]

    def broadcast(self, value):
        return value

    def close(self, failed=False):
        pass


class Group:
    """The default torch.distributed group: one process per dp rank."""

    def __init__(self, dist, device, created):
        import torch

        self.dist, self.created, self.torch = dist, created, torch
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.backend = str(dist.get_backend())
        # nccl reduces tensors on the GPU only; gloo takes CPU tensors
        self.tensor_device = device if self.backend == "nccl" else torch.device("cpu")

    def describe(self, per="dp rank"):
        """results.json's "processes"; ``per``: what one process runs."""
        launcher = "torchrun" if "TORCHELASTIC_RUN_ID" in os.environ else "torch.distributed"
        return f"{launcher}: {self.world} processes, one per {per}, {self.backend}"

    def barrier(self):
        self.dist.barrier()

    def max(self, values):
        """Each value's maximum over the ranks (one all_reduce for the whole list)."""
        values = self.torch.tensor(list(values), dtype=self.torch.float64,
                                   device=self.tensor_device)
        self.dist.all_reduce(values, op=self.dist.ReduceOp.MAX)
        return values.tolist()

    def gather(self, value):
        """Every rank's value, in rank order, on every rank."""
        parts = [None] * self.world
        self.dist.all_gather_object(parts, value)
        return parts

    def broadcast(self, value):
        """Rank 0's value on every rank."""
        box = [value if self.rank == 0 else None]
        self.dist.broadcast_object_list(box, src=0)
        return box[0]

    def close(self, failed=False):
        """Destroys the group where the trial created it. A barrier first, so no rank tears
        down while another still talks to it (gloo may abort a process whose peer left
        early); after a failure the others may wait in another collective, so no barrier."""
        if not self.created or not self.dist.is_initialized():
            return
        if not failed:
            self.dist.barrier()
        try:
            self.dist.destroy_process_group()
        except Exception as exc:  # noqa: BLE001 - the failure being raised is the one to see
            if not failed:
                raise
            print(f"brs trial: note: destroying the process group: {exc}", file=sys.stderr)
