"""Owners of the two libbrs handles: each frees its handle when it is collected."""

import ctypes

from . import _context_parallel, _native as n
from ._errors import check_plan, check_sampler
from .plan import MicroBatch, Plan


class NativeSampler:
    """Owns one brs_sampler handle and the lengths buffer it borrows (None: a configuration
    alone, what brs_plan_compute_batch reads)."""

    def __init__(self, lengths):
        handle = n.SamplerPtr()
        check_sampler(n.lib.brs_sampler_new(ctypes.byref(handle)), handle)
        self.handle = handle
        self._free = n.lib.brs_sampler_free  # still reachable while the interpreter shuts down
        # BORROW: the buffer lives in self.lengths, which lives as long as the handle.
        self.lengths = lengths
        if lengths is not None:
            self._check(n.lib.brs_sampler_set_lengths(handle, lengths.pointer, lengths.count,
                                                      n.LENGTHS_BORROW))

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:
            self._free(handle)
            self.handle = None

    def _check(self, status):
        if status != n.OK:
            check_sampler(status, self.handle)

    def set_int(self, key, value):
        self._check(n.lib.brs_sampler_set_int(self.handle, key, value))

    def set_double(self, key, value):
        self._check(n.lib.brs_sampler_set_double(self.handle, key, value))

    def get_int(self, key):
        out = ctypes.c_int64()
        self._check(n.lib.brs_sampler_get_int(ctypes.byref(out), self.handle, key))
        return out.value

    def get_double(self, key):
        out = ctypes.c_double()
        self._check(n.lib.brs_sampler_get_double(ctypes.byref(out), self.handle, key))
        return out.value

    def set(self, option, value):
        """Store ``value`` (already in the option's C type) under an _options.Option."""
        (self.set_double if option.is_double else self.set_int)(option.key, value)

    def get(self, option):
        """The stored value of an _options.Option, in its Python form (bool, name, number)."""
        raw = (self.get_double if option.is_double else self.get_int)(option.key)
        return option.from_native(raw)

    def validate(self):
        self._check(n.lib.brs_sampler_validate(self.handle))

    def steps_per_epoch(self):
        out = ctypes.c_uint64()
        self._check(n.lib.brs_sampler_steps_per_epoch(ctypes.byref(out), self.handle))
        return out.value

    def fingerprint(self):
        out = ctypes.c_uint64()
        self._check(n.lib.brs_sampler_fingerprint(ctypes.byref(out), self.handle))
        return f"{out.value:016x}"

    def stream_fingerprint(self):
        out = ctypes.c_uint64()
        self._check(n.lib.brs_sampler_stream_fingerprint(ctypes.byref(out), self.handle))
        return f"{out.value:016x}"

    def set_length_buckets(self, buckets):
        """Store the length buckets (a sequence of ints; empty clears them)."""
        array = (ctypes.c_uint32 * len(buckets))(*buckets)
        self._check(n.lib.brs_sampler_set_length_buckets(self.handle, array, len(buckets)))

    def set_encoder_loads(self, table):
        """Store the images of every sample (an _encoder.ImageTable; None clears them)."""
        if table is None:
            self._check(n.lib.brs_sampler_set_encoder_loads(self.handle, None, None, 0))
        else:
            self._check(n.lib.brs_sampler_set_encoder_loads(self.handle, table.patches,
                                                            table.offsets, table.count))

    def encoder_load(self, index):
        """(images, patches) of sample ``index``."""
        images, patches = ctypes.c_uint64(), ctypes.c_uint64()
        self._check(n.lib.brs_sampler_encoder_load(ctypes.byref(images), ctypes.byref(patches),
                                                   self.handle, index))
        return images.value, patches.value

    def length_buckets(self):
        """The stored length buckets, a list (empty when none are set)."""
        values, count = ctypes.POINTER(ctypes.c_uint32)(), ctypes.c_size_t()
        self._check(n.lib.brs_sampler_get_length_buckets(ctypes.byref(values),
                                                         ctypes.byref(count), self.handle))
        return values[:count.value] if count.value else []

    def bucket_ladder(self, steps_per_doubling):
        """The library's default ladder of buckets for these lengths (0 steps: its default)."""
        count = ctypes.c_size_t()
        self._check(n.lib.brs_sampler_bucket_ladder(None, ctypes.byref(count), self.handle,
                                                    steps_per_doubling, 0))
        out = (ctypes.c_uint32 * count.value)()
        self._check(n.lib.brs_sampler_bucket_ladder(out, ctypes.byref(count), self.handle,
                                                    steps_per_doubling, count.value))
        return list(out)

    def shapes(self, epoch, capacity):
        """The distinct (batch size, padded length) pairs the rank runs in ``epoch``; capacity
        bounds their number (steps x grad_accum always does), so the epoch is planned once."""
        out, count = (ctypes.c_uint64 * (2 * capacity))(), ctypes.c_size_t()
        self._check(n.lib.brs_sampler_shapes(out, ctypes.byref(count), self.handle, epoch,
                                             capacity))
        return [(out[2 * i], out[2 * i + 1]) for i in range(count.value)]

    def shape_vocabulary(self):
        """The run's vocabulary as sorted (batch size, padded length) pairs; None when
        max_shapes is 0. Asked for its count first, then read with exactly that room."""
        count = ctypes.c_size_t()
        self._check(n.lib.brs_sampler_shape_vocabulary(None, ctypes.byref(count), self.handle,
                                                       ctypes.c_size_t(0)))
        if count.value == 0:
            return None
        out = (ctypes.c_uint64 * (2 * count.value))()
        self._check(n.lib.brs_sampler_shape_vocabulary(out, ctypes.byref(count), self.handle,
                                                       ctypes.c_size_t(count.value)))
        return [(out[2 * i], out[2 * i + 1]) for i in range(count.value)]

    def check_epoch(self, epoch):
        """(least max_tokens that plans every step of ``epoch``, most micro-batches a step
        needs); raises when max_tokens cannot plan the epoch. None in packed mode, whose cap
        only planning a step settles."""
        status, cap, needed = self.epoch_feasibility(epoch)
        if status == n.ERR_UNSUPPORTED:
            return None
        self._check(status)
        return cap, needed

    def epoch_feasibility(self, epoch):
        """(status, least max_tokens, most micro-batches a step needs) of ``epoch``, without
        raising for a cap the epoch cannot keep: a whole run's check names every epoch's cap.
        Other failures raise; ERR_UNSUPPORTED (packed mode) comes back as a status."""
        cap, needed = ctypes.c_uint64(), ctypes.c_uint64()
        status = n.lib.brs_sampler_check_epoch(ctypes.byref(cap), ctypes.byref(needed),
                                               self.handle, epoch)
        if status not in (n.OK, n.ERR_UNSUPPORTED, n.ERR_CAP_INFEASIBLE, n.ERR_SAMPLE_TOO_LONG):
            self._check(status)
        return status, cap.value, needed.value


