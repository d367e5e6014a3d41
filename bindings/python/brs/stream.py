"""RebalancedStream: balanced micro-batches from a stream that has no epoch to plan.

A streaming dataset (``datasets`` in streaming mode, a torch IterableDataset, a generator of
rollouts) has no lengths up front. RebalancedStream reads it a window at a time: window_steps
whole global batches of B = per_device_batch_size x dp_size x grad_accum items. Within a
window it does what BatchRebalanceSampler does within an epoch: the library's keyed permutation
(keyed by (seed, window index)) shuffles the window, each global batch of it is split into
dp_size x grad_accum balanced micro-batches, and this rank yields its own micro-batches (lists
of items) for micro-step 0 .. grad_accum-1 of each step. A short last window follows the epoch
sampler's rule (docs/design.md): with drop_last=False its last step keeps the remaining items,
topped up to dp_size x grad_accum by repeating the window's order when fewer; with
drop_last=True the partial step is dropped.

Every rank reads the SAME stream, whole: do not shard it per rank (no
``datasets.distributed.split_dataset_by_node``, no per-worker split); the plan tells each rank
which items are its own, and every rank yields the same number of micro-batches. The stream must
give the same items in the same order on every pass and every rank, which ``state_dict()``
relies on too: a resume re-reads the stream and skips the windows already done (the window is
never pickled).

Where torch is installed it is a torch.utils.data.IterableDataset: ``DataLoader(stream,
batch_size=None, collate_fn=collate)`` hands each micro-batch (a list of items) to ``collate``.
With ``num_workers=W`` every worker reads the whole stream and plans every window, and worker w
yields the micro-batches w, w+W, w+2W, ... of this rank: the DataLoader takes one from each
worker in turn, so the loop sees exactly the order of ``num_workers=0`` (workers parallelise
the collation, not the reading). The stream must then be iterable in each worker (re-iterable,
and picklable under the spawn start method).
"""

import itertools

from . import _args, _options, cost_model as _cost_model, distributed
from ._encoder import image_table
from ._handles import NativePlan, NativeSampler
from ._lengths import as_uint32

try:
    # A torch IterableDataset where torch is installed, so that a DataLoader iterates it as a
    # stream (no len(), no sampler); a plain class without torch, which the package never needs.
    from torch.utils.data import IterableDataset as _StreamBase, get_worker_info
except ImportError:
    _StreamBase = object

    def get_worker_info():
        return None

STATE_VERSION = 1

#: drop_last's default here, deliberately the opposite of the library's (True, the epoch
#: sampler's): a stream's last items have no later pass to come round in, so the short last step
#: keeps them (docs/python.md, streams). Every other option left unset is the library's default.
DROP_LAST = False


