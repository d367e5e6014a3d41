#!/usr/bin/env python3
"""The public header stands alone and keeps the ABI rules of docs/abi.md.

    check_header.py compile SOURCE INCLUDE_DIR COMPILER [ARGS...]
        Compile SOURCE (header_alone.c or header_alone.cpp: one line that
        includes brs.h) as C11 or C++11 (by its suffix) with -Wall -Wextra
        -pedantic -Werror (exit 77 without a compiler for that language).
    check_header.py rules BRS.H
        No function-like macros, no static or inline functions, and every
        prototype uses only the types every FFI can call: fixed-width
        integers, size_t, double, pointers, const char * and brs_* typedefs
        of int32_t or opaque structs (no enum, bool, long, varargs, struct by
        value).
"""
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77

WARNINGS = ["-Wall", "-Wextra", "-pedantic", "-Werror"]
FLAGS = {
    ".c": ("C11", ["-std=c11"] + WARNINGS),
    ".cpp": ("C++11", ["-std=c++11"] + WARNINGS),
}


def compile_alone(source, include_dir, compiler):
    lang, flags = FLAGS[os.path.splitext(source)[1]]
    if not compiler:
        print(f"SKIP: no {lang} compiler found by meson")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        cmd = compiler + flags + ["-I", include_dir, "-c", source, "-o", os.path.join(tmp, "alone.o")]
        result = subprocess.run(cmd, capture_output=True, text=True)
    print(" ".join(cmd))
    if result.returncode != 0:
        print(result.stdout + result.stderr)
        print(f"FAIL: brs.h does not compile alone as {lang}")
        return 1
    print(f"PASS: brs.h compiles alone as {lang} with {' '.join(flags)}")
    return 0


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


# Type words a prototype may use; brs_* typedefs are checked separately.
ALLOWED_WORDS = {"const", "void", "char", "double", "size_t",
                 "int8_t", "int16_t", "int32_t", "int64_t",
                 "uint8_t", "uint16_t", "uint32_t", "uint64_t"}


def typedefs(code):
    """{name: what it aliases} for the brs_* typedefs of the header."""
    found = {}
    for target, name in re.findall(r"\btypedef\s+([^;]+?)\s+(brs_\w+)\s*;", code):
        found[name] = " ".join(target.split())
    return found


def prototypes(code):
    """(name, return type, [parameter declarations]) of each BRS_API function."""
    for ret, name, params in re.findall(r"^\s*BRS_API\s+([^;(#]*?)\b(brs_\w+)\s*\(([^)]*)\)\s*;", code, flags=re.M):
        yield name, ret, [p.strip() for p in params.split(",")]


def type_problems(name, decl, aliases):
    """Words of one return type or parameter that an FFI may not handle."""
    found = []
    if decl.strip() == "...":
        return [f"{name}: varargs"]
    words = re.findall(r"[A-Za-z_]\w*", decl)
    if "char" in words and not re.search(r"\bconst\s+char\s*\*", decl):
        found.append(f"{name}: '{decl}': char only as const char *")
    for word in words:
        if word in ALLOWED_WORDS:
            continue
        alias = aliases.get(word)
        if alias == "int32_t" or (alias and alias.startswith("struct ") and "*" in decl):
            continue
        if alias and alias.startswith("struct "):
            found.append(f"{name}: '{decl}': struct passed by value")
        elif not (words[-1] == word and len(words) > 1):  # the parameter's own name
            found.append(f"{name}: '{decl}': type word '{word}' is not allowed")
    return found


def rule_problems(header):
    with open(header, encoding="utf-8") as f:
        code = strip_comments(f.read())
    found = [f"function-like macro {m}(...)" for m in re.findall(r"^\s*#\s*define\s+(\w+)\(", code, flags=re.M)]
    found += [f"'{w}' in the header (no static or inline functions)" for w in re.findall(r"\b(static|inline|__inline__)\b", code)]
    found += ["'enum' in the header (option and status keys are int32_t)"] * len(re.findall(r"\benum\b", code))
    aliases = typedefs(code)
    count = 0
    for name, ret, params in prototypes(code):
        count += 1
        found += type_problems(name, ret, aliases)
        if params != ["void"]:
            for p in params:
                found += type_problems(name, p, aliases)
    if count == 0:
        found.append("no BRS_API prototypes found")
    return found, count


def main(argv):
    if len(argv) >= 4 and argv[1] == "compile" and os.path.splitext(argv[2])[1] in FLAGS:
        return compile_alone(argv[2], argv[3], argv[4:])
    if len(argv) == 3 and argv[1] == "rules":
        found, count = rule_problems(argv[2])
        for line in found:
            print("FAIL:", line)
        if not found:
            print(f"PASS: {count} prototypes keep the ABI rules; no function-like macros, no static inline")
        return 1 if found else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
