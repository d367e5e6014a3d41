#!/usr/bin/env python3
"""Count passed, failed and skipped tests over every suite's log and print
the one line CI reads: "N passed, N failed, N skipped". Exit 1 on any failure."""
import argparse
import json
import pathlib
import re
import sys
import xml.etree.ElementTree as ET


def count_meson(path):
    passed = failed = skipped = 0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        result = json.loads(line)["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
    return passed, failed, skipped


def count_junit(path):
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = failed = skipped = 0
    for suite in suites:
        tests += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    return tests - failed - skipped, failed, skipped


def count_cargo(path):
    passed = failed = skipped = 0
    pattern = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")
    for match in pattern.finditer(path.read_text(errors="replace")):
        passed += int(match.group(1))
        failed += int(match.group(2))
        skipped += int(match.group(3))
    return passed, failed, skipped


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("logs", type=pathlib.Path)
    parser.add_argument("--runner-failures", type=int, default=0)
    args = parser.parse_args()
    counters = {"meson-*.json": count_meson, "*.xml": count_junit, "cargo.log": count_cargo}
    totals = [0, 0, 0]
    for pattern, count in counters.items():
        for path in sorted(args.logs.glob(pattern)):
            p, f, s = count(path)
            print(f"{path.name}: {p} passed, {f} failed, {s} skipped")
            totals = [totals[0] + p, totals[1] + f, totals[2] + s]
    if args.runner_failures:
        print(f"{args.runner_failures} suite runner(s) failed to run")
    failed = totals[1] + args.runner_failures
    print(f"{totals[0]} passed, {failed} failed, {totals[2]} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
