"""libbrs's readers of docs/formats.md, through the brs command, against
tests/vectors/formats/manifest.json.

Usage: test_formats.py BRS VECTORS_DIR. Every lengths vector goes through
`brs plan --lengths FILE` (batch size 1, dataset order, so micro-batch i holds
sample i and its padded_tokens is that sample's length) and every cost-model
vector through `brs plan --cost-model FILE` over one sample of 10 tokens, whose
cost is intercept + 10 + alpha*100. The command prints no image loads, so the
images of a vector are checked by the bindings' tests (Python, Rust, Julia),
which read the same manifest through the same reader.
"""

import json
import pathlib
import subprocess
import sys

PLAN = ["plan", "--batch-size", "1", "--no-shuffle", "--no-drop-last"]
COST_LENGTH = 10  # the sample of lengths/accept_single.lengths


def run(brs, *args):
    return subprocess.run([brs, *PLAN, *args], capture_output=True, text=True,
                          errors="replace", timeout=60)


def refused(case, done):
    """'' when the command refused the file with the manifest's phrases, else what went wrong."""
    if done.returncode != 2:
        return f"exit {done.returncode}, expected 2 (refused)"
    missing = [p for p in case["error"] if p not in done.stderr]
    return f"message {done.stderr.strip()!r} lacks {missing}" if missing else ""


def check_lengths(brs, root, case):
    done = run(brs, "--lengths", str(root / case["file"]))
    if not case["accept"]:
        return refused(case, done)
    if done.returncode != 0:
        return f"refused: {done.stderr.strip()}"
    batches = [json.loads(line) for line in done.stdout.splitlines()]
    if any(b["indices"] != [i] for i, b in enumerate(batches)):
        return "micro-batches are not the samples in order"
    got = [b["padded_tokens"] for b in batches]
    return "" if got == case["values"] else f"read {got}, expected {case['values']}"


def check_cost_model(brs, root, case):
    done = run(brs, "--lengths", str(root / "lengths/accept_single.lengths"),
               "--cost-model", str(root / case["file"]))
    if not case["accept"]:
        return refused(case, done)
    if done.returncode != 0:
        return f"refused: {done.stderr.strip()}"
    cost = json.loads(done.stdout.splitlines()[0])["cost"]
    expected = case["intercept"] + COST_LENGTH + case["alpha"] * COST_LENGTH**2
    # alpha and intercept are rounded to multiples of 1e-6 (the library's option table)
    tolerance = 1e-6 * (1 + COST_LENGTH**2) + 1e-12 * abs(expected)
    return "" if abs(cost - expected) <= tolerance else f"cost {cost}, expected {expected}"


def main(brs, vectors):
    root = pathlib.Path(vectors)
    manifest = json.loads((root / "manifest.json").read_text())
    failures = []
    for kind, check in (("lengths", check_lengths), ("cost_model", check_cost_model)):
        for case in manifest[kind]:
            problem = check(brs, root, case)
            if problem:
                failures.append(f"{case['file']}: {problem}")
    count = len(manifest["lengths"]) + len(manifest["cost_model"])
    print(f"{count - len(failures)} of {count} format vectors as the manifest says")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
