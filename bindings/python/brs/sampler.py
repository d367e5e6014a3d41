"""BatchRebalanceSampler: a torch-compatible batch sampler whose every micro-batch libbrs plans.

Each rank yields, for step 0, 1, ... of the epoch, its micro-batches of micro-step 0 .. G-1:
``len(s) == steps_per_epoch * grad_accum`` on every rank, and over all ranks every dataset index
appears exactly once per epoch (docs/design.md). Pass it as ``batch_sampler=`` to a
DataLoader. It imports without torch, never touches a global random generator (the shuffle is
libbrs's, keyed by seed and epoch), and resumes in O(1) from ``state_dict()``.
"""

import inspect
import logging

try:
    # A torch.utils.data.Sampler where torch is installed, so that isinstance checks (frameworks',
    # type checkers') see a sampler; a plain class without torch, which the package never needs.
    from torch.utils.data import Sampler as _SamplerBase
except ImportError:
    _SamplerBase = object

from . import _args, _elastic, _options, _run_check, cost_model as _cost_model, distributed
from . import _context_parallel, _elapsed, _padding, _upstream, recreation
from ._cost_switch import SWITCHED, CostModelSchedule
from ._encoder import image_table
from ._errors import BrsError
from ._handles import NativePlan, NativeSampler
from ._lengths import as_uint32

STATE_VERSION = 1

logger = logging.getLogger("brs")

# Left unset, these come from the job (accelerate, torch.distributed, RANK/WORLD_SIZE), not from
# the library's defaults: the sampler may be built before init_process_group.
_TOPOLOGY = ("dp_size", "rank")
# The one keyword that is not a number of the option table: the allowed padded lengths, a list
# (brs_sampler_set_length_buckets) or "auto", the library's ladder for these lengths. It is kept
# with the options (pickling, with_options) under this name.
_BUCKETS = "length_buckets"
# Each sample's images as patch counts (brs/_encoder.py): kept as given, laid out for the library
# at every start, like the buckets not an option of the table.
_IMAGES = "encoder_loads"
_NOT_OPTIONS = (_BUCKETS, _IMAGES)
# The options every rank of a job shares (the library's scope column): the fingerprint and a
# saved position depend on them, never on the rank (every rank is at the same step).
_SHARED = tuple(option for option in _options.TABLE if _options.is_shared(option))
_FINGERPRINT_INPUTS = ("lengths and options ("
                       + ", ".join(_options.keyword(option) for option in _SHARED) + ")")


def _buckets_value(value):
    """The stored form of ``length_buckets=``: "auto", or a tuple of ints (order and range are
    the library's to check, so that its message, naming the bucket, is the one raised)."""
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f'length_buckets must be a list of lengths or "auto"; got {value!r}')
        return value
    try:
        buckets = tuple(value)
    except TypeError:
        raise TypeError(f'length_buckets must be a list of lengths or "auto"; got '
                        f'{type(value).__name__}') from None
    return tuple(_args.integer("length_buckets[]", bucket, 1) for bucket in buckets)


