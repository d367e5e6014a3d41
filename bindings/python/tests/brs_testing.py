"""Helpers shared by the brs (ctypes) tests and the scripts they start in child processes."""

import os
import pathlib
import random
import socket
import subprocess
import sys

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
    """The environment a child process needs to import brs the way this process does."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT),
                                                      env.get("PYTHONPATH")]))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra)
    return env


def run_python(args, timeout=120, **env):
    return subprocess.run([sys.executable, *args], env=child_env(**env), capture_output=True,
                          text=True, timeout=timeout, cwd=str(REPO))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
