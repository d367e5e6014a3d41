#!/usr/bin/env python3
"""The defaults and bounds include/brs.h documents agree with the library's option table.

    check_header_defaults.py SOURCE_ROOT LIBRARY

brs.h documents each option beside its key: "Default 8." (a number or a BRS_* constant of the
header) and, for some, its range "0 .. 1000" (numbers, INT64_MAX or a BRS_* constant). The table
(libbrs/api/options.def) is the truth, read here from the built LIBRARY through brs_option_*.
Fails, naming the option, when
  - a key of the table has no BRS_OPT_* in brs.h, or brs.h has a BRS_OPT_* the table lacks;
  - an option's comment says no "Default ...", or another default than the table's;
  - a range the comment states differs from the table's bounds.
"""
import ctypes
import math
import pathlib
import re
import sys

INT, DOUBLE = 0, 1  # BRS_OPTION_INT, BRS_OPTION_DOUBLE
NAMED_LIMITS = {"INT64_MAX": 2**63 - 1}
# "/** doc */" then "#define BRS_OPT_NAME 12"
OPTION = re.compile(r"/\*\*((?:(?!\*/).)*)\*/\s*#\s*define\s+(BRS_OPT_\w+)\s+(\d+)", re.S)
# a number or a name; a sentence's full stop after it is not part of it
VALUE = r"[\w+-]+(?:\.\w+)*"
DEFAULT = re.compile(rf"\bDefault\s+({VALUE})")
RANGE = re.compile(rf"(?<![\w.])({VALUE})\s+\.\.\s+({VALUE})")


class Documented:
    """What brs.h says about one option: its key, default and range (tokens, or None)."""

    def __init__(self, constant, key, comment):
        self.constant, self.key = constant, key
        text = " ".join(comment.replace("*", " ").split())
        found = DEFAULT.search(text)
        self.default = found.group(1) if found else None
        found = RANGE.search(text)
        self.bounds = found.groups() if found else None


def documented_options(header_text):
    """{key: Documented} of every BRS_OPT_* of the header."""
    return {int(key): Documented(constant, int(key), comment)
            for comment, constant, key in OPTION.findall(header_text)}


def header_constants(header_text):
    """{name: value} of the header's integer #defines (BRS_SYNC_STEP 1, ...)."""
    return {name: int(value) for name, value in
            re.findall(r"^\s*#\s*define\s+(BRS_\w+)\s+(-?\d+)\s*$", header_text, flags=re.M)}


def value_of(token, constants):
    """The number a token of the documentation stands for; None when it is not one."""
    if token in constants:
        return constants[token]
    if token in NAMED_LIMITS:
        return NAMED_LIMITS[token]
    try:
        return int(token)
    except ValueError:
        pass
    try:
        return float(token)
    except ValueError:
        return None


def same(documented, actual):
    return documented is not None and math.isclose(documented, actual, rel_tol=1e-12,
                                                   abs_tol=1e-12)


def compare(documented, table, constants):
    """The disagreements between the header's documentation and the table, as sentences.

    table: {key: (name, default, lower, upper)} as the library reports them.
    """
    problems = []
    for key, (name, default, lower, upper) in sorted(table.items()):
        doc = documented.get(key)
        if doc is None:
            problems.append(f"{name} (key {key}): no BRS_OPT_* #define with this key in brs.h")
            continue
        if doc.default is None:
            problems.append(f"{doc.constant}: its comment in brs.h says no \"Default ...\" "
                            f"(the table's default is {default})")
        elif not same(value_of(doc.default, constants), default):
            problems.append(f"{doc.constant}: brs.h says Default {doc.default}, the table "
                            f"(options.def) says {default}")
        if doc.bounds is not None:
            stated = tuple(value_of(token, constants) for token in doc.bounds)
            if not (same(stated[0], lower) and same(stated[1], upper)):
                problems.append(f"{doc.constant}: brs.h says {doc.bounds[0]} .. "
                                f"{doc.bounds[1]}, the table's bounds are {lower} .. {upper}")
    for key in sorted(documented.keys() - table.keys()):
        problems.append(f"{documented[key].constant} = {key} is in brs.h but not in the "
                        "library's option table")
    return problems


def library_table(path):
    """{key: (name, default, lower, upper)} through brs_option_*."""
    lib = ctypes.CDLL(str(path))

    def call(function, *args):
        status = getattr(lib, function)(*args)
        if status != 0:
            raise RuntimeError(f"{function} returned status {status}")

    count = ctypes.c_size_t()
    call("brs_option_count", ctypes.byref(count))
    table = {}
    for index in range(count.value):
        key, kind, name = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_char_p()
        call("brs_option_key", ctypes.byref(key), ctypes.c_size_t(index))
        call("brs_option_name", ctypes.byref(name), key)
        call("brs_option_type", ctypes.byref(kind), key)
        suffix, c_type = ("double", ctypes.c_double) if kind.value == DOUBLE else \
            ("int", ctypes.c_int64)
        default, lower, upper = c_type(), c_type(), c_type()
        call(f"brs_option_default_{suffix}", ctypes.byref(default), key)
        call(f"brs_option_bounds_{suffix}", ctypes.byref(lower), ctypes.byref(upper), key)
        table[key.value] = (name.value.decode(), default.value, lower.value, upper.value)
    return table


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    header = (pathlib.Path(argv[1]) / "include" / "brs.h").read_text()
    table = library_table(argv[2])
    problems = compare(documented_options(header), table, header_constants(header))
    for problem in problems:
        print(problem)
    if not problems:
        print(f"the {len(table)} options documented in brs.h agree with the option table")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
