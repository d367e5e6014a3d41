#!/usr/bin/env python3
"""Regenerate docs/errors.md from the bad-input tests: what each layer answers to bad input.

    scripts/gen_errors_md.py [--build BUILD_DIR] [--check]

Runs the tests that record their cases (each appends one JSON line per case to $BRS_ERROR_LOG):
the Python package (bindings/python/tests: test_bad_input.py, test_report.py and
integrations/test_bad_arguments.py), the SWIG module (bindings/swig/tests/test_errors.py) and
the Rust crate (bindings/rust/brs/tests/errors.rs, when cargo is there), then writes the table.
A layer whose tests fail stops the script: the page only ever shows messages that passed their
assertions. --check compares with the committed page instead of writing it (exit 1 if stale).
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "errors.md"
PY_TESTS = ROOT / "bindings" / "python" / "tests"
LAYERS = ("Python", "python -m brs", "SWIG (Python)", "Rust")

HEADER = """# Errors: what bad input gets

Every public entry point answers bad input with an error that names the argument and says what
to change; nothing is half-written. This page is GENERATED from the tests that check those
answers (each case below passed its assertions when the page was made); do not edit it, run

    scripts/gen_errors_md.py            # after scripts/build; --check tells whether it is stale

Python raises TypeError for a wrong type and ValueError for a wrong value (brs.BrsError, a
RuntimeError, for library states that are not argument errors); `python -m brs` exits with
status 2 and one line on stderr; Rust returns `Err(brs::Error)` with its `ErrorCode`. The C
library's own messages (the text after the status sentence) are the same in every binding.
"""


def run(command, env, cwd=ROOT):
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"gen_errors_md: {' '.join(map(str, command))} failed:\n"
                 f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


def collect(build, log):
    env = dict(os.environ, BRS_ERROR_LOG=str(log), HF_HUB_OFFLINE="1",
               BRS_LIBRARY=str(build / "libbrs" / "libbrs.so.1"),
               BRS_CLI=str(build / "cli" / "brs"))
    python = dict(env, PYTHONPATH=os.pathsep.join([str(ROOT / "bindings" / "python"),
                                                   env.get("PYTHONPATH", "")]))
    run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(PY_TESTS / "test_bad_input.py"), str(PY_TESTS / "test_report.py"),
         str(PY_TESTS / "integrations" / "test_bad_arguments.py")], python)
    swig = dict(python, PYTHONPATH=os.pathsep.join([str(build / "bindings" / "swig"),
                                                    python["PYTHONPATH"]]))
    run([sys.executable, str(ROOT / "bindings" / "swig" / "tests" / "test_errors.py")], swig)
    cargo = shutil.which("cargo") or shutil.which(os.path.expanduser("~/.cargo/bin/cargo"))
    if cargo:
        rust = dict(env, BRS_LIB_DIR=str(build / "libbrs"), LD_LIBRARY_PATH=str(build / "libbrs"))
        run([cargo, "test", "--offline", "-q", "-p", "brs", "--test", "errors"], rust,
            cwd=ROOT / "bindings" / "rust")
    else:
        print("gen_errors_md: no cargo, the Rust rows are left out", file=sys.stderr)
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def cell(text):
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def render(cases):
    unique = {tuple(case[k] for k in ("layer", "call", "input", "outcome", "message"))
              for case in cases}
    rows = sorted(unique, key=lambda row: (LAYERS.index(row[0]) if row[0] in LAYERS
                                           else len(LAYERS), row[0], row[1], row[2]))
    lines = [HEADER, f"{len(rows)} cases.", "",
             "| Layer | Call | Bad input | Raises / exit | Message |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(f"`{cell(v)}`" if i in (1, 2) else cell(v)
                                for i, v in enumerate(row)) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, default=ROOT / "build")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        page = render(collect(args.build.resolve(), pathlib.Path(tmp) / "cases.jsonl"))
    if args.check:
        if PAGE.read_text(encoding="utf-8") != page:
            sys.exit("docs/errors.md is stale: run scripts/gen_errors_md.py")
        return
    temporary = PAGE.with_suffix(".md.tmp")
    temporary.write_text(page, encoding="utf-8")
    os.replace(temporary, PAGE)  # never a half-written page
    print(f"wrote {PAGE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