class NativePlan:
    """Owns one brs_plan handle (reused across steps); frees it when collected."""

    def __init__(self):
        handle = n.PlanPtr()
        status = n.lib.brs_plan_new(ctypes.byref(handle))
        check_plan(status, handle)
        self.handle = handle
        self._free = n.lib.brs_plan_free  # still reachable while the interpreter shuts down
        self._indices = ctypes.POINTER(ctypes.c_uint64)()  # ctypes makes one type per pointee
        self._count = ctypes.c_size_t()
        self._out = (ctypes.byref(self._indices), ctypes.byref(self._count))

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:
            self._free(handle)
            self.handle = None

    def compute(self, sampler_handle, epoch, step):
        check_plan(n.lib.brs_plan_compute(self.handle, sampler_handle, epoch, step), self.handle)

    def compute_batch(self, config_handle, lengths, images=None):
        """Plans one step of ``lengths`` (a _lengths.Lengths) alone, with ``images`` (an
        _encoder.ImageTable) when not None; indices are positions."""
        if images is None:
            status = n.lib.brs_plan_compute_batch(self.handle, config_handle, lengths.pointer,
                                                  lengths.count)
        else:
            status = n.lib.brs_plan_compute_batch_images(self.handle, config_handle,
                                                         lengths.pointer, images.patches,
                                                         images.offsets, lengths.count)
        check_plan(status, self.handle)

    def load(self, sampler_handle, micro_batches, epoch, step):
        """Describes ``micro_batches[rank][micro]`` (dataset indices, made elsewhere: a peer
        sampler's) with the sampler's cost model, as brs_plan_load does."""
        flat = [i for rank in micro_batches for mb in rank for i in mb]
        counts = [len(mb) for rank in micro_batches for mb in rank]
        indices = (ctypes.c_uint64 * max(1, len(flat)))(*flat)
        sizes = (ctypes.c_uint64 * max(1, len(counts)))(*counts)
        check_plan(n.lib.brs_plan_load(self.handle, sampler_handle, indices, sizes, len(counts),
                                       epoch, step), self.handle)

    def indices(self, rank, micro):
        """A fresh list of the micro-batch's dataset indices (the hot path of iteration)."""
        status = n.plan_micro_batch_prepared(*self._out, self.handle, ctypes.c_int64(rank),
                                             ctypes.c_int64(micro))
        if status != n.OK:
            check_plan(status, self.handle)
        return self._indices[:self._count.value]

    def get_int(self, key):
        out = ctypes.c_int64()
        check_plan(n.lib.brs_plan_get_int(ctypes.byref(out), self.handle, key), self.handle)
        return out.value

    def get_double(self, key):
        out = ctypes.c_double()
        check_plan(n.lib.brs_plan_get_double(ctypes.byref(out), self.handle, key), self.handle)
        return out.value

    def micro_batch(self, rank, micro, packed=False):
        padded, real, cost = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_double()
        check_plan(n.lib.brs_plan_micro_batch_stats(ctypes.byref(padded), ctypes.byref(real),
                                                    ctypes.byref(cost), self.handle, rank, micro),
                   self.handle)
        patches, images, encoder_cost = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_double()
        check_plan(n.lib.brs_plan_micro_batch_encoder(ctypes.byref(patches), ctypes.byref(images),
                                                      ctypes.byref(encoder_cost), self.handle,
                                                      rank, micro),
                   self.handle)
        indices = self.indices(rank, micro)
        # Padded: bs rows of one length. Packed: one row of the padded total.
        length = padded.value if packed else padded.value // max(1, len(indices))
        return MicroBatch(indices, padded.value, real.value, len(indices), cost.value,
                          patches.value, images.value, encoder_cost.value, length)

    def snapshot(self, packed=False, context_parallel=False):
        """The computed step as a Plan; the Plan takes this handle over (do not reuse it).
        ``packed``: the sampler packs micro-batches (each one row; MicroBatch.padded_length).
        ``context_parallel``: micro_batches[r] for every global rank r of dp_size x cp_size,
        with the context-parallel fields (brs/_context_parallel.py)."""
        dp_size, grad_accum = self.get_int(n.PLAN_DP_SIZE), self.get_int(n.PLAN_GRAD_ACCUM)
        if context_parallel:
            world = _context_parallel.world_size(self.handle)
            return self._plan(lambda: [[_context_parallel.snapshot_micro_batch(self.handle, r, m)
                                        for m in range(grad_accum)] for r in range(world)])
        return self._plan(lambda: [[self.micro_batch(r, m, packed) for m in range(grad_accum)]
                                   for r in range(dp_size)])

    def _plan(self, reader):
        return Plan(
            epoch=self.get_int(n.PLAN_EPOCH),
            step=self.get_int(n.PLAN_STEP),
            num_samples=self.get_int(n.PLAN_NUM_SAMPLES),
            max_cost=self.get_double(n.PLAN_MAX_COST),
            lower_bound=self.get_double(n.PLAN_LOWER_BOUND),
            total_cost=self.get_double(n.PLAN_TOTAL_COST),
            micro_sync_time=self.get_double(n.PLAN_MICRO_SYNC_TIME),
            step_sync_time=self.get_double(n.PLAN_STEP_SYNC_TIME),
            time_lower_bound=self.get_double(n.PLAN_TIME_LOWER_BOUND),
            total_padded_tokens=self.get_int(n.PLAN_TOTAL_PADDED_TOKENS),
            total_real_tokens=self.get_int(n.PLAN_TOTAL_REAL_TOKENS),
            max_padded_tokens=self.get_int(n.PLAN_MAX_PADDED_TOKENS),
            total_encoder_tokens=self.get_int(n.PLAN_TOTAL_ENCODER_TOKENS),
            max_encoder_tokens=self.get_int(n.PLAN_MAX_ENCODER_TOKENS),
            encoder_cost=self.get_double(n.PLAN_ENCODER_COST),
            step_time=self.get_double(n.PLAN_STEP_TIME),
            useful_time=self.get_double(n.PLAN_USEFUL_TIME),
            padding_time=self.get_double(n.PLAN_PADDING_TIME),
            waiting_time=self.get_double(n.PLAN_WAITING_TIME),
            reader=reader,
        )
