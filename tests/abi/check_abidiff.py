#!/usr/bin/env python3
"""The ABI of the built libbrs.so.1 equals the committed baseline.

    check_abidiff.py check BASELINE.abi LIBRARY.so.1 INCLUDE_DIR
        abidw the library into a temporary file and run
        `abidiff BASELINE new`; any non-zero exit fails the test.
    check_abidiff.py additions BASELINE.abi LIBRARY.so.1 INCLUDE_DIR
        The same against an older minor version's baseline: functions may
        only have been added (0 removed, 0 changed), as SONAME libbrs.so.1
        allows.
    check_abidiff.py update BASELINE.abi LIBRARY.so.1 INCLUDE_DIR
        Write the baseline (only for an intentional, reviewed ABI change).

Exit 77 (skip) when abigail-tools are missing or the library has no debug
information (abidw needs DWARF: build with buildtype debug or
debugoptimized, the project default).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

# Flags that make abidw's output a function of the ABI alone: only the
# exported functions and the types of the public header reachable from them
# (internal functions and types may change freely), no paths of the build
# machine, no line numbers, no libraries needed.
ABIDW_FLAGS = [
    "--exported-interfaces-only",
    "--no-corpus-path",
    "--no-comp-dir-path",
    "--no-show-locs",
    "--no-elf-needed",
    "--drop-private-types",
    "--type-id-style", "hash",
]

UPDATE_COMMAND = ("python3 tests/abi/check_abidiff.py update tests/abi/libbrs-1.6.abi "
                  "BUILD/libbrs/libbrs.so.1 include")
RAW_COMMAND = ("abidw " + " ".join(ABIDW_FLAGS) +
               " --headers-dir include --out-file tests/abi/libbrs-1.6.abi BUILD/libbrs/libbrs.so.1"
               " (then the translation-unit paths are made relative, see strip_build_paths)")

INSTRUCTIONS = f"""
The ABI of libbrs.so.1 no longer matches the committed baseline.
Within SONAME libbrs.so.1 a symbol is never removed and a signature or a
type visible in brs.h never changes (a changed parameter type makes every
binding call the function wrongly).
- Not intended? Restore the declaration in include/brs.h and libbrs/.
- Adding functions (the only allowed change): declare them in brs.h, export
  them from libbrs/libbrs.sym in a NEW version node that inherits the last
  one, e.g.
      LIBBRS_1.7 {{ global: brs_new_function; }} LIBBRS_1.6;
  bump BRS_VERSION_MINOR and the Meson project version, add the function's
  line to tests/abi/abi_table.h and to every binding, then regenerate the
  baseline from a debugoptimized build (from the repository root):
      {UPDATE_COMMAND}
  which runs
      {RAW_COMMAND}
  and commit it with the change, saying why in the commit message.
- Anything else (changing or removing a function or a type) needs a new
  SONAME, libbrs.so.2, with its own baseline.
"""


def has_debug_info(library):
    out = subprocess.run(["readelf", "-S", "-W", library], capture_output=True, text=True).stdout
    return ".debug_info" in out


def abidw(library, include_dir, out_file):
    cmd = ["abidw", *ABIDW_FLAGS, "--headers-dir", include_dir, "--out-file", out_file, library]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        print(" ".join(cmd))
        print(result.stdout + result.stderr)
        raise SystemExit(f"FAIL: abidw exited {result.returncode}")
    strip_build_paths(out_file)


def strip_build_paths(abi_file):
    """abidw names each translation unit by its path from the build
    directory (e.g. '../../src/libbrs/api/plan.c'); keep 'libbrs/api/plan.c' so the
    baseline does not depend on where it was built. abidiff ignores it."""
    with open(abi_file, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"(<abi-instr [^>]*path=')[^']*/(libbrs/[^']*')", r"\1\2", text)
    with open(abi_file, "w", encoding="utf-8") as f:
        f.write(text)


ONLY_ADDED = re.compile(r"Functions changes summary: 0 Removed, 0 Changed, \d+ Added"
                        r".*Variables changes summary: 0 Removed, 0 Changed", re.S)


def check(baseline, library, include_dir, additions=False):
    if not os.path.exists(baseline):
        print(f"FAIL: no baseline {baseline}\n{INSTRUCTIONS}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        new = os.path.join(tmp, "libbrs-new.abi")
        abidw(library, include_dir, new)
        cmd = ["abidiff", baseline, new]
        result = subprocess.run(cmd, capture_output=True, text=True)
    print(" ".join(cmd[:2]), "<abidw of", library + ">")
    print(result.stdout + result.stderr, end="")
    if additions and result.returncode in (0, 4) and ONLY_ADDED.search(result.stdout):
        print("PASS: every function of", baseline, "is unchanged (only additions)")
        return 0
    if result.returncode != 0:
        print(f"FAIL: abidiff exited {result.returncode} (bits: 1 error, 2 usage, "
              f"4 ABI change, 8 incompatible change)\n{INSTRUCTIONS}")
        return 1
    print("PASS: the ABI equals the baseline", baseline)
    return 0


def main(argv):
    if len(argv) != 5 or argv[1] not in ("check", "additions", "update"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, baseline, library, include_dir = argv[1:]
    missing = [tool for tool in ("abidw", "abidiff", "readelf") if shutil.which(tool) is None]
    if missing:
        print("SKIP: not installed:", ", ".join(missing), "(Debian package abigail-tools)")
        return SKIP
    if not os.path.isfile(library):
        print(f"FAIL: no library {library}")
        return 1
    if not has_debug_info(library):
        print(f"SKIP: {library} has no debug information; build with buildtype debugoptimized")
        return SKIP
    if mode == "update":
        abidw(library, include_dir, baseline)
        print("wrote", baseline)
        return 0
    return check(baseline, library, include_dir, additions=mode == "additions")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
