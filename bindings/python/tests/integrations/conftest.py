"""Fixtures of the integration tests: the environment, and torchrun runs of the scripts here.

Run:  HF_HUB_OFFLINE=1 PYTHONPATH=bindings/python BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \
          python -m pytest bindings/python/tests/integrations
"""

import os
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # _support, for the tests as for the torchrun scripts
sys.path.insert(0, str(HERE.parent))  # brs_testing
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

TORCHRUN_TIMEOUT_S = 240


@pytest.fixture(scope="session")
def torchrun():
    """``torchrun(script, *args, nproc=2)``: see run_torchrun."""
    return run_torchrun


def run_torchrun(script, *args, nproc=2, ranks_stderr=False):
    """Runs ``script`` under torchrun with ``nproc`` gloo processes (brs_testing.torchrun: a
    failure reports every rank's exit code and stderr)."""
    import brs_testing

    return brs_testing.torchrun(HERE / script, *args, nproc=nproc, timeout=TORCHRUN_TIMEOUT_S,
                                ranks_stderr=ranks_stderr)
