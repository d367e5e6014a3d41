"""BatchRebalanceSampler: a torch-compatible batch sampler whose every micro-batch libbrs plans.

Each rank yields, for step 0, 1, ... of the epoch, its micro-batches of micro-step 0 .. G-1:
``len(s) == steps_per_epoch * grad_accum`` on every rank, and over all ranks every dataset index
appears exactly once per epoch (see DESIGN.md section 2). Pass it as ``batch_sampler=`` to a
DataLoader. It imports without torch, never touches a global random generator (the shuffle is
libbrs's, keyed by seed and epoch), and resumes in O(1) from ``state_dict()``.
"""

from . import _args, _elastic, _native as n, distributed
from ._handles import NativePlan, NativeSampler
from ._lengths import as_uint32

STATE_VERSION = 1
_FINGERPRINT_INPUTS = ("lengths, seed and options (per_device_batch_size, grad_accum, dp_size, "
                       "shuffle, drop_last, alpha, intercept, max_tokens, packed)")


class BatchRebalanceSampler:
    """Yields this rank's micro-batches (fresh ``list[int]`` of dataset indices) step by step.

    ``per_device_batch_size`` is the AVERAGE micro-batch size: a step holds
    ``per_device_batch_size * grad_accum * dp_size`` samples, split into micro-batches of variable
    size so that their costs are balanced. ``dp_size`` and ``rank`` default to what the job says
    (accelerate, then torch.distributed, then RANK/WORLD_SIZE, then 1 and 0); they are detected
    again until the first iteration and fixed from then on, so the sampler may be built before
    ``init_process_group``.

    ``lengths`` is borrowed when it is a C-contiguous uint32 numpy array (or a tensor viewing
    one): keep it unchanged while the sampler lives. Anything else is copied once.
    """

    batch_size = None  # the DataLoader contract of a batch sampler: sizes vary

    def __init__(self, lengths, *, per_device_batch_size, grad_accum=1, dp_size=None, rank=None,
                 seed=0, shuffle=True, drop_last=True, alpha=0.001, intercept=0.0,
                 max_tokens=None, packed=False):
        self._store_args(per_device_batch_size=per_device_batch_size, grad_accum=grad_accum,
                         dp_size=dp_size, rank=rank, seed=seed, shuffle=shuffle,
                         drop_last=drop_last, alpha=alpha, intercept=intercept,
                         max_tokens=max_tokens, packed=packed)
        self._start(lengths, frozen=None)

    def _store_args(self, *, per_device_batch_size, grad_accum, dp_size, rank, seed, shuffle,
                    drop_last, alpha, intercept, max_tokens, packed):
        self.per_device_batch_size = _args.integer("per_device_batch_size", per_device_batch_size, 1)
        self.grad_accum = _args.integer("grad_accum", grad_accum, 1)
        self._dp_size_arg = _args.optional_integer("dp_size", dp_size, 1)
        self._rank_arg = _args.optional_integer("rank", rank, 0)
        self.seed = _args.integer("seed", seed, 0)
        self.shuffle = _args.flag("shuffle", shuffle)
        self.drop_last = _args.flag("drop_last", drop_last)
        self.alpha = _args.real("alpha", alpha)
        self.intercept = _args.real("intercept", intercept)
        self.max_tokens = _args.optional_integer("max_tokens", max_tokens, 1)
        self.packed = _args.flag("packed", packed)

    def _start(self, lengths, frozen):
        self._native = NativeSampler(as_uint32(lengths))
        self._configure()
        self._epoch = 0
        self._step = self._micro = 0  # the next micro-batch this rank yields
        self._resume_pending = False  # set by load_state_dict, cleared once a batch past it is out
        self._frozen = None  # (dp_size, rank) once the first iteration has started
        self._ranks_checked = False
        if frozen is None:
            self._topology()
        else:
            self._apply_topology(*frozen)
            self._frozen = tuple(frozen)
        self._native.validate()  # bad combinations fail here, not at the first batch

    def _configure(self):
        native = self._native
        native.set_int(n.OPT_BATCH_SIZE, self.per_device_batch_size)
        native.set_int(n.OPT_GRAD_ACCUM, self.grad_accum)
        native.set_int(n.OPT_SEED, self.seed)
        native.set_int(n.OPT_SHUFFLE, int(self.shuffle))
        native.set_int(n.OPT_DROP_LAST, int(self.drop_last))
        native.set_int(n.OPT_MAX_TOKENS, self.max_tokens or 0)
        native.set_int(n.OPT_PACKED, int(self.packed))
        native.set_double(n.OPT_ALPHA, self.alpha)
        native.set_double(n.OPT_INTERCEPT, self.intercept)

    # -- topology ---------------------------------------------------------------------------

    def _topology(self):
        """(dp_size, rank): explicit arguments first, then the job's; applied to the handle."""
        if self._frozen is not None:
            return self._frozen
        world, rank, source = distributed.detect()
        dp_size = self._dp_size_arg if self._dp_size_arg is not None else world
        if self._rank_arg is not None:
            rank, source = self._rank_arg, "the rank argument"
        if rank >= dp_size:
            raise ValueError(f"rank {rank} (from {source}) must be below dp_size {dp_size}: "
                             "pass rank= and dp_size= explicitly for this data-parallel group")
        self._apply_topology(dp_size, rank)
        return dp_size, rank

    def _apply_topology(self, dp_size, rank):
        self._native.set_int(n.OPT_DP_SIZE, dp_size)
        self._native.set_int(n.OPT_RANK, rank)

    @property
    def dp_size(self):
        return self._topology()[0]

    @property
    def rank(self):
        return self._topology()[1]

    # -- the epoch --------------------------------------------------------------------------

    @property
    def epoch(self):
        return self._epoch

    def set_epoch(self, epoch):
        """Select the epoch the next iteration plans (each epoch is a new shuffle)."""
        epoch = _args.integer("epoch", epoch, 0)
        if epoch != self._epoch:
            self._epoch = epoch
            self._step = self._micro = 0
            self._resume_pending = False

    @property
    def steps_per_epoch(self):
        self._topology()
        return self._native.steps_per_epoch()

    @property
    def fingerprint(self):
        """16 hex digits; equal on two samplers iff they plan identically (rank aside)."""
        self._topology()
        return self._native.fingerprint()

    @property
    def lengths(self):
        """The uint32 buffer libbrs reads (the caller's own array when borrowed)."""
        return self._native.lengths.owner

    def __len__(self):
        return self.steps_per_epoch * self.grad_accum

    def plan(self, step, epoch=None):
        """The Plan of ``step`` (all ranks), of ``epoch`` or else of the current epoch."""
        step = _args.integer("step", step, 0)
        epoch = self._epoch if epoch is None else _args.integer("epoch", epoch, 0)
        self._topology()
        plan = NativePlan()
        plan.compute(self._native.handle, epoch, step)
        return plan.snapshot()

    # -- iteration --------------------------------------------------------------------------

    def __iter__(self):
        return self._iterate()

    def _iterate(self):
        # A generator: nothing below runs before the first next(), which is "the first
        # iteration" of the contract (a DataLoader may call iter() before it pulls a batch).
        dp_size, rank = self._freeze()
        self._check_ranks_once()
        epoch, steps, grad_accum = self._epoch, self.steps_per_epoch, self.grad_accum
        step, micro = (self._step, self._micro) if self._resume_pending else (0, 0)
        self._step, self._micro = step, micro
        plan, sampler = NativePlan(), self._native.handle
        while step < steps:
            plan.compute(sampler, epoch, step)
            for m in range(micro, grad_accum):
                batch = plan.indices(rank, m)
                # Advance first: the position is the next micro-batch, even while suspended.
                if m + 1 < grad_accum:
                    self._micro = m + 1
                else:
                    self._step, self._micro = step + 1, 0
                # A loaded position holds until a micro-batch past it is yielded: a loaded
                # end of epoch keeps yielding nothing (torchdata's StatefulDataLoader primes
                # and discards one iterator when it restores a finished epoch).
                self._resume_pending = False
                yield batch
            step, micro = step + 1, 0

    def _freeze(self):
        if self._frozen is None:
            self._frozen = self._topology()
        return self._frozen

    def _check_ranks_once(self):
        if not self._ranks_checked:
            distributed.check_same_plan(self.fingerprint, _FINGERPRINT_INPUTS, self.dp_size)
            self._ranks_checked = True

    # -- resume -----------------------------------------------------------------------------

    def state_dict(self, *, consumed=None):
        """The position of the next micro-batch this rank yields, for an exact O(1) resume.

        With a plain DataLoader and num_workers > 0 the loader prefetches, so the sampler is
        ahead of the training loop: pass ``consumed``, the number of micro-batches of this epoch
        the loop has actually processed. torchdata's StatefulDataLoader needs no argument.
        """
        step, micro = self._step, self._micro
        if consumed is not None:
            consumed = _args.integer("consumed", consumed, 0)
            if consumed > len(self):
                raise ValueError(f"consumed={consumed} exceeds the {len(self)} micro-batches "
                                 "of an epoch on this rank")
            step, micro = divmod(consumed, self.grad_accum)
        return {"epoch": self._epoch, "step": step, "micro": micro,
                "fingerprint": self.fingerprint, "version": STATE_VERSION,
                **_elastic.split_of(self)}

    def load_state_dict(self, state):
        """Resume: the next iteration starts at the saved position of the saved epoch.

        A state saved on another dp_size (at an optimizer-step boundary, with the same global
        batch per_device_batch_size x grad_accum x dp_size) resumes at the same step; the
        change is logged on the "brs" logger.
        """
        epoch, step, micro = self._parse_state(state)
        self._epoch, self._step, self._micro = epoch, step, micro
        self._resume_pending = True

    def _parse_state(self, state):
        if not isinstance(state, dict):
            raise TypeError(f"state must be the dict from state_dict(); got {type(state).__name__}")
        missing = {"epoch", "step", "micro", "fingerprint", "version"} - state.keys()
        if missing:
            raise ValueError(f"state lacks {sorted(missing)}: pass the dict from state_dict()")
        if state["version"] != STATE_VERSION:
            raise ValueError(f"state version {state['version']!r} is not supported "
                             f"(this package writes version {STATE_VERSION})")
        # Another dp_size with the same global batch is the same stream: see brs/_elastic.py.
        if state["fingerprint"] != self.fingerprint and not _elastic.accepts(self, state):
            raise ValueError(
                f"state was saved by a sampler with fingerprint {state['fingerprint']}, but this "
                f"one has {self.fingerprint}: resume with the same {_FINGERPRINT_INPUTS}")
        epoch = _args.integer("state['epoch']", state["epoch"], 0)
        step = _args.integer("state['step']", state["step"], 0)
        micro = _args.integer("state['micro']", state["micro"], 0)
        steps = self.steps_per_epoch
        if step > steps or micro >= self.grad_accum or (step == steps and micro != 0):
            raise ValueError(f"state position step {step}, micro {micro} lies outside an epoch "
                             f"of {steps} steps x {self.grad_accum} micro-steps")
        return epoch, step, micro

    # -- pickling: the handle is rebuilt from the arguments ------------------------------------

    def __getstate__(self):
        args = dict(per_device_batch_size=self.per_device_batch_size, grad_accum=self.grad_accum,
                    dp_size=self._dp_size_arg, rank=self._rank_arg, seed=self.seed,
                    shuffle=self.shuffle, drop_last=self.drop_last, alpha=self.alpha,
                    intercept=self.intercept, max_tokens=self.max_tokens, packed=self.packed)
        position = (self._epoch, self._step, self._micro, self._resume_pending)
        return {"lengths": self._native.lengths.owner, "args": args, "position": position,
                "frozen": self._frozen}

    def __setstate__(self, state):
        self._store_args(**state["args"])
        self._start(state["lengths"], frozen=state["frozen"])
        self._epoch, self._step, self._micro, self._resume_pending = state["position"]

    def __repr__(self):
        dp = self._frozen[0] if self._frozen else self._dp_size_arg
        return (f"BatchRebalanceSampler(n={self._native.lengths.count}, "
                f"per_device_batch_size={self.per_device_batch_size}, "
                f"grad_accum={self.grad_accum}, dp_size={dp}, seed={self.seed}, "
                f"epoch={self._epoch})")
