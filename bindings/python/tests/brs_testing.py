"""Helpers shared by the brs (ctypes) tests and the scripts they start in child processes."""

import contextlib
import datetime
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import tempfile
import traceback

TESTS = pathlib.Path(__file__).resolve().parent
PACKAGE_ROOT = TESTS.parent  # bindings/python: what PYTHONPATH must hold
REPO = PACKAGE_ROOT.parent.parent
DATA = REPO / "data"
VECTORS = REPO / "tests" / "vectors"


def read_lengths(name, limit=None):
    values = [int(line) for line in (DATA / name).read_text().split()]
    return values[:limit] if limit else values


def random_lengths(n, seed, low=1, high=512):
    rng = random.Random(seed)  # a private generator: the tests touch no global RNG either
    return [rng.randint(low, high) for _ in range(n)]


def all_ranks(make, dp_size):
    """One sampler per simulated rank (make(rank) builds it) and each rank's epoch stream."""
    samplers = [make(rank) for rank in range(dp_size)]
    return samplers, [list(s) for s in samplers]


def child_env(**extra):
    """The environment a child process needs to import brs (and these helpers) as this one does."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), str(TESTS),
                                                      env.get("PYTHONPATH")]))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra)
    return env


def run_python(args, timeout=120, **env):
    return subprocess.run([sys.executable, *args], env=child_env(**env), capture_output=True,
                          text=True, timeout=timeout, cwd=str(REPO))


# -- torchrun: the launching side ---------------------------------------------------------------

def torchrun(script, *args, nproc=2, timeout=240, env=None, ranks_stderr=False):
    """Runs ``script`` under torchrun with ``nproc`` processes; fails the test with every rank's
    exit code and the tail of its own stderr when the run fails or hangs. Returns torchrun's
    output, or with ``ranks_stderr`` every rank's stderr, rank by rank (what the ranks logged).

    Each rank's output goes to its own log file (torchrun --redirects), so a rank that dies shows
    its own traceback or abort message instead of an interleaved console. The launcher gets its
    own session, so a hang is ended by killing the whole process group: no rank outlives the test.
    """
    with tempfile.TemporaryDirectory(prefix="brs-torchrun-") as logs:
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   f"--nproc_per_node={nproc}", f"--log-dir={logs}", "--redirects=3",
                   str(script), *map(str, args)]
        process = subprocess.Popen(command, env=env or child_env(), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            _fail(script, args, f"hung: no result within {timeout}s", output, logs, nproc,
                  unlisted="killed at the timeout")
        if process.returncode != 0:
            _fail(script, args, f"failed (torchrun exit code {process.returncode})", output,
                  logs, nproc)
        if ranks_stderr:
            return "\n".join(rank_logs(logs, nproc, tail=None).values())
        return output


def rank_exit_codes(torchrun_output, nproc, unlisted=0):
    """{rank: exit code} from torchrun's failure summary; ranks it does not list exited 0 (or,
    after a hang, when torchrun printed no summary: ``unlisted``)."""
    codes = dict.fromkeys(range(nproc), unlisted)
    for rank, code in re.findall(r"rank\s*:\s*(\d+).*?\n\s*exitcode\s*:\s*(-?\d+)",
                                 torchrun_output):
        codes[int(rank)] = int(code)
    return codes


def rank_logs(log_dir, nproc, stream="stderr", tail=4000):
    """{rank: the last ``tail`` characters of that rank's ``stream``} from a --log-dir."""
    found = {}
    for rank in range(nproc):
        files = sorted(pathlib.Path(log_dir).glob(f"*/attempt_*/{rank}/{stream}.log"))
        text = files[-1].read_text(errors="replace") if files else "(no log)"
        found[rank] = text[-tail:] if tail else text
    return found


def _fail(script, args, what, output, logs, nproc, unlisted=0):
    import pytest

    codes = rank_exit_codes(output, nproc, unlisted)
    stderr = rank_logs(logs, nproc)
    ranks = "\n".join(f"--- rank {rank}: exit code {codes[rank]}; its stderr:\n{stderr[rank]}"
                      for rank in range(nproc))
    command = " ".join([pathlib.Path(script).name, *map(str, args)])
    pytest.fail(f"torchrun {command} {what}\n"
                f"{ranks}\n--- torchrun:\n{output[-4000:]}", pytrace=False)


# -- torchrun: the rank side --------------------------------------------------------------------

GROUP_TIMEOUT_S = 120  # every collective of a test job; far above what one needs, far below hung
CLOSE_TIMEOUT_S = 10  # the closing barrier after a failure: the other ranks may never reach it


@contextlib.contextmanager
def process_group(backend="gloo"):
    """init_process_group with a timeout, and close_process_group on the way out, also when the
    body raises (so a failing rank neither aborts at exit nor waits forever)."""
    import torch.distributed as dist

    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=GROUP_TIMEOUT_S))
    failed = True
    try:
        yield dist
        failed = False
    finally:
        close_process_group(failed)


def close_process_group(failed=False):
    """Barrier, then destroy the default group, if one is up.

    Left to interpreter shutdown, gloo's threads are sometimes destroyed while joinable and the
    process aborts ("terminate called without an active exception") after its work is done; the
    barrier keeps a rank from tearing down while another still talks to it.

    After a failure the other ranks may never reach the barrier (they wait in another
    collective), so its wait is bounded by CLOSE_TIMEOUT_S. A barrier left pending would make
    destroy_process_group wait for the whole group timeout, so a rank whose closing barrier
    timed out prints its traceback and leaves at once with exit code 1 (os._exit skips the
    gloo destructors that would abort); torchrun then stops the other ranks.
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return
    timeout = datetime.timedelta(seconds=CLOSE_TIMEOUT_S if failed else GROUP_TIMEOUT_S)
    try:
        dist.barrier(async_op=True).wait(timeout)
    except Exception:  # noqa: BLE001  (a failed rank's own error is the one to report)
        if not failed:
            raise
        traceback.print_exc()
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(1)
    dist.destroy_process_group()


def leave_after_teardown():
    """Ends a torchrun script whose group is closed and whose results are written: flushes the
    standard streams and exits 0 without interpreter finalisation. gloo's worker threads can
    still release tensors there, after destroy_process_group, and abort a rank that has done
    all its work ("terminate called without an active exception", SIGABRT); a rank that fails
    never gets here, so its traceback and exit code still reach torchrun."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@contextlib.contextmanager
def closing_process_group():
    """For scripts whose group a framework (accelerate, the Trainer) creates: closes it on exit."""
    failed = True
    try:
        yield
        failed = False
    finally:
        close_process_group(failed)


# -- bad-input cases: docs/errors.md is generated from what the tests record -----------------------

ERROR_LOG_ENV = "BRS_ERROR_LOG"  # a JSON-lines file; scripts/gen_errors_md.py sets it


def record_error(layer, call, bad_input, outcome, message):
    """Appends one case to $BRS_ERROR_LOG (when set): the table of docs/errors.md."""
    path = os.environ.get(ERROR_LOG_ENV)
    if path:
        import json

        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"layer": layer, "call": call, "input": bad_input,
                                  "outcome": outcome, "message": message}) + "\n")


def expect_error(call, bad_input, exception, match, function, *args, layer="Python", **kwargs):
    """Runs ``function(*args, **kwargs)``, asserts it raises ``exception`` whose message matches
    the regular expression ``match``, records the case and returns the exception."""
    import pytest

    with pytest.raises(exception, match=match) as info:
        function(*args, **kwargs)
    record_error(layer, call, bad_input, type(info.value).__name__, str(info.value))
    return info.value
