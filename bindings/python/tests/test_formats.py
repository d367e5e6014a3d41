"""The Python readers of docs/formats.md against tests/vectors/formats/manifest.json.

tests/cli/test_formats.py runs the same vectors through the C command (brs plan): one manifest,
so the two readers of each format accept and refuse the same files, with the same phrases.
"""

import json
import pathlib

import pytest

from brs import CostModel, __main__ as brs_main
from brs._lengths import read_file
from brs.calibration.arguments import resolve_lengths as calibrate_lengths

VECTORS = pathlib.Path(__file__).resolve().parents[3] / "tests" / "vectors" / "formats"
MANIFEST = json.loads((VECTORS / "manifest.json").read_text())


def _ids(cases):
    return [pathlib.Path(case["file"]).stem for case in cases]


def _assert_refused(read, case, error=ValueError):
    with pytest.raises(error) as refused:
        read(VECTORS / case["file"])
    missing = [phrase for phrase in case["error"] if phrase not in str(refused.value)]
    assert not missing, f"{refused.value} lacks {missing}"


# Every Python entry point that takes a lengths file's path: the reader itself, `python -m brs
# report` (BadInput, exit 2) and brs.calibrate (a numpy array).
LENGTHS_READERS = {
    "read_file": (read_file, ValueError),
    "python -m brs": (brs_main.read_lengths, brs_main.BadInput),
    "calibrate": (lambda path: calibrate_lengths(path).tolist(), ValueError),
}


@pytest.mark.parametrize("reader", LENGTHS_READERS)
@pytest.mark.parametrize("case", MANIFEST["lengths"], ids=_ids(MANIFEST["lengths"]))
def test_lengths_file(case, reader):
    read, error = LENGTHS_READERS[reader]
    if case["accept"]:
        assert read(VECTORS / case["file"]) == case["values"]
    else:
        _assert_refused(read, case, error)


@pytest.mark.parametrize("case", MANIFEST["cost_model"], ids=_ids(MANIFEST["cost_model"]))
def test_cost_model_file(case):
    if case["accept"]:
        cm = CostModel.load(VECTORS / case["file"])
        assert (cm.alpha, cm.intercept, cm.max_tokens) == (case["alpha"], case["intercept"],
                                                           case["max_tokens"])
    else:
        _assert_refused(CostModel.load, case)


def test_the_manifest_covers_both_outcomes_of_both_formats():
    for kind in ("lengths", "cost_model"):
        outcomes = {case["accept"] for case in MANIFEST[kind]}
        assert outcomes == {True, False}, kind
        for case in MANIFEST[kind]:
            assert (VECTORS / case["file"]).is_file(), case["file"]