class RebalancedStream(_StreamBase):
    """Iterate this rank's balanced micro-batches (lists of items) over ``iterable``.

    ``length(item)`` is the item's token count. Every option of BatchRebalanceSampler is a keyword
    here too, by the same name (the library's option table: ``grad_accum``, ``seed``,
    ``max_tokens``, ``packed``, ``alpha``, ``intercept``, ``strategy``, ``sync``, ...), as are
    ``cost_model`` (it supplies alpha, intercept, max_tokens and the encoder part's options
    not given) and ``length_buckets`` (a list); an option left unset takes the library's
    default, except ``drop_last``: DROP_LAST (False) here, since a stream's last items have no
    later pass to come round in.
    ``dp_size`` and ``rank`` default to the job's (accelerate, torch.distributed,
    RANK/WORLD_SIZE). ``stream.<keyword>`` reads an option back as the library holds it.

    ``state_dict()`` holds the position and ``fingerprint``; ``load_state_dict`` refuses a state
    of another configuration. Under a DataLoader with workers the stream in the main process
    does not move: pass ``state_dict(consumed=k)``, the micro-batches the loop has trained.
    """

    def __init__(self, iterable, *, length, per_device_batch_size, window_steps=8,
                 drop_last=DROP_LAST, cost_model=None, length_buckets=None, encoder_load=None,
                 run_steps=None, **options):
        if not callable(length):
            raise TypeError("length must be a callable item -> token count, e.g. "
                            "lambda example: len(example['input_ids'])")
        if encoder_load is not None and not callable(encoder_load):
            raise TypeError("encoder_load must be a callable item -> its images' patch counts "
                            "(a list, one int for one image, 0 for none), e.g. lambda example: "
                            "example['image_patches']")
        self.encoder_load = encoder_load
        if isinstance(iterable, (str, bytes)) or not hasattr(iterable, "__iter__"):
            raise TypeError(f"iterable must be an iterable of items; got {type(iterable).__name__}")
        self.iterable, self.length = iterable, length
        if run_steps is not None or options.get("max_shapes") == "auto":
            raise ValueError('max_shapes="auto" and run_steps price a run over a dataset whose '
                             'lengths are known before step 0 (BatchRebalanceSampler); a stream '
                             'plans window by window: give max_shapes a number')
        self.window_steps = _args.integer("window_steps", window_steps, 1)
        options.update(per_device_batch_size=per_device_batch_size, drop_last=drop_last)
        if cost_model is not None:  # fills in alpha, intercept and max_tokens not given here
            options["alpha"], options["intercept"], options["max_tokens"] = _cost_model.resolve(
                cost_model, options.get("alpha"), options.get("intercept"),
                options.get("max_tokens"))
            # ... and the encoder part's, likewise
            encoder = _cost_model.ENCODER_OPTIONS
            options.update(zip(encoder, _cost_model.resolve_encoder(
                cost_model, *(options.get(name) for name in encoder))))
        unknown = sorted(options.keys() - _options.BY_KEYWORD.keys())
        if unknown:
            raise TypeError(f"RebalancedStream() got unexpected keyword arguments {unknown}; its "
                            f"options are the sampler's: {sorted(_options.BY_KEYWORD)}")
        given = _options.given_options(options)
        self._dp_size, self._rank = (given.pop(name, None) for name in _TOPOLOGY)
        self._buckets = None if length_buckets is None else _buckets(length_buckets)
        # An option out of the library's bounds fails here, dp_size and rank given included.
        # What the library stores is kept (a double rounded to 1e-6), not the handle: the
        # stream pickles into its DataLoader workers.
        self._given = given
        probe = (1 if self._dp_size is None else self._dp_size,
                 0 if self._rank is None else self._rank)
        self._given = _stored(self._window_of([1], topology=probe), given)
        # Left unset, dp_size and rank are the job's, read when first needed: the stream may be
        # built before init_process_group, as the sampler may.
        self._frozen = None
        if self._dp_size is not None and self._rank is not None:
            self._topology()
        self._window = self._step = self._micro = 0  # the next micro-batch this rank yields
        # Where this pass's round-robin among DataLoader workers starts (a micro-batch count):
        # the loaded position, so that worker 0 yields the first micro-batch after a resume.
        self._anchor = 0

    def _topology(self):
        """(dp_size, rank): explicit arguments first, then the job's; fixed once read."""
        if self._frozen is None:
            self._frozen = distributed.topology(self._dp_size, self._rank)
        return self._frozen

    @property
    def dp_size(self):
        return self._topology()[0]

    @property
    def rank(self):
        return self._topology()[1]

    @property
    def global_batch_size(self):
        """B = per_device_batch_size x dp_size x grad_accum items per optimizer step."""
        return self.per_device_batch_size * self.dp_size * self.grad_accum

    @property
    def window_size(self):
        """Items read per window: window_steps whole global batches."""
        return self.window_steps * self.global_batch_size

    def _window_of(self, lengths, topology=None, images=None):
        """A library sampler over one window's lengths (and images, each item's patch counts):
        the window is its epoch."""
        native = NativeSampler(as_uint32(lengths))
        if images is not None:
            native.set_encoder_loads(image_table(images, len(lengths)))
        topology = dict(zip(_TOPOLOGY, topology or self._topology()))
        for name, value in {**self._given, **topology}.items():
            native.set(_options.BY_NAME[name], value)
        if self._buckets is not None:  # after pad_to_multiple_of, as the sampler sets them
            native.set_length_buckets(self._buckets)
        return native

    def _read(self, iterator):
        """The next window's items (fewer at the end of the stream; [] past it)."""
        return list(itertools.islice(iterator, self.window_size))

    def __iter__(self):
        return self._iterate()

    def _iterate(self):
        window, step, micro = self._window, self._step, self._micro
        worker, workers = _worker_share()
        anchor = self._anchor
        iterator = iter(self.iterable)
        # Resume: the windows before the saved one are read and skipped, never planned.
        for _ in itertools.islice(iterator, window * self.window_size):
            pass
        plan = NativePlan()
        while True:
            items = self._read(iterator)
            if not items:
                break
            native, steps = self._steps(items, window)
            for s in range(step, steps):
                first = self._micro_index(window, s, 0)  # of this rank's micro-batches
                mine = [m for m in range(micro, self.grad_accum)
                        if (first + m - anchor) % workers == worker]
                if mine:
                    plan.compute(native.handle, window, s)
                for m in range(micro, self.grad_accum):
                    batch = [items[i] for i in plan.indices(self.rank, m)] if m in mine else None
                    # Advance first: the position is the next micro-batch, even while suspended;
                    # past a window's last one it is the next window's first.
                    if m + 1 < self.grad_accum:
                        self._window, self._step, self._micro = window, s, m + 1
                    elif s + 1 < steps:
                        self._window, self._step, self._micro = window, s + 1, 0
                    else:
                        self._window, self._step, self._micro = window + 1, 0, 0
                    if batch is not None:
                        yield batch
                micro = 0
            window, step, micro = window + 1, 0, 0
            self._window, self._step, self._micro = window, 0, 0
            if len(items) < self.window_size:
                break
        self._window = self._step = self._micro = 0  # the next pass starts at the beginning
        self._anchor = 0

    def _steps(self, items, window):
        """(sampler of the window, steps in it): 0 steps for a short window drop_last empties."""
        lengths = [self.length(item) for item in items]
        images = None if self.encoder_load is None else [self.encoder_load(i) for i in items]
        native = self._window_of(lengths, images=images)
        if self.drop_last and len(items) < self.global_batch_size:
            return native, 0
        try:
            return native, native.steps_per_epoch()
        except ValueError as exc:
            raise ValueError(f"window {window} of the stream: {exc}") from None

    def _micro_index(self, window, step, micro):
        """This rank's micro-batch count before (window, step, micro): every window before the
        last holds window_steps whole steps, so a position and a count are the same thing."""
        return (window * self.window_steps + step) * self.grad_accum + micro

    @property
    def fingerprint(self):
        """16 hex digits of the configuration: the library's fingerprint of a window of
        window_size unit-length items (options, window size, planning algorithm's version)."""
        return self._window_of([1] * self.window_size).fingerprint()

    def state_dict(self, *, consumed=None):
        """The position of the next micro-batch this rank yields: window, step, micro-step.

        ``consumed``: the micro-batches of this pass the training loop has processed, for a
        DataLoader with workers (they iterate copies, so this object's own position stays put)
        or one that prefetches; the position is then computed from it.
        """
        window, step, micro = self._window, self._step, self._micro
        # Outside a worker the loader that resumes starts its round-robin at the position.
        in_worker = get_worker_info() is not None
        anchor = self._anchor if in_worker else self._micro_index(window, step, micro)
        if consumed is not None:
            consumed = _args.integer("consumed", consumed, 0)
            window, rest = divmod(consumed, self.window_steps * self.grad_accum)
            step, micro = divmod(rest, self.grad_accum)
            anchor = consumed  # a plain DataLoader restarts its round-robin at worker 0
        # A worker's own state (torchdata's StatefulDataLoader saves one per worker) keeps the
        # anchor of its pass, so that every worker resumes its own share of the round-robin.
        return {"window": window, "step": step, "micro": micro, "anchor": anchor,
                "options": self._options(), "fingerprint": self.fingerprint,
                "version": STATE_VERSION}

    def _options(self):
        """The configuration a state is saved with: every option the ranks share, the window
        and the buckets."""
        shared = {_options.keyword(option): self._value(option) for option in _SHARED}
        buckets = None if self._buckets is None else list(self._buckets)
        return {**shared, "window_steps": self.window_steps, "length_buckets": buckets}

    def _value(self, option):
        if option.name in _TOPOLOGY:
            return getattr(self, option.name)
        return option.from_native(self._given.get(option.name, option.default))

    def load_state_dict(self, state):
        """Resume at a saved position: the next iteration re-reads the stream from its start,
        skips the finished windows and continues inside the saved one."""
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise ValueError("load_state_dict: not a RebalancedStream state_dict of version "
                             f"{STATE_VERSION}")
        saved = state.get("options", {})
        differing = sorted(name for name, value in self._options().items()
                           if _comparable(name, saved.get(name)) != _comparable(name, value))
        if differing:
            raise ValueError(f"load_state_dict: the state was saved with other {differing} "
                             f"({ {name: saved.get(name) for name in differing} }); build the "
                             "stream with those to resume it")
        # The same options but another fingerprint: another planning algorithm (libbrs version).
        if "fingerprint" in state and state["fingerprint"] != self.fingerprint:
            raise ValueError(f"load_state_dict: the state was saved by a stream with fingerprint "
                             f"{state['fingerprint']}, but this one has {self.fingerprint}: "
                             "resume with the same options and the same libbrs version")
        self._window = _args.integer("window", state["window"], 0)
        self._step = _args.integer("step", state["step"], 0)
        self._micro = _args.integer("micro", state["micro"], 0)
        if self._micro >= self.grad_accum or self._step >= self.window_steps:
            raise ValueError(f"load_state_dict: step {self._step}, micro {self._micro} lie "
                             f"outside a window of {self.window_steps} steps x {self.grad_accum}")
        position = self._micro_index(self._window, self._step, self._micro)
        self._anchor = _args.integer("anchor", state.get("anchor", position), 0)

    def __repr__(self):
        return (f"RebalancedStream(per_device_batch_size={self.per_device_batch_size}, "
                f"dp_size={self.dp_size}, rank={self.rank}, grad_accum={self.grad_accum}, "
                f"window_steps={self.window_steps}, seed={self.seed})")


