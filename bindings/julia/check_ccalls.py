#!/usr/bin/env python3
"""Every ccall of the Julia package matches brs.h, without a Julia runtime.

    check_ccalls.py BRS.H LIBBRS.SYM DIR

Parses every .jl file under DIR with tree-sitter-julia (a parse error
fails), finds each `ccall((:symbol, library), ReturnType, (ArgTypes...), args...)`
and checks that
  - the symbol is exported by libbrs.sym and declared in brs.h;
  - the return type and every argument type are a Julia spelling of the C
    type of the prototype (int32_t and the brs_* int32 typedefs -> Int32,
    uint64_t -> UInt64, size_t -> Csize_t, double -> Cdouble,
    const char * -> Cstring or Ptr{UInt8}, T * -> Ptr{T'} or Ref{T'},
    opaque handles -> Ptr{Cvoid});
  - the call passes as many arguments as it declares types;
and that every symbol of libbrs.sym is called somewhere. Exit 77 (skip) only
when the tree-sitter packages cannot be imported.
"""
import os
import re
import sys

SKIP = 77

SCALARS = {
    "int32_t": {"Int32", "Cint"},
    "uint32_t": {"UInt32", "Cuint"},
    "int64_t": {"Int64", "Clonglong"},
    "uint64_t": {"UInt64", "Culonglong"},
    "size_t": {"Csize_t"},
    "double": {"Cdouble", "Float64"},
}
CHAR = {"UInt8", "Cchar"}
VOID = {"Cvoid", "Nothing"}


# --- the C side: prototypes of brs.h and symbols of libbrs.sym -------------

def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def read_header(path):
    """({name: (return type, [parameter types])}, {typedef: target})."""
    with open(path, encoding="utf-8") as f:
        code = strip_comments(f.read())
    typedefs = {name: " ".join(target.split())
                for target, name in re.findall(r"\btypedef\s+([^;]+?)\s+(brs_\w+)\s*;", code)}
    prototypes = {}
    pattern = r"^\s*BRS_API\s+([^;(#]*?)\b(brs_\w+)\s*\(([^)]*)\)\s*;"
    for ret, name, params in re.findall(pattern, code, flags=re.M):
        types = [] if params.strip() == "void" else [param_type(p) for p in params.split(",")]
        prototypes[name] = (" ".join(ret.split()), types)
    return prototypes, typedefs


def param_type(param):
    """'const uint32_t *lengths' -> 'const uint32_t *' (drop the name)."""
    param = " ".join(param.replace("*", " * ").split())
    words = param.split(" ")
    if len(words) > 1 and re.fullmatch(r"[A-Za-z_]\w*", words[-1]) and words[-2] != "const":
        words = words[:-1]
    return " ".join(words)


def read_symbols(path):
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/|#[^\n]*", "", f.read(), flags=re.S)
    exported = set()
    for body in re.findall(r"\{(.*?)\}", text, flags=re.S):
        exported |= set(re.findall(r"([A-Za-z_]\w*)\s*;", body.split("local:")[0]))
    return exported


def julia_spellings(c_type, typedefs, is_return):
    """The Julia types a ccall may write for a C type."""
    words = c_type.replace("*", " * ").split()
    depth = words.count("*")
    base = [w for w in words if w not in ("const", "*")]
    if len(base) != 1:
        return set()
    name = typedefs.get(base[0], base[0])
    if depth == 0:
        if name == "void":
            return VOID if is_return else set()
        return SCALARS.get(name, set())
    if name.startswith("struct ") or name == "void":
        pointee = {"Cvoid"}
    elif name == "char":
        pointee = CHAR
    else:
        pointee = SCALARS.get(name, set())
    for _ in range(depth - 1):
        pointee = {f"Ptr{{{t}}}" for t in pointee}
    # Ref{T} lets Julia pass the address of a value it manages; an opaque
    # handle is only ever a Ptr{Cvoid} held by the caller.
    opaque_handle = depth == 1 and pointee == {"Cvoid"}
    outer = {"Ptr"} if is_return or opaque_handle else {"Ptr", "Ref"}
    spellings = {f"{w}{{{t}}}" for w in outer for t in pointee}
    if name == "char" and depth == 1:
        spellings.add("Cstring")
    return spellings


# --- the Julia side: ccalls found by tree-sitter ----------------------------

def load_parser():
    try:
        import tree_sitter
        import tree_sitter_julia
    except ImportError as e:
        print(f"SKIP: cannot import tree-sitter / tree-sitter-julia ({e}); "
              "pip install tree-sitter tree-sitter-julia")
        sys.exit(SKIP)
    language = tree_sitter.Language(tree_sitter_julia.language())
    try:
        return tree_sitter.Parser(language)
    except TypeError:  # py-tree-sitter before 0.22
        parser = tree_sitter.Parser()
        parser.set_language(language)
        return parser


