#!/usr/bin/env python3
"""docs/errors.md is what scripts/gen_errors_md.py generates from the built tree.

    check_errors_md.py BUILD_DIR
    check_errors_md.py --selftest

Runs the bad-input tests that record their cases (Python, python -m brs, SWIG, Rust) through
gen_errors_md.py's own collect() and render() and compares the page with the committed one;
fails with the first lines of the difference. A page the generator would write differently is
stale: run scripts/gen_errors_md.py --build BUILD_DIR. Exits 77 (skipped) when a layer cannot
run here (no pytest, no SWIG module in BUILD_DIR, no cargo), as the page would then lack rows.
"""
import difflib
import importlib.util
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def generator():
    spec = importlib.util.spec_from_file_location("gen_errors_md",
                                                  ROOT / "scripts" / "gen_errors_md.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def difference(committed, generated):
    """The unified diff of the committed page against the generated one ([] when equal)."""
    return list(difflib.unified_diff(committed.splitlines(), generated.splitlines(),
                                     "docs/errors.md", "generated", lineterm=""))


def missing_layers(build):
    missing = []
    if importlib.util.find_spec("pytest") is None:
        missing.append("pytest (the Python rows)")
    if not (build / "bindings" / "swig" / "brs_swig.py").exists():
        missing.append("the SWIG module in the build directory (the SWIG rows)")
    if not (shutil.which("cargo") or os.access(os.path.expanduser("~/.cargo/bin/cargo"), os.X_OK)):
        missing.append("cargo (the Rust rows)")
    return missing


def selftest(gen):
    case = {"layer": "Python", "call": "brs.Sampler(lengths)", "input": "[]",
            "outcome": "ValueError", "message": "lengths is empty | add one"}
    page = gen.render([case, dict(case)])
    failed = []
    if difference(page, page):
        failed.append("an identical page differs")
    if "1 cases." not in page or "empty \\| add" not in page:
        failed.append("render() did not dedupe the case or escape its |")
    stale = gen.render([dict(case, message="lengths is empty")])
    if not any(line.startswith("+") and "add one" in line for line in difference(stale, page)):
        failed.append("a changed message is not reported")
    for problem in failed:
        print(f"selftest: {problem}", file=sys.stderr)
    print(f"selftest: {3 - len(failed)} of 3 cases as expected")
    return 1 if failed else 0


def main(argv):
    gen = generator()
    if argv[1:] == ["--selftest"]:
        return selftest(gen)
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = pathlib.Path(argv[1]).resolve()
    missing = missing_layers(build)
    if missing:
        print("cannot generate the whole page here, missing: " + "; ".join(missing))
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        generated = gen.render(gen.collect(build, pathlib.Path(tmp) / "cases.jsonl"))
    lines = difference(gen.PAGE.read_text(encoding="utf-8"), generated)
    if lines:
        print("\n".join(lines[:60]), file=sys.stderr)
        print(f"docs/errors.md is stale: run scripts/gen_errors_md.py --build {build}",
              file=sys.stderr)
        return 1
    print("docs/errors.md is what scripts/gen_errors_md.py generates")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
