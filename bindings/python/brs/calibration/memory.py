"""Memory budgets and peak-memory probes for calibration and the benchmarks.

CUDA: torch.cuda.max_memory_allocated (the caching allocator's peak of live tensors, the
model's own included) of each shape, scaled to the allocator's reserved bytes by the overhead
measured over the shuffled rounds (PeakProbe.reserved_record): a cap must hold in the bytes
the pool takes from the device, not in the live ones. CPU: torch keeps no allocator
statistics there, so the peak comes from its profiler's memory events (cpu_peak_bytes): the
bytes torch allocated during the call above what was live before it, exact, and blind to
other processes and to the C allocator's cached pages, which a resident-set probe is not.
"""

import contextlib
import ctypes
import os
import re
import sys

_UNITS = {"": 1, "b": 1, "k": 2**10, "kib": 2**10, "kb": 10**3, "m": 2**20, "mib": 2**20,
          "mb": 10**6, "g": 2**30, "gib": 2**30, "gb": 10**9, "t": 2**40, "tib": 2**40,
          "tb": 10**12}
#: On CUDA the default budget is the free memory (plus what torch already holds) minus this
#: margin, for the CUDA context, fragmentation and what the optimizer allocates later.
CUDA_MARGIN_FRACTION = 0.05
CUDA_MARGIN_MIN = 2**30


def parse_bytes(value, name="memory_budget"):
    """Bytes from an int or a string such as '70GiB', '512MB', '1.5G' (K/M/G/T are binary)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number of bytes or a string like '70GiB'; got {value!r}")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", value)
        if not match or match.group(2).lower() not in _UNITS:
            raise ValueError(f"{name} {value!r} is not a size: write bytes or a number with "
                             "B, KiB, MiB, GiB, TiB (or KB, MB, GB, TB), e.g. '70GiB'")
        number = float(match.group(1)) * _UNITS[match.group(2).lower()]
    else:
        raise TypeError(f"{name} must be a number of bytes or a string like '70GiB'; got "
                        f"{type(value).__name__}")
    if not number > 0:
        raise ValueError(f"{name} must be > 0 bytes; got {value!r}")
    return int(number)


def default_budget(device):
    """(bytes, how it was chosen) for a device when the caller gave no budget."""
    import torch

    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        margin = max(CUDA_MARGIN_MIN, int(CUDA_MARGIN_FRACTION * total))
        held = torch.cuda.memory_reserved(device)
        return free + held - margin, (f"free CUDA memory + torch's reserved pool - "
                                      f"{margin / 2**30:.1f} GiB margin")
    # A CPU run shares its RAM with everything else on the machine, and a cap derived from it
    # would bind plans (brs compare, the sampler) that the user never limited: none by default.
    return None, "no cap on CPU unless memory_budget is given"


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_KEEP = ((_M_MMAP_THRESHOLD, 2**31 - 1), (_M_TRIM_THRESHOLD, 2**31 - 1), (_M_TOP_PAD, 2**28))
KEPT_FREED_MEMORY = ("glibc keeps freed memory (mallopt: mmap threshold and trim threshold "
                     "2 GiB, top pad 256 MiB)")


def keep_freed_memory():
    """On glibc, keep what torch frees on CPU for reuse; a description, or None elsewhere.

    By default glibc maps every block above 32 MiB afresh and unmaps it when freed, so each
    micro-batch page-faults its large activations (logits, attention scores) back in: on a
    2-layer GPT-2 (width 128, vocabulary 8192, one thread) forward and backward of 8 x 512
    tokens took 2.6x the time of 4 x 512, a growth no cost linear in the batch size follows.
    With the thresholds raised it took 2.1x, the time per token flat in the batch size within
    4% (docs/calibration.md, how accurate it is), and 38% less time. Process-wide and not
    undone: the heap keeps its peak. Training processes on CPU get the same with
    MALLOC_MMAP_THRESHOLD_=2147483647 MALLOC_TRIM_THRESHOLD_=2147483647 in the environment."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return KEPT_FREED_MEMORY if all(mallopt(k, v) == 1 for k, v in _KEEP) else None


