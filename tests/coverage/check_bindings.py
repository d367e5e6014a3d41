#!/usr/bin/env python3
"""Every exported symbol of libbrs is wrapped by every binding, or listed in
tests/coverage/not_wrapped.txt with a reason.

    check_bindings.py [SOURCE_ROOT]        (default: the repository of this file)

A symbol counts as wrapped when the binding's code (comments removed) uses it
the way that language calls C:
  ctypes   bindings/python/brs/*.py     an attribute or a string literal: lib.brs_x, "brs_x"
  brs-sys  bindings/rust/brs-sys/src/**/*.rs   fn brs_x( inside an extern "C" block
  swig     bindings/swig/brs.i          a C call brs_x(
  julia    bindings/julia/**/src/*.jl   a ccall symbol :brs_x, or @ccall lib.brs_x(
not_wrapped.txt: one "<binding> <symbol> <reason>" per line; # starts a comment.

Every option constant of include/brs.h (BRS_OPT_*, and the named values
BRS_STRATEGY_*, BRS_SYNC_*, BRS_OPTION_*) must be defined by every binding too
(no exemptions: a key a binding lacks is an option its users cannot set):
  ctypes   the name without its BRS_ prefix assigned: OPT_SYNC = 13
  brs-sys  pub const BRS_OPT_SYNC
  swig     %include <brs.h> (SWIG takes every macro of the header), or the name
  julia    const BRS_OPT_SYNC
"""
import io
import pathlib
import re
import sys
import tokenize

BINDINGS = {
    "ctypes": "bindings/python/brs/*.py",
    "brs-sys": "bindings/rust/brs-sys/src/**/*.rs",
    "swig": "bindings/swig/brs.i",
    "julia": "bindings/julia/**/src/*.jl",  # the package BatchRebalance.jl/src
}


def exported_symbols(root):
    """The global symbols of the version script libbrs/libbrs.sym."""
    text = (root / "libbrs" / "libbrs.sym").read_text()
    text = re.sub(r"/\*.*?\*/|#[^\n]*", "", text, flags=re.S)
    symbols = []
    for block in re.findall(r"global\s*:(.*?)(?:local\s*:|\})", text, flags=re.S):
        symbols += re.findall(r"\b(brs_\w+)\s*;", block)
    return symbols


def strip_c_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def python_names(text):
    """Identifiers and whole string literals of Python source (no comments)."""
    names = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME:
            names.add(token.string)
        elif token.type == tokenize.STRING:
            body = re.sub(r"^[rbuRBU]*", "", token.string).strip("'\"")
            names.add(body)
    return names


def ctypes_wrapped(text, symbol):
    return symbol in python_names(text)


def rust_extern_blocks(text):
    """The bodies of the extern "C" { ... } blocks (braces balanced)."""
    text = strip_c_comments(text)
    for match in re.finditer(r'extern\s+"C"\s*\{', text):
        depth, start = 1, match.end()
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                yield text[start:i]
                break


def rust_wrapped(text, symbol):
    pattern = rf"\bfn\s+{symbol}\s*\("
    return any(re.search(pattern, block) for block in rust_extern_blocks(text))


def swig_wrapped(text, symbol):
    return re.search(rf"\b{symbol}\s*\(", strip_c_comments(text)) is not None


def julia_wrapped(text, symbol):
    text = re.sub(r"#=.*?=#|#[^\n]*", "", text, flags=re.S)
    return re.search(rf":{symbol}\b|@ccall\s+[\w.$()]*?\b{symbol}\s*\(", text) is not None


CONSTANT_PREFIXES = ("BRS_OPT_", "BRS_STRATEGY_", "BRS_SYNC_", "BRS_OPTION_")


def header_constants(root):
    """The option constants #defined by include/brs.h ([] without a header)."""
    header = root / "include" / "brs.h"
    if not header.exists():
        return []
    names = re.findall(r"^\s*#\s*define\s+(BRS_\w+)\s", header.read_text(), flags=re.M)
    return [name for name in names if name.startswith(CONSTANT_PREFIXES)]


def ctypes_defines(text, constant):
    short = constant[len("BRS_"):]
    return re.search(rf"^\s*{short}\s*=", text, flags=re.M) is not None


def rust_defines(text, constant):
    return re.search(rf"\bpub\s+const\s+{constant}\s*:", strip_c_comments(text)) is not None


def swig_defines(text, constant):
    code = strip_c_comments(text)
    return (re.search(r"%include\s*<brs\.h>", code) is not None
            or re.search(rf"\b{constant}\b", code) is not None)


def julia_defines(text, constant):
    text = re.sub(r"#=.*?=#|#[^\n]*", "", text, flags=re.S)
    return re.search(rf"^\s*const\s+{constant}\s*=", text, flags=re.M) is not None


DEFINES = {"ctypes": ctypes_defines, "brs-sys": rust_defines, "swig": swig_defines,
           "julia": julia_defines}


CHECKS = {"ctypes": ctypes_wrapped, "brs-sys": rust_wrapped, "swig": swig_wrapped,
          "julia": julia_wrapped}


def read_exemptions(path, symbols, problems):
    """{(binding, symbol): reason} from not_wrapped.txt; malformed lines are problems."""
    exemptions = {}
    if not path.exists():
        return exemptions
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split(None, 2)
        where = f"{path.name}:{number}"
        if len(fields) < 3:
            problems.append(f"{where}: needs '<binding> <symbol> <reason>'")
        elif fields[0] not in BINDINGS:
            problems.append(f"{where}: unknown binding {fields[0]!r} (one of {', '.join(BINDINGS)})")
        elif fields[1] not in symbols:
            problems.append(f"{where}: {fields[1]} is not exported by libbrs.sym")
        else:
            exemptions[(fields[0], fields[1])] = fields[2]
    return exemptions


def binding_sources(root, binding):
    files = sorted(root.glob(BINDINGS[binding]))
    return [f.read_text() for f in files]


def check(root):
    """The list of problems; empty when every binding covers every symbol."""
    problems = []
    symbols = exported_symbols(root)
    if not symbols:
        return [f"no global symbols found in {root / 'libbrs' / 'libbrs.sym'}"]
    exemptions = read_exemptions(root / "tests" / "coverage" / "not_wrapped.txt", symbols,
                                 problems)
    for binding, wrapped in CHECKS.items():
        sources = binding_sources(root, binding)
        if not sources:
            problems.append(f"{binding}: no files match {BINDINGS[binding]}")
            continue
        for constant in header_constants(root):
            if not any(DEFINES[binding](text, constant) for text in sources):
                problems.append(f"{binding}: {constant} of include/brs.h is not defined "
                                f"({BINDINGS[binding]}); add it with the header's value")
        for symbol in symbols:
            is_wrapped = any(wrapped(text, symbol) for text in sources)
            exempt = (binding, symbol) in exemptions
            if not is_wrapped and not exempt:
                problems.append(f"{binding}: {symbol} is not wrapped ({BINDINGS[binding]}); "
                                "wrap it or list it in tests/coverage/not_wrapped.txt with a reason")
            elif is_wrapped and exempt:
                problems.append(f"{binding}: {symbol} is wrapped but listed in not_wrapped.txt; "
                                "remove the line")
    return problems


def main(argv):
    root = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    problems = check(root)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"binding coverage: {len(problems)} problems", file=sys.stderr)
        return 1
    print(f"binding coverage: {len(exported_symbols(root))} symbols and "
          f"{len(header_constants(root))} option constants x {len(BINDINGS)} bindings ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
