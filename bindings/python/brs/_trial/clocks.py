"""The trial's step clocks. One process simulating every rank: a step's time is the sync
model's arithmetic over the measured micro-batches. One process per rank (torchrun): the wall
clock between barriers. Both say which micro-batches this process runs (``mine``)."""

import time

from . import plans as _plans


class SimulatedClock:
    """One process runs every rank's micro-batches in turn; a step's time is the sync model's
    arithmetic over them (results.step_times), so this clock times no step itself."""

    describe = ("the sync model's arithmetic over the measured micro-batches (micro_step: the "
                "sum over micro-steps of the slowest rank; step: the slowest rank's sum)")

    @staticmethod
    def mine(step_plan):
        """The (rank, micro, micro-batch) this process runs: every rank's."""
        return _plans.flatten(step_plan)

    def start(self):
        pass

    def micro_step_done(self):
        pass

    def stop(self):
        return None

    @staticmethod
    def reduce(measured):
        return None  # nothing measured: results.py computes the step times


class BarrierClock:
    """One process per rank runs its own rank's micro-batches; a step's time is the wall clock
    from a barrier before its first micro-step to a barrier after the optimizer step, its
    maximum over the ranks. micro_step sync adds a barrier after every micro-step, where DDP or
    FSDP would all-reduce gradients and every rank waits for the slowest; step sync (DDP under
    no_sync) waits only at the end. No gradient is all-reduced: that cost is the same for every
    strategy, and the model is not wrapped in DDP."""

    describe = "wall clock between barriers, max over ranks"

    def __init__(self, group, sync, runner):
        self.group, self.sync, self.runner = group, sync, runner
        self.began = None

    def mine(self, step_plan):
        return [item for item in _plans.flatten(step_plan) if item[0] == self.group.rank]

    def start(self):
        self._drain()
        self.group.barrier()
        self.began = time.perf_counter()

    def micro_step_done(self):
        if self.sync == "micro_step":
            self.group.barrier()

    def stop(self):
        self._drain()
        self.group.barrier()
        return time.perf_counter() - self.began

    def _drain(self):
        # queued CUDA kernels belong to the step they were launched in, not to the clock's
        # next reading
        if self.runner.cuda:
            self.runner.torch.cuda.synchronize(self.runner.device)

    def reduce(self, measured):
        """Each strategy's step times, the maximum over ranks: one all_reduce per strategy
        after the timing, so no collective but the barriers runs inside a step."""
        return {name: self.group.max(values) for name, values in measured.items()}
