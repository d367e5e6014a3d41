"""RebalancedStream where torch is not installed: a plain iterable, the same micro-batches."""

import json

from brs import RebalancedStream
from brs_testing import run_python

WITHOUT_TORCH = """
import json, sys
sys.modules["torch"] = None  # `import torch` fails, as where torch is not installed
import brs
stream = brs.RebalancedStream(list(range(1, 60)), length=int, per_device_batch_size=2,
                              dp_size=2, rank=1, grad_accum=2, window_steps=3)
print(json.dumps({"bases": [c.__name__ for c in type(stream).__mro__], "batches": list(stream),
                  "fingerprint": stream.state_dict()["fingerprint"]}))
"""


def test_imports_and_streams_without_torch():
    done = run_python(["-c", WITHOUT_TORCH])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["bases"] == ["RebalancedStream", "object"]
    here = RebalancedStream(list(range(1, 60)), length=int, per_device_batch_size=2, dp_size=2,
                            rank=1, grad_accum=2, window_steps=3)
    assert result["batches"] == list(here)
    assert result["fingerprint"] == here.fingerprint
