#!/usr/bin/env python3
"""Run BatchRebalance.jl's test suite against the built library.

    run_julia_tests.py LIBRARY.so.1 PACKAGE_DIR VECTORS_DIR

Runs `julia --project=PACKAGE_DIR PACKAGE_DIR/test/runtests.jl` with
BRS_LIBRARY and BRS_VECTORS_DIR set; exits 77 (skip) when no `julia` is on
PATH (set JULIA to use another executable).
"""
import os
import shutil
import subprocess
import sys

SKIP = 77


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    library, package, vectors = (os.path.abspath(p) for p in argv[1:])
    julia = shutil.which(os.environ.get("JULIA", "julia"))
    if julia is None:
        print("SKIP: no julia on PATH; the ccall check (julia-ccall-check) still ran")
        return SKIP
    env = dict(os.environ, BRS_LIBRARY=library, BRS_VECTORS_DIR=vectors)
    cmd = [julia, "--startup-file=no", f"--project={package}",
           os.path.join(package, "test", "runtests.jl")]
    print(" ".join(cmd), flush=True)
    return subprocess.run(cmd, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