# Left unset, these come from the job, not from the library's defaults.
_TOPOLOGY = ("dp_size", "rank")
# The rank is the one option ranks of a job do not share.
_SHARED = tuple(option for option in _options.TABLE if _options.is_shared(option))


def _option_attribute(option):
    def read(self):
        return self._value(option)
    return property(read, doc=f"{option.help} (the value the library stores)")


# One attribute per option of the library's table, as the sampler has: a new option is readable
# with no edit here. dp_size and rank are the class's own properties (they may come from the job).
for _option in _options.TABLE:
    if _option.name not in _TOPOLOGY:
        setattr(RebalancedStream, _options.keyword(_option), _option_attribute(_option))
del _option


def _stored(native, given):
    """{name: value as the library stores it} of the options set on ``native``."""
    stored = {}
    for name in given:
        option = _options.BY_NAME[name]
        stored[name] = (native.get_double if option.is_double else native.get_int)(option.key)
    return stored


def _comparable(word, value):
    """A saved option's value as its C value, where a missing one (a state saved before the
    option existed, or None for no cap) is the library's default."""
    option = _options.BY_KEYWORD.get(word)
    if option is None or option.name in _TOPOLOGY:
        return value
    native = None
    if value is not None:
        try:
            native = _options.native_value(word, value)
        except (TypeError, ValueError):
            return value  # not an option value: it differs from every one
    return option.default if native is None else native


def _buckets(value):
    """``length_buckets=``: a list of ints; their order and range are the library's to check."""
    if isinstance(value, str):
        raise ValueError(f'length_buckets must be a list of lengths; got {value!r} (a stream has '
                         'no lengths up front to build "auto" from: pass a list, e.g. a '
                         "sampler's bucket_ladder() over a sample of the stream)")
    if not hasattr(value, "__iter__"):
        raise TypeError(f"length_buckets must be a list of lengths; got {type(value).__name__}")
    return tuple(_args.integer("length_buckets[]", bucket, 1) for bucket in value)


def _worker_share():
    """(this DataLoader worker's index, number of workers); (0, 1) outside a worker."""
    info = get_worker_info()
    return (0, 1) if info is None else (info.id, info.num_workers)
