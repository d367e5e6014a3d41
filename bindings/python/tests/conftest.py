"""Fixtures of the brs (ctypes) tests.

Run from the repository root:
    BRS_LIBRARY=BUILD/libbrs/libbrs.so.1 BRS_CLI=BUILD/cli/brs PYTHONPATH=bindings/python \
        python -m pytest bindings/python/tests
"""

import os
import pathlib
import sys
import types

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # brs_testing
from brs_testing import read_lengths  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "distributed: starts several processes (torchrun, gloo); scripts/soak-distributed")


@pytest.fixture(scope="session")
def gsm8k():
    return read_lengths("gsm8k_train.lengths")


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("BRS_CLI")
    if not path:
        pytest.skip("BRS_CLI is not set (point it at BUILD/cli/brs)")
    if not os.access(path, os.X_OK):
        pytest.fail(f"BRS_CLI={path} is not an executable")
    return path


@pytest.fixture
def job_env(monkeypatch):
    """No job around: no RANK/WORLD_SIZE, no initialised accelerate or torch.distributed.

    Other tests in the same pytest process (the integrations) may have initialised
    accelerate's PartialState; detection would rightly prefer it, so hide it here.
    """
    from brs import distributed

    for name in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    stub = types.ModuleType("accelerate.state")
    stub.PartialState = type("PartialState", (), {"_shared_state": {}})
    monkeypatch.setitem(sys.modules, "accelerate.state", stub)
    monkeypatch.setattr(distributed, "_torch_dist", lambda: None)
    return monkeypatch


@pytest.fixture
def one_thread():
    """torch on one thread for the test (timing tests), restored after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
