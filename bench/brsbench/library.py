"""The libbrs calls the benchmark scores with: option keys by name, a sampler over a dataset's
lengths, and plans made elsewhere loaded back (brs_plan_load) so that the library's one cost model
describes every sampler's micro-batches. Nothing here restates a cost, a sync time or a bound."""

import ctypes


class Library:
    def __init__(self):
        from brs import native as n

        self.n, self.lib = n, n.lib
        self.NativePlan, self.NativeSampler = n.NativePlan, n.NativeSampler
        self.as_uint32 = n.as_uint32
        self._check_plan = n.check_plan
        self._keys = {}

    def key(self, name: str) -> int:
        if name not in self._keys:
            out = ctypes.c_int32()
            if self.lib.brs_option_find(ctypes.byref(out), name.encode()) != self.n.OK:
                raise RuntimeError(f"libbrs has no option {name!r}")
            self._keys[name] = out.value
        return self._keys[name]

    def value(self, name: str, label: str) -> int:
        """The integer value of an enum-like option whose library name is `label`."""
        out = ctypes.c_int64()
        if self.lib.brs_option_value_find(ctypes.byref(out), self.key(name),
                                          label.encode()) == self.n.OK:
            return out.value
        raise RuntimeError(f"libbrs option {name} has no value {label!r}")

    def sampler(self, lengths, options: dict):
        s = self.NativeSampler(self.as_uint32(lengths))
        for name, v in options.items():
            s.set_int(self.key(name), v)
        return s

    def config(self, options: dict):
        """A configuration handle (a sampler without lengths) for brs_plan_compute_batch, with
        the integer ``options`` set and every other option the library's default."""
        config = self.NativeSampler(None)
        for name, v in options.items():
            config.set_int(self.key(name), v)
        return config

    def load(self, plan, sampler, rank_mbs, step: int) -> None:
        """Micro-batches rank_mbs[rank][micro] (dataset indices) into `plan`, rank-major."""
        flat = [i for rank in rank_mbs for mb in rank for i in mb]
        counts = [len(mb) for rank in rank_mbs for mb in rank]
        idx = (ctypes.c_uint64 * len(flat))(*flat)
        cnt = (ctypes.c_uint64 * len(counts))(*counts)
        status = self.lib.brs_plan_load(plan.handle, sampler.handle, idx, cnt, len(counts), 0, step)
        if status != self.n.OK:
            self._check_plan(status, plan.handle)


_shared = None


def shared() -> Library:
    global _shared
    if _shared is None:
        _shared = Library()
    return _shared
