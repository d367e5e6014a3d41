"""How the torchrun scripts of the Lightning, elastic and replica tests end, on every rank.

A rank that fails prints its traceback to stderr and exits 1 (torchrun then reports its exit
code and stderr); every rank, failed or not, meets the others at a barrier and destroys the
gloo group before the interpreter exits. The barrier is gloo's monitored one with a timeout: a
rank that died cannot hang the others, they are told which rank is missing instead.
"""

import datetime
import sys
import traceback

import torch.distributed as dist

BARRIER_TIMEOUT = datetime.timedelta(seconds=60)


def run(main):
    """Runs ``main()``, tears the process group down, exits 0 on success and 1 on failure."""
    failed = False
    try:
        main()
    except BaseException:  # noqa: BLE001 - report anything, then still tear down
        traceback.print_exc()
        failed = True
    finally:
        tear_down()
    sys.exit(1 if failed else 0)


def tear_down():
    if not (dist.is_available() and dist.is_initialized()):
        return
    try:
        dist.monitored_barrier(timeout=BARRIER_TIMEOUT)
    except RuntimeError as error:  # a rank died or hangs: say so, still destroy the group
        print(f"rank {dist.get_rank()}: barrier before teardown failed: {error}", file=sys.stderr)
    finally:
        dist.destroy_process_group()
