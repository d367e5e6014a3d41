#!/usr/bin/env python3
"""The C files of libbrs/, cli/, tests/unit/ and tests/equivalence/ are as .clang-format lays them out.

    check_clang_format.py SOURCE_ROOT
    check_clang_format.py --selftest

Runs `clang-format --dry-run --Werror` over the files git lists under those folders (every
file there when SOURCE_ROOT is no git checkout) and fails naming each file it would change,
with the command that formats them. Exits 77 (skipped) only when clang-format is not
installed; scripts/test-all installs it (scripts/required-programs.sh).
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

FOLDERS = ("libbrs", "cli", "tests/unit", "tests/equivalence")


def c_files(root):
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--"]
                                + [f"{folder}/*.[ch]" for folder in FOLDERS],
                                capture_output=True, text=True, check=True).stdout
        return sorted(name for name in listed.split("\0") if name)
    except (OSError, subprocess.CalledProcessError):
        return sorted(str(path.relative_to(root)) for folder in FOLDERS
                      for path in (root / folder).rglob("*.[ch]"))


def unformatted(clang_format, root, files):
    """The files clang-format --dry-run --Werror would change, one run per 50 files."""
    bad = []
    for start in range(0, len(files), 50):
        chunk = files[start:start + 50]
        done = subprocess.run([clang_format, "--dry-run", "--Werror", "--"] + chunk,
                              cwd=root, capture_output=True, text=True)
        if done.returncode != 0:
            bad += [name for name in chunk if f"{name}:" in done.stderr]
            if not any(f"{name}:" in done.stderr for name in chunk):
                sys.exit(f"clang-format failed:\n{done.stderr[-4000:]}")
    return bad


def selftest(clang_format, root):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        shutil.copy(root / ".clang-format", tmp / ".clang-format")
        (tmp / "good.c").write_text("static int f(int x)\n{\n    if (x) return 1;\n"
                                    "    return 0;\n}\n")
        (tmp / "bad.c").write_text("static int f(int x) {\n  if (x) return 1;\n  return 0;\n}\n")
        got = unformatted(clang_format, tmp, ["bad.c", "good.c"])
    ok = got == ["bad.c"]
    print(f"selftest: {'bad.c flagged, good.c passed' if ok else f'flagged {got}, not [bad.c]'}")
    return 0 if ok else 1


def main(argv):
    clang_format = shutil.which("clang-format")
    if not clang_format:
        print("clang-format is not installed (Debian package clang-format)")
        return 77
    if argv[1:] == ["--selftest"]:
        return selftest(clang_format, pathlib.Path(__file__).resolve().parent.parent.parent)
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1]).resolve()
    files = c_files(root)
    bad = unformatted(clang_format, root, files)
    for name in bad:
        print(f"{name}: not as .clang-format lays it out", file=sys.stderr)
    if bad:
        print("format them with: clang-format -i " + " ".join(bad), file=sys.stderr)
        return 1
    print(f"{len(files)} C files of {', '.join(FOLDERS)} as .clang-format lays them out")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