class PeakProbe:
    """The peak memory of one call: measure(fn) -> (fn's result, bytes or None); on CUDA also
    the caching allocator's reserved bytes of every call watched, shape by shape."""

    def __init__(self, device):
        import torch

        self._torch, self.device = torch, device
        self.cuda = device.type == "cuda"
        self.method = ("torch.cuda.max_memory_allocated of each shape, times the reserved / "
                       "allocated overhead of the shuffled sequence of shapes" if self.cuda else
                       "torch profiler memory events (peak above the tensors live before)")
        self._shapes = {}  # shape -> [allocated, reserved] peaks over its watched calls

    def measure(self, fn):
        """Run fn() and return (its result, its peak bytes). On CPU the profiler slows fn():
        measure an untimed run."""
        if not self.cuda:
            result = []
            peak = cpu_peak_bytes(lambda: result.append(fn()))
            return result[0], peak
        result, (allocated, _) = self._peaks(fn)
        return result, allocated

    def pool_peak(self, fn):
        """fn()'s peak bytes as a job must fit them (untimed): on CUDA the caching allocator's
        reserved peak from an emptied pool, on CPU the profiler's peak above the tensors live
        before (add those: held_bytes)."""
        if not self.cuda:
            return cpu_peak_bytes(fn)
        cuda = self._torch.cuda
        cuda.synchronize(self.device)
        cuda.empty_cache()
        cuda.reset_peak_memory_stats(self.device)
        fn()
        cuda.synchronize(self.device)
        return int(cuda.max_memory_reserved(self.device))

    def watch(self, shape, fn):
        """fn()'s result; on CUDA its allocated and reserved peaks are kept for the shape."""
        if not self.cuda:
            return fn()
        result, peaks = self._peaks(fn)
        kept = self._shapes.setdefault(shape, [0, 0])
        kept[:] = [max(a, b) for a, b in zip(kept, peaks)]
        return result

    def watched(self, shape):
        """The row fields of a shape's watched calls (none on CPU)."""
        if shape not in self._shapes:
            return {}
        allocated, reserved = self._shapes[shape]
        return {"allocated_bytes": allocated, "reserved_bytes": reserved}

    def reserved_record(self):
        """How the CUDA fit turns allocated bytes into reserved ones (memory's record), or {}.

        The caching allocator keeps freed blocks for reuse; over shapes that change, blocks cut
        for one shape do not fit the next, and the pool grows beyond the live tensors. Training
        runs shapes in no particular order, so the overhead is measured over the calibration's
        shuffled rounds: the pool's peak over the live tensors' peak, at least 1."""
        if not self._shapes:
            return {}
        allocated = max(a for a, _ in self._shapes.values())
        reserved = max(r for _, r in self._shapes.values())
        return {"measure": "reserved", "sequence_allocated_bytes": allocated,
                "sequence_reserved_bytes": reserved,
                "reserved_over_allocated": max(1.0, reserved / allocated) if allocated else 1.0,
                "expandable_segments": expandable_segments()}

    def _peaks(self, fn):
        cuda = self._torch.cuda
        cuda.reset_peak_memory_stats(self.device)
        result = fn()
        cuda.synchronize(self.device)
        return result, (int(cuda.max_memory_allocated(self.device)),
                        int(cuda.max_memory_reserved(self.device)))


def expandable_segments():
    """Whether PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF) turns on expandable segments,
    which let the pool grow a segment in place instead of cutting new ones (less overhead)."""
    for name in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        for item in os.environ.get(name, "").split(","):
            key, _, value = item.partition(":")
            if key.strip() == "expandable_segments":
                return value.strip().lower() in ("true", "1")
    return False


def model_bytes(module, optimizer):
    """Bytes the model holds before any batch: its parameters, a gradient per trainable one,
    and with an optimizer two fp32 moments per trainable parameter (AdamW's state; an
    estimate for others)."""
    total = 0
    for p in module.parameters():
        total += p.numel() * p.element_size()
        if p.requires_grad:
            total += p.numel() * (p.element_size() + (8 if optimizer is not None else 0))
    return total


def cpu_peak_bytes(fn):
    """Run fn() and return the peak of the bytes torch allocated on CPU during it, above what
    was live when it started; None where the profiler gives no memory events.

    torch keeps no allocator statistics on CPU, but its profiler with profile_memory=True
    records every allocation and free as a "[memory]" event with its signed size: their
    running sum is exact to the byte and independent of other processes and of the C
    allocator's cached pages, which is what makes samplers comparable. The profiler slows
    fn(), so this is for untimed runs only."""
    from torch.profiler import ProfilerActivity, profile

    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    with _stderr_silenced():  # kineto prints a line on stderr at each start and stop
        prof.start()
    try:
        fn()
    finally:
        with _stderr_silenced():
            prof.stop()
    try:
        events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    except AttributeError:  # a torch without this interface: no figure rather than a wrong one
        return None
    live = peak = 0
    for event in sorted(events, key=lambda e: e.start_ns()):
        live += event.nbytes()
        peak = max(peak, live)
    return peak if events else None


@contextlib.contextmanager
def _stderr_silenced():
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def is_out_of_memory(exc):
    import torch

    if isinstance(exc, (MemoryError, torch.cuda.OutOfMemoryError)):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and ("out of memory" in text
                                              or "can't allocate memory" in text)


def free_cached(device):
    import gc

    import torch

    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