class BatchRebalanceSampler(_SamplerBase):
    """Yields this rank's micro-batches (fresh ``list[int]`` of dataset indices) step by step.

    ``per_device_batch_size`` is the AVERAGE micro-batch size (the library's ``batch_size``): a
    step holds ``per_device_batch_size * grad_accum * dp_size`` samples, split into micro-batches
    of variable size so that their costs are balanced. ``dp_size`` and ``rank`` default to what
    the job says (accelerate, then torch.distributed, then RANK/WORLD_SIZE, then 1 and 0); they
    are detected again until the first iteration and fixed from then on, so the sampler may be
    built before ``init_process_group``. Every other keyword left unset (None) takes the
    library's default; ``sampler.<keyword>`` reads back the value the library stores.

    ``lengths`` is borrowed when it is a C-contiguous uint32 numpy array (or a tensor viewing
    one): keep it unchanged while the sampler lives. Anything else is copied once.

    ``cost_model``: a brs.CostModel or the path of its JSON file (brs.calibrate); it supplies
    alpha, intercept and max_tokens, and the encoder part's encoder_weight, encoder_alpha,
    encoder_intercept and max_encoder_tokens, where those are not given (docs/calibration.md).

    ``max_shapes="auto"`` (with a calibrated ``cost_model`` and ``run_steps``, the optimizer
    steps of the run) picks the shape count that makes the run fastest: each step's modelled
    time against each new shape's ``first_shape_seconds`` (brs/_auto_shapes.py); the candidates
    are kept in ``max_shapes_choice``.

    ``progress``: a line on stderr with the elapsed time while a call plans for more than a
    second (the shape vocabulary max_shapes chooses at the first plan); True shows it, False
    never, None (default) where stderr is a terminal (brs/_elapsed.py).

    ``BatchRebalanceSampler.from_upstream_args`` builds it from the arguments of transformers'
    BatchRebalanceSampler, whose attribute names (num_global_batches, has_tail, ...) it answers
    (brs/_upstream.py).
    """

    batch_size = None  # the DataLoader contract of a batch sampler: sizes vary
    # max_shapes="auto": each candidate count's modelled run (brs/_auto_shapes.py); None else
    max_shapes_choice = None

    def __new__(cls, *args, **kwargs):
        # Lightning re-creates a DataLoader's batch sampler by calling its class: that call
        # returns this same sampler, wrapped for Lightning (brs/recreation.py).
        rebuilt = recreation.recreated(kwargs)
        return rebuilt if rebuilt is not None else super().__new__(cls)

    def __init__(self, *args, **kwargs):
        # The keywords are the option table's (the class's __signature__, made from it below):
        # a new option of the library is a keyword here with no edit.
        try:
            given = _SIGNATURE.bind(*args, **kwargs)
        except TypeError as exc:  # Python's own words, with the class they are about
            raise TypeError(f"{type(self).__name__}() {exc}") from None
        given.apply_defaults()
        self._init(**given.arguments)

    def _init(self, lengths, *, max_shapes, run_steps, cost_model, length_buckets,
              encoder_loads, progress, **options):
        """The constructor's body: ``options`` holds every option keyword of the table."""
        self._progress = progress
        auto_shapes = isinstance(max_shapes, str) and max_shapes == "auto"
        if auto_shapes:
            max_shapes = None  # chosen below, once the sampler and its cost model stand
        elif run_steps is not None:
            raise ValueError('run_steps (the run\'s length) is read by max_shapes="auto" only; '
                             f'max_shapes is {max_shapes!r}')
        if cost_model is not None:  # fills in alpha, intercept and max_tokens not given here
            o = options
            o["alpha"], o["intercept"], o["max_tokens"] = _cost_model.resolve(
                cost_model, o["alpha"], o["intercept"], o["max_tokens"])
            # ... and the encoder part's, likewise
            (o["encoder_weight"], o["encoder_alpha"], o["encoder_intercept"],
             o["max_encoder_tokens"]) = _cost_model.resolve_encoder(
                cost_model, o["encoder_weight"], o["encoder_alpha"], o["encoder_intercept"],
                o["max_encoder_tokens"])
            o["cp_comm_cost"], o["cp_latency"] = _cost_model.resolve_cp(
                cost_model, o["cp_comm_cost"], o["cp_latency"])
        options["max_shapes"] = max_shapes
        self._given = _options.given_options(options)
        if length_buckets is not None:
            self._given[_BUCKETS] = _buckets_value(length_buckets)
        if encoder_loads is not None:
            self._given[_IMAGES] = encoder_loads
        self._start(lengths, frozen=None)
        if cost_model is not None:  # its source and evidence, for the cost_model attribute
            self._costs.model = _cost_model.CostModel.coerce(cost_model)
        if auto_shapes:
            self.choose_max_shapes(run_steps)

    def choose_max_shapes(self, run_steps):
        """What max_shapes="auto" does, for a caller that learns the run's length later (the
        Trainer): sets max_shapes to the count that makes a run of ``run_steps`` optimizer
        steps fastest by the sampler's calibrated cost model (brs/_auto_shapes.py), as if
        given, and returns it; the candidates' table stays in ``max_shapes_choice``. Before the
        first iteration only. ValueError when the cost model is not calibrated."""
        from . import _auto_shapes

        if self._frozen is not None:
            raise RuntimeError("choose_max_shapes: the sampler has started iterating; its "
                               "options are fixed")
        count, self.max_shapes_choice = _auto_shapes.choose(self, self._costs.model, run_steps)
        option = _options.BY_NAME["max_shapes"]
        self._set(option, count)
        self._given[option.name] = count  # kept by pickling and with_options
        return count

    def fill_unset(self, **options):
        """Set each of ``options`` (constructor keywords; None skips one) that was left unset
        when the sampler was built, e.g. what a framework reads from the job (the collator's
        pad_to_multiple_of); a value the user gave stays. Before the first iteration only.
        Returns the keywords set."""
        unknown = sorted(options.keys() - _options.BY_KEYWORD.keys())
        if unknown:
            raise TypeError(f"fill_unset() takes the sampler's option keywords; got {unknown}")
        if self._frozen is not None:
            raise RuntimeError("fill_unset: the sampler has started iterating; its options are "
                               "fixed")
        filled = {}
        for keyword, value in options.items():
            name = _options.BY_KEYWORD[keyword].name
            native = _options.native_value(keyword, value)
            if native is not None and name not in self._given:
                filled[name] = native
                self._set(_options.BY_NAME[name], native)
        if filled:
            self._given.update(filled)  # kept by pickling and with_options
            self._check_cap(self._epoch)
            self._native.validate()
        return [_options.keyword(_options.BY_NAME[name]) for name in filled]

    def was_given(self, keyword):
        """True when option ``keyword`` (a constructor keyword) was set to a value, by the
        caller or by fill_unset; False when it takes the library's default (or, for dp_size and
        rank, the job's). sync="auto" counts as unset."""
        if keyword not in _NOT_OPTIONS and keyword not in _options.BY_KEYWORD:
            raise TypeError(f"was_given() takes one of the sampler's option keywords; got "
                            f"{keyword!r}")
        name = keyword if keyword in _NOT_OPTIONS else _options.BY_KEYWORD[keyword].name
        return name in self._given

    def fill_unset_sync(self, sync):
        """Plan for ``sync`` ("step" or "micro_step") when sync was left unset or "auto": what
        an integration calls once it knows how its framework synchronises. Returns True when
        set, False when the caller had given a sync, which stays.

        Unlike fill_unset, allowed once iterating has started: a DataLoader's workers may have
        drawn some steps already, and those keep the library's default on every rank alike."""
        if self.was_given("sync"):
            return False
        option = _options.BY_NAME["sync"]
        value = option.to_native(sync, "sync")
        self._set(option, value)
        self._given[option.name] = value  # kept by pickling and with_options
        return True

    def with_options(self, **changes):
        """A new sampler over the same lengths with ``changes`` (keywords of the constructor,
        None for the library's default) applied, at the start of the same epoch."""
        unknown = sorted(changes.keys() - _options.BY_KEYWORD.keys() - set(_NOT_OPTIONS))
        if unknown:
            raise TypeError(f"with_options() takes the sampler's option keywords; got {unknown}")
        given = dict(self._given)
        if _BUCKETS in changes:
            buckets = changes.pop(_BUCKETS)
            given.pop(_BUCKETS, None)
            if buckets is not None:
                given[_BUCKETS] = _buckets_value(buckets)
        if _IMAGES in changes:
            images = changes.pop(_IMAGES)
            given.pop(_IMAGES, None)
            if images is not None:
                given[_IMAGES] = images
        for keyword, value in changes.items():
            given.pop(_options.BY_KEYWORD[keyword].name, None)
            value = _options.native_value(keyword, value)
            if value is not None:
                given[_options.BY_KEYWORD[keyword].name] = value
        clone = object.__new__(type(self))
        clone._given, clone._progress = given, self._progress
        clone._start(self._native.lengths.owner, frozen=None)
        clone._costs.model = self._costs.model
        clone.set_epoch(self._epoch)
        return clone

    def _start(self, lengths, frozen):
        self._native = NativeSampler(as_uint32(lengths))
        self._configure()
        self._epoch = 0
        self._step = self._micro = 0  # the next micro-batch this rank yields
        self._resume_pending = False  # set by load_state_dict, cleared once a batch past it is out
        self._frozen = None  # (dp_size, rank) once the first iteration has started
        self._ranks_checked = False
        self._drop_reported = False
        # The cost model given or switched to (online calibration, brs/_cost_switch.py).
        self._costs = CostModelSchedule()
        if frozen is None:
            self._topology()
        else:
            self._apply_topology(*frozen)
            self._frozen = tuple(frozen)
        with self._watched():
            self._check_cap(self._epoch)  # a max_tokens some step cannot meet fails here too
            self._native.validate()  # bad combinations fail here, not at the first batch
            if self.max_shapes and (self.packed or self.strategy != "balanced"):
                self.shape_vocabulary()  # the library refuses these at once, with its message
        recreation.save_arguments(self)

    def _configure(self):
        for name, value in self._given.items():
            if name not in _TOPOLOGY and name not in _NOT_OPTIONS:
                self._set(_options.BY_NAME[name], value)
        # after pad_to_multiple_of, which the library's ladder is rounded to
        buckets = self._given.get(_BUCKETS)
        if buckets == "auto":
            buckets = self._native.bucket_ladder(0)
        if buckets is not None:
            self._native.set_length_buckets(buckets)
        images = self._given.get(_IMAGES)
        if images is not None:
            self._native.set_encoder_loads(image_table(images, self._native.lengths.count))

    @property
    def context_parallel(self):
        """Whether this sampler plans with context parallelism (cp_size > 1 or
        max_tokens_per_rank set): its plans give each global rank a share of its group's
        micro-batch."""
        return _context_parallel.active(self._given)

    @property
    def length_buckets(self):
        """The padded lengths a micro-batch may take (a list; empty: any length)."""
        return self._native.length_buckets()

    def shapes(self, epoch=None):
        """The sorted distinct ``(batch_size, padded_length)`` pairs this rank runs in ``epoch``
        (default: the current one), found by planning the epoch before training, so that each
        can be warmed (compiled, captured in a CUDA graph) once before step 0. The padded length
        is the one the collator builds (pad_to_multiple_of, length_buckets); in packed mode, the
        padded total of the micro-batch's one row."""
        epoch = self._epoch if epoch is None else _args.integer("epoch", epoch, 0)
        self._topology()
        capacity = self.steps_per_epoch * self._native.get_int(_options.BY_NAME["grad_accum"].key)
        with self._watched():
            return self._native.shapes(epoch, capacity)

    def shape_vocabulary(self):
        """The run's shape vocabulary: the sorted ``(batch_size, padded_length)`` pairs that
        every micro-batch of every rank in every epoch has when ``max_shapes`` is set, known
        before step 0 (the same on every rank), so that each can be warmed (brs.warmup),
        compiled or captured once; None when max_shapes is 0 (any shape). In packed mode a
        micro-batch is one row and its shapes are ``(1, padded row total)``, the longest the
        cap's (max_tokens is needed). ValueError with the library's message when no vocabulary
        of max_shapes shapes plans every step, with images, and in packed mode without
        max_tokens."""
        self._topology()
        try:
            with self._watched():
                return self._native.shape_vocabulary()
        except BrsError as exc:  # BRS_ERR_UNSUPPORTED: a combination the caller must change
            raise _value_error(exc) from None

    def padded_length(self, batch_size, longest):
        """The padded length the plan gives a micro-batch of ``batch_size`` samples whose
        longest has ``longest`` tokens: ``longest`` rounded up to pad_to_multiple_of and to the
        smallest length bucket that holds it, then, with max_shapes, to the shortest vocabulary
        length of that batch size that holds it (MicroBatch.padded_length of the plan). In
        packed mode ``longest`` is the row's total and the row's padded total is returned.
        ValueError when no bucket or vocabulary shape holds it."""
        return self.padding_rule().padded_length(batch_size, longest)

    def padding_rule(self):
        """A small picklable object whose ``padded_length(batch_size, longest)`` is this
        sampler's (see padded_length): what brs.PadToPlan carries into DataLoader workers."""
        return _padding.PaddingRule(self.pad_to_multiple_of, self.length_buckets,
                                    self.shape_vocabulary(), packed=self.packed)

    def _watched(self):
        """The elapsed-time line around a call that may plan for seconds (brs/_elapsed.py)."""
        return _elapsed.shown(self._planning_what, getattr(self, "_progress", None))

    def _planning_what(self):
        if not self.max_shapes:
            return "planning"
        search = (f", max_shapes_search={self.max_shapes_search}"
                  if self.was_given("max_shapes_search") else "")
        return f"choosing the shape vocabulary (max_shapes={self.max_shapes}{search})"

    def _set(self, option, value):
        try:
            self._native.set(option, value)
        except ValueError as exc:
            if _options.keyword(option) == option.name:
                raise
            # The library's message names its option; say which keyword that is.
            renamed = ValueError(f"{_options.keyword(option)} (the library's {option.name}): {exc}")
            renamed.status = getattr(exc, "status", None)
            raise renamed from None

    # -- topology ---------------------------------------------------------------------------

    def _topology(self):
        """(dp_size, rank): explicit arguments first, then the job's; applied to the handle."""
        if self._frozen is not None:
            return self._frozen
        # With cp_size > 1 the rank is the global one (dp index x cp_size + cp index).
        dp_size, rank = _context_parallel.topology(self._given.get("dp_size"),
                                                   self._given.get("rank"),
                                                   self._given.get("cp_size", 1))
        self._apply_topology(dp_size, rank)
        return dp_size, rank

    def _apply_topology(self, dp_size, rank):
        self._set(_options.BY_NAME["dp_size"], dp_size)
        self._set(_options.BY_NAME["rank"], rank // self._given.get("cp_size", 1))

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
            self._check_cap(epoch)
            self._epoch = epoch
            self._step = self._micro = 0
            self._resume_pending = False

    def _check_cap(self, epoch):
        """Raise ValueError, naming the max_tokens that works, when some step of ``epoch``
        cannot keep max_tokens: before the first micro-batch, not in the middle of the epoch.
        One pass over the epoch's lengths, so only where a cap is set."""
        if self._native.get_int(_options.BY_NAME["max_tokens"].key) != 0:
            self._native.check_epoch(epoch)

    def check_epochs(self, epochs):
        """Check, before the first step, that max_tokens plans every step of epochs 0 ..
        ``epochs``-1: the sampler checks each epoch only when it starts, so a cap that epoch 0
        keeps may still fail a later epoch's shuffle, after hours of training.

        Raises ValueError naming the least max_tokens that works for the whole run and each
        failing epoch's. Returns that least cap; None without a cap (every step plans) and in
        packed mode, where every step of every epoch is planned instead (slower: a packed cap
        is bin packing, which the library's one-pass check does not cover). With images and
        max_encoder_tokens, every step is planned too. One pass over the lengths per epoch
        otherwise. The integrations call it where they know the epoch count.
        """
        epochs = _args.integer("epochs", epochs, 1)
        # The images' cap, like a packed one, is settled only by planning every step.
        encoder_capped = bool(self.max_encoder_tokens) and self.was_given("encoder_loads")
        if not self.max_tokens and not encoder_capped:
            return None
        self._topology()
        with self._watched():
            return self._check_epochs(epochs, encoder_capped)

    def _check_epochs(self, epochs, encoder_capped):
        least = None
        if self.max_tokens:
            least = _run_check.check(self, epochs, self._native.epoch_feasibility,
                                     self._handle_planning)
        if encoder_capped:
            _run_check.plan_every_step(self, epochs, self._handle_planning, "max_encoder_tokens")
        return least

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
    def stream_fingerprint(self):
        """16 hex digits; equal on two samplers that draw the same samples in the same order,
        however each step is split among ranks and micro-steps (dp_size, per_device_batch_size,
        grad_accum, sync): what a resume on another number of ranks compares."""
        self._topology()
        return self._native.stream_fingerprint()

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
        with self._watched():
            plan.compute(self._native.handle, epoch, step)
        return plan.snapshot(packed=self.packed,
                             context_parallel=self.context_parallel)

    def describe(self, micro_batches, step=0, epoch=None):
        """The Plan of micro-batches made elsewhere (``micro_batches[rank][micro]``, dataset
        indices, e.g. transformers' batch_rebalance's), described with this sampler's cost model,
        padding and sync model as its own plans are (brs_plan_load)."""
        step = _args.integer("step", step, 0)
        epoch = self._epoch if epoch is None else _args.integer("epoch", epoch, 0)
        plan = NativePlan()
        plan.load(self._native.handle, micro_batches, epoch, step)
        return plan.snapshot(packed=self.packed)

    # -- the cost model in force (brs/_cost_switch.py) --------------------------------------

    @property
    def cost_model(self):
        """The brs.CostModel the sampler plans with: alpha, intercept and the encoder part's
        numbers as the library stores them, with the source and evidence of the model given (or
        switched to), if any."""
        return self._costs.cost_model(self)

    @property
    def measurements(self):
        """A JSON-able summary an online calibration keeps here (None without one)."""
        return self._costs.measurements

    @measurements.setter
    def measurements(self, value):
        self._costs.measurements = value

    def switch_cost_model(self, model, since=None):
        """Plan with ``model``'s alpha, intercept, encoder_weight, encoder_alpha and
        encoder_intercept (the caps stay) from position ``since`` (epoch, step) on; returns it.
        Default and earliest: the first step not yet planned.

        The steps a DataLoader has already drawn (it prefetches) keep the previous model, and
        the state_dict records where the switch lies, so a resume replans both sides alike.
        """
        model = _cost_model.CostModel.coerce(model)
        earliest, previous = self.first_unplanned(), self._cost_values()
        since = self._costs.start(since, earliest)
        self._set_cost_values(model)
        self._costs.switched(model, since, previous)
        return since

    def first_unplanned(self):
        """(epoch, step) of the first step this sampler has not planned yet: where a switch of
        cost model (switch_cost_model) can take over at the earliest."""
        # The iterator plans step s when it yields s's first micro-batch: with micro > 0 the
        # step at the position is planned already. An epoch's end is the next epoch's start.
        step = self._step + (self._micro > 0)
        if step >= self.steps_per_epoch:
            return self._epoch + 1, 0
        return self._epoch, step

    def _cost_values(self):
        """{name: value} of the options a switch of cost model changes."""
        return {name: self._given.get(name, getattr(self, name)) for name in SWITCHED}

    def _set_cost_values(self, model):
        for name in SWITCHED:
            option = _options.BY_NAME[name]
            value = option.to_native(getattr(model, name), name)
            self._set(option, value)
            self._given[name] = self._native.get(option)  # kept by pickling and with_options

    def _handle_planning(self, epoch, step):
        """The library handle that plans ``step`` of ``epoch``: before the latest switch of cost
        model, a twin's holding the previous one."""
        if not self._costs.before_switch(epoch, step):
            return self._native.handle
        return self._costs.twin(self, self._freeze())._native.handle

    def _restore_cost(self, given, saved):
        for name in SWITCHED:
            option = _options.BY_NAME[name]
            self._set(option, given.get(name, option.default))
        self._given = given
        self._costs.restore(saved)

    def cost_state(self):
        """The cost model in force, where the latest switch took over and the measurements
        behind it (online calibration), as state_dict saves them; load_cost_state restores them.
        What a framework's checkpoint keeps when it saves no sampler position."""
        return self._costs.state(self)

    def load_cost_state(self, state):
        """Adopt the cost model of a state (state_dict's or cost_state's) saved under online
        calibration (it carries measurements); a state without them keeps this sampler's
        model, which the fingerprint check then compares."""
        parsed = self._costs.parse(state)
        if parsed is None:
            return
        model, switch = parsed
        self._set_cost_values(model)
        self._costs.adopt(model, switch, state["measurements"])

    # -- transformers' BatchRebalanceSampler's constructor and names (brs/_upstream.py) -------

    from_upstream_args = classmethod(_upstream.from_upstream_args)
    effective_batch_size = property(_upstream.effective_batch_size)
    num_global_batches = property(_upstream.num_global_batches)
    has_tail = property(_upstream.has_tail)
    num_full_batches = property(_upstream.num_full_batches)
    remainder = property(_upstream.remainder)

    # Lightning's set_epoch path to a bare sampler (brs/recreation.py).
    sampler = property(recreation.EpochSetter, doc="An object whose ``set_epoch`` sets this "
                       "sampler's epoch: where Lightning's fit loop calls it on a bare sampler.")

    # -- iteration --------------------------------------------------------------------------

    def __iter__(self):
        return self._iterate()

    def _iterate(self):
        # A generator: nothing below runs before the first next(), which is "the first
        # iteration" of the contract (a DataLoader may call iter() before it pulls a batch).
        dp_size, rank = self._freeze()
        self._check_ranks_once()
        self._report_drop_once()
        epoch, steps, grad_accum = self._epoch, self.steps_per_epoch, self.grad_accum
        context_parallel = self.context_parallel
        step, micro = (self._step, self._micro) if self._resume_pending else (0, 0)
        self._step, self._micro = step, micro
        plan = NativePlan()
        while step < steps:
            with self._watched():
                plan.compute(self._handle_planning(epoch, step), epoch, step)
            for m in range(micro, grad_accum):
                batch = (_context_parallel.batch(plan.handle, rank, m) if context_parallel
                         else plan.indices(rank, m))
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

    def _report_drop_once(self):
        # drop_last=True is the library's default: say once what it costs, never each epoch.
        if self._drop_reported or not self.drop_last:
            return
        self._drop_reported = True
        if self.remainder and self.rank == 0:
            logger.warning(
                "BatchRebalanceSampler: drop_last=True drops %d of %d samples each epoch (the "
                "incomplete last step; other samples each epoch as the shuffle changes); pass "
                "drop_last=False to train them in a short last step", self.remainder,
                self._native.lengths.count)

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
                "fingerprint": self.fingerprint, "stream_fingerprint": self.stream_fingerprint,
                "options": self._shared_options(),
                "version": STATE_VERSION, **self.split, **self.cost_state()}

    @property
    def split(self):
        """How the global batch is split: {"dp_size", "per_device_batch_size", "grad_accum"}.
        state_dict records it, so that a state saved with another split of the same global batch
        is recognised (accepts_other_split)."""
        return _elastic.split_of(self)

    def accepts_other_split(self, state):
        """True when ``state`` (state_dict's form) is this sampler's sample stream saved with
        another split of the same global batch, at an optimizer-step boundary: load_state_dict
        resumes it at the same step (the change is logged on the "brs" logger).

        False when it is another stream, or records no stream fingerprint (saved before libbrs
        1.3: only the same split resumes it); ValueError when it is the same stream but cannot
        resume here (another global batch, a position inside a step), saying what to change."""
        return _elastic.accepts(self, state)

    def _shared_options(self):
        """{option name: value} of every option of the library that the ranks share."""
        self._topology()
        return {option.name: self._native.get(option) for option in _SHARED}

    def load_state_dict(self, state):
        """Resume: the next iteration starts at the saved position of the saved epoch.

        A state saved on another dp_size (at an optimizer-step boundary, with the same global
        batch per_device_batch_size x grad_accum x dp_size) resumes at the same step; the
        change is logged on the "brs" logger. A state without "stream_fingerprint" (saved
        before libbrs 1.3) resumes only with the same split.
        """
        kept = (dict(self._given), self._costs.saved())
        try:
            if isinstance(state, dict):
                self.load_cost_state(state)  # first: the saved fingerprint covers its model
            epoch, step, micro = self._parse_state(state)
        except (TypeError, ValueError):  # a refused state leaves the sampler as it was
            self._restore_cost(*kept)
            raise
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
        if state["fingerprint"] != self.fingerprint and not self.accepts_other_split(state):
            self._check_saved_options(state.get("options", {}), state["fingerprint"])
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

    def _check_saved_options(self, saved, state_fingerprint):
        """Name the options that differ; a state without "options" has only its fingerprint."""
        if not isinstance(saved, dict):
            raise TypeError(f"state['options'] must be a dict; got {type(saved).__name__}")
        ours = self._shared_options()
        differing = [name for name in saved if name in ours and saved[name] != ours[name]]
        if differing:
            def show(values):
                return ", ".join(f"{_options.keyword(_options.BY_NAME[name])}={values[name]!r}"
                                 for name in differing)

            raise ValueError(f"state was saved by a sampler with {show(saved)} (fingerprint "
                             f"{state_fingerprint}), but this one has {show(ours)} (fingerprint "
                             f"{self.fingerprint}): resume with the same options")

    # -- pickling: the handle is rebuilt from the options that were set ----------------------

    def __getstate__(self):
        position = (self._epoch, self._step, self._micro, self._resume_pending)
        model, switch, measurements = self._costs.saved()
        return {"lengths": self._native.lengths.owner, "given": self._given,
                "position": position, "frozen": self._frozen, "provenance": model,
                "cost_switch": switch, "measurements": measurements}

    def __setstate__(self, state):
        self._given = dict(state["given"])
        self._start(state["lengths"], frozen=state["frozen"])
        self._epoch, self._step, self._micro, self._resume_pending = state["position"]
        self._costs.restore((state.get("provenance"), state.get("cost_switch"),
                             state.get("measurements")))

    def __repr__(self):
        dp = self._frozen[0] if self._frozen else self._given.get("dp_size")
        return (f"BatchRebalanceSampler(n={self._native.lengths.count}, "
                f"per_device_batch_size={self.per_device_batch_size}, "
                f"grad_accum={self.grad_accum}, dp_size={dp}, seed={self.seed}, "
                f"epoch={self._epoch})")


