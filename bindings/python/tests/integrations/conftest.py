"""Fixtures of the integration tests: the environment, and torchrun runs of the scripts here.

Run:  HF_HUB_OFFLINE=1 PYTHONPATH=bindings/python BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \
          python -m pytest bindings/python/tests/integrations
"""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # _support, for the tests as for the torchrun scripts
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

TORCHRUN_TIMEOUT_S = 240


@pytest.fixture(scope="session")
def torchrun():
    """``torchrun(script, *args, nproc=2)``: see run_torchrun."""
    return run_torchrun


def run_torchrun(script, *args, nproc=2):
    """Runs ``script`` under torchrun with ``nproc`` gloo processes; fails with its output."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc_per_node={nproc}", str(HERE / script), *map(str, args)]
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parents[1]),
                                                        os.environ.get("PYTHONPATH")])))
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=TORCHRUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"{script} {' '.join(map(str, args))} ran over {TORCHRUN_TIMEOUT_S}s:\n"
                    f"{(expired.stdout or b'')[-4000:]}\n{(expired.stderr or b'')[-4000:]}")
    if done.returncode != 0:
        pytest.fail(f"{script} {' '.join(map(str, args))} failed ({done.returncode}):\n"
                    f"{done.stdout[-4000:]}\n{done.stderr[-8000:]}")
    return done
