"""How the timings were taken (clock, rounds, spread, the machine's load), as the cost model
records it, and the warning when the machine was busy."""

import os
import warnings


def load_average():
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):  # not on this platform: no figure rather than a wrong one
        return None


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def timing_info(clock, rounds, rows, load_before, load_after, extended):
    """The cost model's ``timing``: how the rows were timed, and whether the machine was busy
    (its load average above the CPUs, or the timed calls waiting for a core:
    timing.contended). ``rounds`` is what was asked; ``rounds`` in the record what was run."""
    spreads = sorted(r["spread"] for r in rows)
    loads = [x for x in (load_before, load_after) if x is not None]
    cpus = cpu_count()
    ran = max([r.get("repeats", rounds) for r in rows] + [rounds])
    info = {"clock": clock, "estimator": "min", "rounds": ran, "interleaved": True,
            "cpus": cpus, "load_average": [load_before, load_after],
            "busy": (bool(loads) and max(loads) > cpus) or ran > rounds,
            "median_spread": spreads[len(spreads) // 2]}
    if ran > rounds:
        info["rounds_asked"] = rounds
    waits = sorted(r["wall_over_thread"] for r in rows if r.get("wall_over_thread"))
    if waits:
        info["wall_over_thread"] = waits[len(waits) // 2]
    if extended:
        info["extended_batch_sizes"] = extended
    return info


def warn_if_busy(timing):
    if not timing["busy"]:
        return
    load = max([x for x in timing["load_average"] if x is not None] + [0.0])
    advice = ("the fastest of the interleaved repeats is kept, and the thread's CPU time is "
              "what was fitted" if timing["clock"] in ("thread_time", "cuda_events") else
              "the wall clock was fitted because torch runs on several threads: "
              "torch.set_num_threads(1) (CLI: --threads 1) times the thread's CPU time, which "
              "other processes cannot inflate")
    extended = (f"; the calls waited for a core ({timing['wall_over_thread']:.2f}x their CPU "
                f"time), so {timing['rounds']} rounds were timed instead of "
                f"{timing['rounds_asked']}" if "rounds_asked" in timing else "")
    warnings.warn(f"calibrate: the machine was busy (load average {load:.1f} on "
                  f"{timing['cpus']} CPUs; the median shape's repeats spread "
                  f"{timing['median_spread']:.0%}{extended}); {advice}", stacklevel=3)


#: The first run of a shape is worth a warning when its extra time exceeds this fraction of
#: the median warm micro-batch: over an epoch of mostly new shapes it is then a large share of
#: the time, which a per-micro-batch cost model cannot plan around.
FIRST_SHAPE_WARN_FRACTION = 0.25


def warn_if_first_shapes_cost(cost_model, device):
    rows = sorted(r["seconds"] for r in cost_model.timings)
    median = rows[len(rows) // 2] if rows else 0.0
    extra = cost_model.first_shape_seconds
    if not rows or extra <= FIRST_SHAPE_WARN_FRACTION * median:
        return
    backend = ("; on CUDA, another attention backend (attn_implementation) may build less per "
               "shape" if device.type == "cuda" else "")
    warnings.warn(f"calibrate: the first run of a new (batch size, padded length) took "
                  f"{extra * 1e3:.1f} ms more than its warm runs (median over the shapes), "
                  f"{extra / median:.0%} of the median warm micro-batch ({median * 1e3:.1f} ms); "
                  "training pays it once per distinct shape: fewer distinct shapes help (the "
                  f"sampler's length_buckets or pad_to_multiple_of){backend}", stacklevel=3)