def walk(node):
    yield node
    for child in node.children:
        yield from walk(child)


def text(node):
    return node.text.decode("utf-8")


def arguments(call):
    """Named children of a call's argument_list, comments left out."""
    args = call.child_by_field_name("arguments") or next(
        (c for c in call.named_children if c.type == "argument_list"), None)
    if args is None:
        return []
    return [c for c in args.named_children if "comment" not in c.type]


def tuple_items(node):
    if node.type == "tuple_expression":
        return [c for c in node.named_children if "comment" not in c.type]
    return None


class Ccall:
    def __init__(self, where, symbol, ret, types, nargs):
        self.where, self.symbol, self.ret, self.types, self.nargs = where, symbol, ret, types, nargs


def find_ccalls(tree, path, problems):
    calls = []
    for node in walk(tree.root_node):
        if node.type == "macrocall_expression" and text(node).startswith("@ccall"):
            problems.append(f"{path}:{node.start_point[0] + 1}: use ccall((:symbol, libbrs()), ...), "
                            "not @ccall, so this check can read it")
        if node.type != "call_expression" or not node.named_children:
            continue
        callee = node.named_children[0]
        if callee.type != "identifier" or text(callee) != "ccall":
            continue
        where = f"{path}:{node.start_point[0] + 1}"
        args = arguments(node)
        spec = tuple_items(args[0]) if args else None
        if not spec or spec[0].type != "quote_expression" or len(args) < 3:
            problems.append(f"{where}: ccall must be ccall((:symbol, library), Return, (Types...), args...)")
            continue
        types = tuple_items(args[2])
        if types is None:
            problems.append(f"{where}: the argument types must be a literal tuple, e.g. (Int32,)")
            continue
        symbol = text(spec[0]).lstrip(":")
        clean = lambda n: re.sub(r"\s+", "", text(n))
        calls.append(Ccall(where, symbol, clean(args[1]), [clean(t) for t in types], len(args) - 3))
    return calls


def parse_errors(tree, path):
    found = []
    for node in walk(tree.root_node):
        if node.type == "ERROR" or node.is_missing:
            row, col = node.start_point
            found.append(f"{path}:{row + 1}:{col + 1}: parse error near {text(node)[:40]!r}")
    if tree.root_node.has_error and not found:
        found.append(f"{path}: parse error")
    return found


def check_call(call, prototypes, typedefs, exported):
    if call.symbol not in exported:
        return [f"{call.where}: {call.symbol} is not exported by libbrs.sym"]
    if call.symbol not in prototypes:
        return [f"{call.where}: {call.symbol} is not declared in brs.h"]
    c_ret, c_params = prototypes[call.symbol]
    found = []
    if call.ret not in julia_spellings(c_ret, typedefs, is_return=True):
        found.append(f"{call.where}: {call.symbol} returns '{c_ret}', not {call.ret}")
    if len(call.types) != len(c_params):
        found.append(f"{call.where}: {call.symbol} takes {len(c_params)} arguments, ccall declares {len(call.types)}")
    for i, (jl, c) in enumerate(zip(call.types, c_params), 1):
        allowed = julia_spellings(c, typedefs, is_return=False)
        if jl not in allowed:
            found.append(f"{call.where}: {call.symbol} argument {i} is '{c}' "
                         f"({' or '.join(sorted(allowed))}), not {jl}")
    if call.nargs != len(call.types):
        found.append(f"{call.where}: {call.symbol}: {len(call.types)} types but {call.nargs} arguments")
    return found


def jl_files(root):
    for directory, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if name.endswith(".jl"):
                yield os.path.join(directory, name)


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    header, symbol_file, root = argv[1:]
    parser = load_parser()
    prototypes, typedefs = read_header(header)
    exported = read_symbols(symbol_file)
    problems, calls, files = [], [], list(jl_files(root))
    if not files:
        problems.append(f"no .jl files under {root}")
    for path in files:
        with open(path, "rb") as f:
            tree = parser.parse(f.read())
        problems += parse_errors(tree, os.path.relpath(path, root))
        calls += find_ccalls(tree, os.path.relpath(path, root), problems)
    for call in calls:
        problems += check_call(call, prototypes, typedefs, exported)
    called = {c.symbol for c in calls}
    problems += [f"{name} (libbrs.sym) is never called through ccall" for name in sorted(exported - called)]
    for line in problems:
        print("FAIL:", line)
    if not problems:
        print(f"PASS: {len(files)} .jl files parse; {len(calls)} ccalls match brs.h; "
              f"all {len(exported)} symbols of libbrs.sym are called")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