def _value_error(exc):
    error = ValueError(str(exc))
    error.status = getattr(exc, "status", None)
    return error


def _option_attribute(option):
    def read(self):
        return self._native.get(option)
    return property(read, doc=f"{option.help} (the value the library stores)")


def _options_doc():
    lines = ["", "    Options, from the library's table (None: the library's default):", ""]
    for option in _options.TABLE:
        default = option.default_value
        lines.append(f"    ``{_options.keyword(option)}``: {option.help} (default: the library's, "
                     f"{default!r})")
    return "\n".join(lines) + "\n"


# One attribute per option, read from the handle: a new option of the library is readable with
# no edit here. dp_size and rank are the class's own properties (they may come from the job).
for _option in _options.TABLE:
    if _option.name not in _TOPOLOGY:
        setattr(BatchRebalanceSampler, _options.keyword(_option), _option_attribute(_option))
BatchRebalanceSampler.__doc__ += _options_doc()
del _option


def _constructor_signature():
    """lengths, then every option of the library's table by its keyword (None: the library's
    default; per_device_batch_size required), then the sampler's own keywords (_OWN)."""
    keyword_only = inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter("lengths", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for word in [_options.keyword(option) for option in _options.TABLE] + list(_OWN):
        default = inspect.Parameter.empty if word in _REQUIRED else None
        parameters.append(inspect.Parameter(word, keyword_only, default=default))
    return inspect.Signature(parameters)


# The sampler's keywords that are no option of the table: the buckets and images (kept with the
# options), the cost model (which fills some in), the run's length (for max_shapes="auto") and
# whether a slow plan shows its elapsed time.
_OWN = (_BUCKETS, "cost_model", _IMAGES, "run_steps", "progress")
_REQUIRED = ("per_device_batch_size",)
_SIGNATURE = _constructor_signature()
# inspect.signature and help() read it: the constructor's keywords, not the catch-all of
# __init__ and __new__.
BatchRebalanceSampler.__signature__ = _SIGNATURE
BatchRebalanceSampler.__init__.__signature__ = inspect.Signature(
    [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    + list(_SIGNATURE.parameters.values()))
# What Lightning's re-creation wraps (brs/recreation.py), which does not import this module.
recreation.Recreatable.register(BatchRebalanceSampler)
