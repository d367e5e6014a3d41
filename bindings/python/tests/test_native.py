"""The ctypes loader: its search order, its error, its declarations and the version check."""

import ctypes
import ctypes.util
import os
import pathlib
import re

import pytest

from brs import _native
from brs_testing import REPO, run_python

HEADER = REPO / "include" / "brs.h"
SYMBOLS = REPO / "libbrs" / "libbrs.sym"


def test_every_exported_symbol_is_declared():
    exported = set(re.findall(r"\b(brs_\w+);", SYMBOLS.read_text()))
    assert exported == set(_native.SIGNATURES)


def _header_prototypes():
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    return {m.group(2): m.group(3) for m in re.finditer(
        r"BRS_API\s+([\w\s\*]+?)\s*\b(brs_\w+)\s*\(([^)]*)\)\s*;", text)}


def test_declared_argument_counts_match_the_header():
    prototypes = _header_prototypes()
    assert set(prototypes) == set(_native.SIGNATURES)
    for name, params in prototypes.items():
        count = 0 if params.strip() == "void" else params.count(",") + 1
        assert len(_native.SIGNATURES[name][1]) == count, name


def test_handles_are_distinct_typed_pointers():
    sampler_new = _native.lib.brs_sampler_new
    assert sampler_new.argtypes[0]._type_ is _native.SamplerPtr
    plan = _native.PlanPtr()
    with pytest.raises(ctypes.ArgumentError):
        _native.lib.brs_sampler_validate(plan)  # a plan is not a sampler


def test_null_handles_are_errors_not_crashes():
    out = ctypes.c_int64()
    status = _native.lib.brs_sampler_get_int(ctypes.byref(out), None, _native.OPT_SEED)
    assert status == _native.ERR_NULL_POINTER
    assert _native.lib.brs_sampler_last_error(None)  # a static message


def test_version_major_matches():
    assert _native.lib.brs_version_number() // 10000 == _native.ABI_MAJOR
    assert _native.version.split(".")[0] == str(_native.ABI_MAJOR)


def _system_has_libbrs():
    # In a child: here, dlopen("libbrs.so.1") would match the copy already loaded by SONAME.
    probe = run_python(["-c", "import ctypes; ctypes.CDLL('libbrs.so.1')"])
    return probe.returncode == 0 or ctypes.util.find_library("brs") is not None


PRINT_PATH = "import brs._native as n; print(n.library_path)"


@pytest.mark.skipif(_system_has_libbrs(), reason="a system libbrs would be found")
def test_import_error_names_every_place_tried(tmp_path):
    missing = tmp_path / "nowhere" / "libbrs.so.1"
    result = run_python(["-c", PRINT_PATH], BRS_LIBRARY=str(missing))
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    for place in (str(missing), "bundled in the package", "libbrs.so.1", "find_library"):
        assert place in result.stderr


def test_library_on_the_loader_path_is_found_without_brs_library():
    library = os.environ.get("BRS_LIBRARY")
    if not library:
        pytest.skip("BRS_LIBRARY is not set")
    # An empty BRS_LIBRARY counts as unset: the system loader must find libbrs.so.1.
    result = run_python(["-c", PRINT_PATH], BRS_LIBRARY="",
                        LD_LIBRARY_PATH=str(pathlib.Path(library).parent))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in ("libbrs.so.1", str(_native._bundled()))
