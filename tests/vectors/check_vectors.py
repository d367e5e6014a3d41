#!/usr/bin/env python3
"""Regenerate the golden vectors into a temporary directory and compare them
with the committed files, byte for byte.

    check_vectors.py GEN_VECTORS DATA_DIR VECTORS_DIR
"""
import difflib
import pathlib
import subprocess
import sys
import tempfile

HOW_TO_CHANGE = """\
The planner's output differs from the committed golden vectors in tests/vectors.
Every binding reproduces these files, so a change of plans must be deliberate:
  1. bump the plan algorithm version in libbrs (BRS_PLAN_ALGORITHM_VERSION in
     libbrs/api/internal.h; it is part of the fingerprint),
  2. regenerate the vectors and commit them with that change:
       meson compile -C BUILD gen_vectors && BUILD/tests/vectors/gen_vectors data tests/vectors
     (run from the repository root; BUILD is your build directory).
If you did not mean to change any plan, the change above is a regression."""


def main(gen_vectors, data_dir, vectors_dir):
    def read(root):
        """Every vector: balanced ones at the top, strategies/ and shapes/ below."""
        root = pathlib.Path(root)
        return {str(p.relative_to(root)): p.read_text()
                for pattern in ("*.json", "strategies/*.json", "shapes/*.json")
                for p in root.glob(pattern)}

    committed = read(vectors_dir)
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([gen_vectors, data_dir, out], check=True)
        fresh = read(out)

    problems = []
    for name in sorted(committed.keys() - fresh.keys()):
        problems.append(f"{name}: committed but no longer generated")
    for name in sorted(fresh.keys() - committed.keys()):
        problems.append(f"{name}: generated but not committed")
    for name in sorted(fresh.keys() & committed.keys()):
        if fresh[name] != committed[name]:
            diff = difflib.unified_diff(committed[name].splitlines(), fresh[name].splitlines(),
                                        f"committed/{name}", f"regenerated/{name}", lineterm="", n=0)
            problems.append("\n".join(list(diff)[:20]))
    if not committed:
        problems.append(f"no golden vectors found in {vectors_dir}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(HOW_TO_CHANGE, file=sys.stderr)
        return 1
    print(f"{len(fresh)} golden vectors match")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
