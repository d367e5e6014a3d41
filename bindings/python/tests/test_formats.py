"""libbrs's readers of docs/formats.md, through Python, against tests/vectors/formats/manifest.json.

tests/cli/test_formats.py runs the same vectors through the brs command, and the Rust and Julia
tests through theirs: one manifest and one reader (the library's), so every surface accepts and
refuses the same files, with the same phrases.
"""

import io
import json
import pathlib
import subprocess

import pytest

from brs import CostModel, __main__ as brs_main
from brs._lengths import read_file, read_file_with_images
from brs.calibration.arguments import resolve_lengths as calibrate_lengths

VECTORS = pathlib.Path(__file__).resolve().parents[3] / "tests" / "vectors" / "formats"
MANIFEST = json.loads((VECTORS / "manifest.json").read_text())
REFUSED_LENGTHS = [case for case in MANIFEST["lengths"] if not case["accept"]]


def _ids(cases):
    return [pathlib.Path(case["file"]).stem for case in cases]


def _assert_refused(read, case, error=ValueError):
    with pytest.raises(error) as refused:
        read(VECTORS / case["file"])
    missing = [phrase for phrase in case["error"] if phrase not in str(refused.value)]
    assert not missing, f"{refused.value} lacks {missing}"


def _expected_images(case):
    """The manifest's images, or None (read_file_with_images's word) when no sample has one."""
    images = case.get("images")
    return images if images and any(images) else None


# Every Python entry point that takes a lengths file's path: the reader itself, with images,
# `python -m brs report` (BadInput, exit 2) and brs.calibrate (a numpy array).
LENGTHS_READERS = {
    "read_file": (read_file, ValueError),
    "read_file_with_images": (lambda path: read_file_with_images(path)[0], ValueError),
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


@pytest.mark.parametrize("case", [c for c in MANIFEST["lengths"] if c["accept"]],
                         ids=_ids([c for c in MANIFEST["lengths"] if c["accept"]]))
def test_lengths_file_images(case):
    assert read_file_with_images(VECTORS / case["file"]) == (case["values"],
                                                            _expected_images(case))


def test_the_package_exports_the_reader():
    import brs

    assert brs.read_lengths_file is read_file_with_images and "read_lengths_file" in brs.__all__


@pytest.mark.parametrize("case", MANIFEST["lengths"], ids=_ids(MANIFEST["lengths"]))
def test_standard_input_reads_as_the_file(case, monkeypatch):
    data = (VECTORS / case["file"]).read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    if case["accept"]:
        assert read_file_with_images("-") == (case["values"], _expected_images(case))
    else:
        with pytest.raises(ValueError, match="^standard input "):
            read_file("-")


@pytest.mark.parametrize("case", REFUSED_LENGTHS, ids=_ids(REFUSED_LENGTHS))
def test_the_message_is_the_brs_commands(case, cli):
    path = VECTORS / case["file"]
    with pytest.raises(ValueError) as refused:
        read_file(path)
    done = subprocess.run([cli, "plan", "--lengths", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert done.stderr == f"brs plan: {refused.value}\n"


@pytest.mark.parametrize("case", MANIFEST["cost_model"], ids=_ids(MANIFEST["cost_model"]))
def test_cost_model_file(case):
    if case["accept"]:
        cm = CostModel.load(VECTORS / case["file"])
        assert (cm.alpha, cm.intercept, cm.max_tokens) == (case["alpha"], case["intercept"],
                                                           case["max_tokens"])
        assert CostModel.from_dict(cm.to_dict()) == cm
    else:
        _assert_refused(CostModel.load, case)


def test_the_manifest_covers_both_outcomes_of_both_formats():
    for kind in ("lengths", "cost_model"):
        outcomes = {case["accept"] for case in MANIFEST[kind]}
        assert outcomes == {True, False}, kind
        for case in MANIFEST[kind]:
            assert (VECTORS / case["file"]).is_file(), case["file"]
    assert any(_expected_images(case) for case in MANIFEST["lengths"])
