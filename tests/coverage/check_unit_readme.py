#!/usr/bin/env python3
"""tests/unit/README.md lists exactly the C unit tests meson runs.

    check_unit_readme.py README INTRO_TESTS_JSON
    check_unit_readme.py --selftest

INTRO_TESTS_JSON is the build directory's meson-info/intro-tests.json (what
`meson introspect --tests` prints): the tests of suite c whose program is a
test_* executable. The README's table has one row per program:

    | `test_oracle` | `oracle`, `oracle-random` | what it checks |

Fails, naming the program or test, when a program meson runs has no row, a
row names a program meson does not run, or a row's meson tests are not the
ones meson runs with that program. Exits 77 (skipped) when meson runs no
unit test here (no CUnit: only the cunit-missing placeholder).
"""
import json
import pathlib
import re
import sys

ROW = re.compile(r"^\|\s*`(test_\w+)`\s*\|([^|]*)\|")
NAME = re.compile(r"`([^`]+)`")


def meson_tests(intro):
    """{program: {test names}} of suite c, from intro-tests.json's list."""
    programs = {}
    for test in intro:
        if not any(suite == "c" or suite.endswith(":c") for suite in test["suite"]):
            continue
        program = pathlib.PurePath(test["cmd"][0]).name
        if program.startswith("test_"):
            programs.setdefault(program, set()).add(test["name"])
    return programs


def readme_tests(text):
    """{program: {test names}} of the README's table rows."""
    rows = {}
    for line in text.splitlines():
        found = ROW.match(line)
        if found:
            rows.setdefault(found.group(1), set()).update(NAME.findall(found.group(2)))
    return rows


def compare(meson, readme):
    problems = []
    for program in sorted(meson.keys() - readme.keys()):
        problems.append(f"{program}: meson runs it ({', '.join(sorted(meson[program]))}), "
                        "the README has no row for it")
    for program in sorted(readme.keys() - meson.keys()):
        problems.append(f"{program}: a README row, but meson runs no such program")
    for program in sorted(meson.keys() & readme.keys()):
        for name in sorted(meson[program] - readme[program]):
            problems.append(f"{program}: meson runs test `{name}`, the README's row omits it")
        for name in sorted(readme[program] - meson[program]):
            problems.append(f"{program}: the README's row names test `{name}`, meson runs none")
    return problems


def selftest():
    intro = [{"name": "oracle", "suite": ["libbrs:c"], "cmd": ["/b/tests/unit/test_oracle", "-x"]},
             {"name": "oracle-kk", "suite": ["libbrs:c"], "cmd": ["/b/tests/unit/test_oracle"]},
             {"name": "files", "suite": ["libbrs:c"], "cmd": ["/b/tests/unit/test_files"]},
             {"name": "cunit-missing", "suite": ["libbrs:c"], "cmd": ["/bin/sh", "-c"]},
             {"name": "abi-symbols", "suite": ["libbrs:abi"], "cmd": ["/b/tests/abi/test_x"]}]
    good = ("| program | meson tests | checks |\n|---|---|---|\n"
            "| `test_oracle` | `oracle`, `oracle-kk` | the DP |\n"
            "| `test_files` | `files` | the readers |\n")
    meson = meson_tests(intro)
    cases = [
        (good, []),
        (good.replace("| `test_files` | `files` | the readers |\n", ""), ["test_files: meson runs"]),
        (good + "| `test_gone` | `gone` | old |\n", ["test_gone: a README row"]),
        (good.replace("`oracle`, `oracle-kk`", "`oracle`"), ["omits it"]),
        (good.replace("`oracle-kk`", "`oracle-kk`, `oracle-total`"), ["`oracle-total`, meson runs none"]),
    ]
    failed = 0
    for text, expected in cases:
        got = compare(meson, readme_tests(text))
        if len(got) != len(expected) or any(e not in g for e, g in zip(expected, got)):
            print(f"selftest: expected {expected}, got {got}", file=sys.stderr)
            failed += 1
    if meson_tests(intro[3:4]):
        print("selftest: the cunit-missing placeholder counted as a unit test", file=sys.stderr)
        failed += 1
    print(f"selftest: {len(cases) + 1 - failed} of {len(cases) + 1} cases as expected")
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--selftest"]:
        return selftest()
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    readme, intro = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    meson = meson_tests(json.loads(intro.read_text(encoding="utf-8")))
    if not meson:
        print("meson runs no C unit test here (no CUnit): nothing to compare")
        return 77
    problems = compare(meson, readme_tests(readme.read_text(encoding="utf-8")))
    for problem in problems:
        print(f"{readme}: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"{readme}: the {len(meson)} programs and "
          f"{sum(map(len, meson.values()))} tests meson runs, each with its row")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
