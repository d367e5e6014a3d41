"""How the timings were taken (clock, rounds, spread, the machine's load), as the cost model
records it, and the warning when the machine was busy."""

import os
import warnings


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:  # not on this platform: no figure rather than a wrong one
        return None


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def timing_info(clock, rounds, rows, load_before, load_after, extended):
    """The cost model's ``timing``: how the rows were timed, and whether the machine was busy."""
    spreads = sorted(r["spread"] for r in rows)
    loads = [x for x in (load_before, load_after) if x is not None]
    cpus = cpu_count()
    info = {"clock": clock, "estimator": "min", "rounds": rounds, "interleaved": True,
            "cpus": cpus, "load_average": [load_before, load_after],
            "busy": bool(loads) and max(loads) > cpus,
            "median_spread": spreads[len(spreads) // 2]}
    if extended:
        info["extended_batch_sizes"] = extended
    return info


def warn_if_busy(timing):
    if not timing["busy"]:
        return
    load = max(x for x in timing["load_average"] if x is not None)
    advice = ("the fastest of the interleaved repeats is kept, and the thread's CPU time is "
              "what was fitted" if timing["clock"] in ("thread_time", "cuda_events") else
              "the wall clock was fitted because torch runs on several threads: "
              "torch.set_num_threads(1) (CLI: --threads 1) times the thread's CPU time, which "
              "other processes cannot inflate")
    warnings.warn(f"calibrate: the machine was busy (load average {load:.1f} on "
                  f"{timing['cpus']} CPUs; the median shape's repeats spread "
                  f"{timing['median_spread']:.0%}); {advice}", stacklevel=3)
