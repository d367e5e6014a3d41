#!/usr/bin/env python3
"""The dynamic symbol table of libbrs.so.1 is exactly the version script.

    check_symbols.py LIBRARY.so.1 LIBBRS.SYM [BRS.H]

Checks, on the built library:
  - SONAME is libbrs.so.1;
  - the defined dynamic symbols (nm -D --defined-only) equal the symbols of
    the version script, all named brs_*;
  - every one of them has the version node the script gives it (readelf
    --dyn-syms), LIBBRS_1.0 for the 1.0 ABI, LIBBRS_1.N for later additions;
  - with BRS.H: the header declares exactly those functions.
Exits 1 with one line per problem; 0 when all hold.
"""
import re
import subprocess
import sys

SONAME = "libbrs.so.1"
NODE = "LIBBRS_1.0"


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def version_script_nodes(path):
    """{symbol: version node} for the names listed as `name;` in the global
    part of each node of the version script (globs and local: are skipped)."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/|#[^\n]*", "", f.read(), flags=re.S)
    nodes = {}
    for node, body in re.findall(r"([A-Za-z_][\w.]*)\s*\{(.*?)\}\s*[\w.]*\s*;", text, flags=re.S):
        exported = body.split("local:")[0].replace("global:", "")
        for name in re.findall(r"([A-Za-z_]\w*)\s*;", exported):
            nodes[name] = node
    return nodes


def header_functions(path):
    """Functions declared with BRS_API in the public header."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return set(re.findall(r"^\s*BRS_API\s[^;(#]*?\b(brs_\w+)\s*\(", text, flags=re.M))


def is_version_definition(name, absolute):
    """The linker defines one absolute symbol per version node (LIBBRS_1.0)."""
    return absolute and re.fullmatch(r"LIBBRS_\d+\.\d+", name) is not None


def exported_symbols(lib):
    """Defined dynamic symbols, without the version definitions."""
    names = set()
    for line in run("nm", "-D", "--defined-only", lib).splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        name = fields[2].split("@")[0]
        if not is_version_definition(name, fields[1] == "A"):
            names.add(name)
    return names


def symbol_versions(lib):
    """{name: version node} of the defined dynamic symbols (readelf)."""
    versions = {}
    for line in run("readelf", "--dyn-syms", "-W", lib).splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) < 8 or not fields[0].rstrip(":").isdigit() or fields[6] == "UND":
            continue
        name, _, version = fields[7].partition("@")
        if not is_version_definition(name, fields[6] == "ABS"):
            versions[name] = version.lstrip("@")
    return versions


def soname(lib):
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", run("readelf", "-d", lib))
    return m.group(1) if m else None


def problems(lib, script, header=None):
    nodes = version_script_nodes(script)
    wanted = set(nodes)
    exported = exported_symbols(lib)
    found = []
    if soname(lib) != SONAME:
        found.append(f"SONAME is {soname(lib)!r}, expected {SONAME!r}")
    if not wanted:
        found.append(f"{script} lists no symbols")
    found += [f"{n}: exported but not in {script}" for n in sorted(exported - wanted)]
    found += [f"{n}: in {script} but not exported" for n in sorted(wanted - exported)]
    found += [f"{n}: exported, but not a brs_* name" for n in sorted(exported) if not n.startswith("brs_")]
    for name, version in sorted(symbol_versions(lib).items()):
        expected = nodes.get(name, NODE)
        if version != expected:
            found.append(f"{name}: in version node {version or '(none)'!r}, expected {expected!r}")
    # SONAME 1 starts at LIBBRS_1.0; later additions go to LIBBRS_1.N nodes.
    found += [f"{n}: in node {v!r} of {script}, not a LIBBRS_1.N node"
              for n, v in sorted(nodes.items()) if not re.fullmatch(r"LIBBRS_1\.\d+", v)]
    if header:
        declared = header_functions(header)
        found += [f"{n}: declared in {header} but not in {script}" for n in sorted(declared - wanted)]
        found += [f"{n}: in {script} but not declared in {header}" for n in sorted(wanted - declared)]
    return found


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    found = problems(*argv[1:])
    for line in found:
        print("FAIL:", line)
    if not found:
        nodes = sorted(set(version_script_nodes(argv[2]).values()))
        print(f"PASS: {len(exported_symbols(argv[1]))} brs_* symbols in {', '.join(nodes)}, SONAME {SONAME}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
