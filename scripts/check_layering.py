#!/usr/bin/env python3
"""Checks that libbrs/ is layered as libbrs/README.md says: no circle between its files, and
calls go one way (api -> planner -> util, draw and formats beside util).

The graph has one node per file under libbrs/ (.c, .h and .def alike) and an edge A -> B where
  - A includes B (#include "util/wide.h", from libbrs/ or beside A), or
  - A calls or names an external function or object that B defines (a non-static definition
    at file scope of a .c, or a static inline one of a header), or
  - A is a .c that includes a .def table whose BRS_CANDIDATE(name) row names
    brs_name_candidate, defined in B (the table expands into A; a header including it only
    declares the rows).
Comments and string literals are stripped first, so a comment naming a function is no call.
A header and its own .c are two nodes: a header only declares, so the .c including its own
header never closes a circle with it; a static inline of a header calling its own .c (same
folder, same name) is the same unit and no edge.

A circle is a strongly connected component of more than one file (Tarjan's algorithm): every
file of it reaches every other. The check fails where there is one, and where a file of
formats/, util/ or draw/ includes or calls into api/, or one of planner/ does.

Usage: check_layering.py [LIBBRS_DIR]   (default: the libbrs/ beside this script's folder)
Exit status 0 when the graph is clean, 1 with one line per problem otherwise.
"""
import pathlib
import re
import sys

SOURCE_SUFFIXES = (".c", ".h", ".def")
# Which top folders may not reach which: a lower layer never reaches up.
FORBIDDEN = {
    "formats": ("api",),
    "util": ("api",),
    "draw": ("api",),
    "planner": ("api",),
}

_COMMENT_OR_STRING = re.compile(
    r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_CANDIDATE_ROW = re.compile(r"\bBRS_CANDIDATE\(\s*(\w+)\s*\)")
# A definition at file scope: a line that starts at column 0 with a type and the name, then
# either a parameter list and a brace (a function) or an initializer (an object).
_FUNCTION = re.compile(r"^(?!static\b(?!\s+inline))([A-Za-z_][\w \t\*]*?)\b(\w+)\s*\(([^;{]*?)\)\s*\{",
                       re.M | re.S)
_OBJECT = re.compile(r"^(?!static\b)(?:const\s+)?(?:struct\s+)?\w[\w \t\*]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*=",
                     re.M)
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "else", "do"}


def strip(text):
    """The text without comments and string literals (newlines kept, so lines still count)."""
    return _COMMENT_OR_STRING.sub(lambda m: "\n" * m.group(0).count("\n") or " ", text)


def definitions(name, code):
    """The external names a file defines: a .c's non-static functions and objects at file
    scope, a header's static inline functions."""
    found = set()
    for m in _FUNCTION.finditer(code):
        head, fn = m.group(1), m.group(2)
        if fn in _KEYWORDS or head.strip() in _KEYWORDS:
            continue
        is_inline = "inline" in head.split()
        if name.endswith(".h") and not is_inline:
            continue
        if name.endswith(".c") and head.lstrip().startswith("static"):
            continue
        found.add(fn)
    if name.endswith(".c"):
        for m in _OBJECT.finditer(code):
            found.add(m.group(1))
    return found


def inline_bodies(code):
    """The bodies of a header's static inline functions: what a header calls. Its prototypes
    only declare, so they are no edge."""
    bodies = []
    for m in _FUNCTION.finditer(code):
        if "inline" not in m.group(1).split():
            continue
        depth, i = 1, m.end()
        while depth and i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        bodies.append(code[m.end():i])
    return "\n".join(bodies)


def build_graph(files):
    """files: {relative path: text}. Returns {node: set of nodes it reaches in one edge}."""
    codes = {name: strip(text) for name, text in files.items()}
    owner = {}
    for name, code in codes.items():
        for symbol in definitions(name, code):
            owner.setdefault(symbol, name)
    graph = {name: set() for name in files}
    for name, code in codes.items():
        for m in _INCLUDE.finditer(files[name]):
            target = m.group(1)
            if target not in files:  # a path beside the including file
                target = pathlib.PurePosixPath(name).parent.joinpath(target).as_posix()
            if target in files and target != name:
                graph[name].add(target)
            if name.endswith(".c") and target.endswith(".def"):
                for row in _CANDIDATE_ROW.findall(codes[target]):
                    if owner.get("brs_%s_candidate" % row):
                        graph[name].add(owner["brs_%s_candidate" % row])
        own_source = name[:-2] + ".c" if name.endswith(".h") else None
        for ident in set(_IDENT.findall(code if name.endswith(".c") else inline_bodies(code))):
            target = owner.get(ident)
            if target and target != name and target != own_source:
                graph[name].add(target)
    return graph


def circles(graph):
    """The strongly connected components of more than one node, each sorted, in sorted order
    (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    result.append(sorted(component))
    return sorted(result)


def layer_problems(graph):
    """Edges from a lower folder up into one it may not reach."""
    found = []
    for name in sorted(graph):
        top = name.split("/")[0]
        for target in sorted(graph[name]):
            if target.split("/")[0] in FORBIDDEN.get(top, ()):
                found.append("%s reaches %s: %s/ may not reach %s/" %
                             (name, target, top, target.split("/")[0]))
    return found


def problems(files):
    graph = build_graph(files)
    found = ["circle: " + " <-> ".join(c) for c in circles(graph)]
    return found + layer_problems(graph)


def read_tree(root):
    root = pathlib.Path(root)
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*")) if p.suffix in SOURCE_SUFFIXES and p.is_file()}


def main(argv):
    root = argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / "libbrs"
    files = read_tree(root)
    if not files:
        print("check_layering: no sources under %s" % root)
        return 1
    found = problems(files)
    for line in found:
        print(line)
    print("check_layering: %d files, %d problems" % (len(files), len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
