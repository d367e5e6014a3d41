#!/usr/bin/env python3
"""Every repository path or file that a comment or a document names exists.

    check_paths.py SOURCE_ROOT
    check_paths.py --selftest

Reads the comments of C, SWIG and Rust files, the comments and docstrings of Python files (and
of scripts whose first line runs python), the comments of meson.build files, shell scripts and
Julia, and every Markdown file, of the files git lists (tracked, or new and not ignored), for
two kinds of names:

- a path, a word with a '/': one that begins with a top-level folder of the tree (libbrs/,
  tests/, ...) or '..' must exist from the naming file's folder, one of its parents or the
  root; one that begins elsewhere and ends with a file name (api/plan.c, brs/_trial/run.py)
  must also be there, or end some path of the tree;
- a bare file name with one of the endings of EXTENSIONS (plan.c, _c_command.py) must be the
  name of some file of the tree.

A name may carry a line (settings.c:45) or a test (test_cli.py::test_x); a glob
(data/*.lengths) must match a file. What git ignores (bench/out/), build outputs (*.so),
URLs, absolute paths and placeholders (<name>, OUT/, $VAR, an elision) are no names of the
tree. A file of another project that a comment means on purpose (upstream Lightning's
strategies/parallel.py) is listed in not_in_tree.txt beside this script, with why.
Fails listing each missing name as file:line: name.
"""
import contextlib
import ast
import fnmatch
import io
import pathlib
import re
import subprocess
import sys
import tempfile
import tokenize

# Endings of the files that comments point at: a bare word with one of them is a file name of
# this tree. Data endings (.json, .lengths, .txt) are left to paths: a bare data.lengths or
# model.json is an example a document makes up.
EXTENSIONS = ("c", "h", "def", "sym", "py", "pyi", "md", "rs", "jl", "i", "cpp", "sh", "abi")
# A word as comments and documents write names: letters, digits and the characters of paths,
# globs, placeholders and line suffixes.
WORD = re.compile(r"[A-Za-z0-9_.\-/*{}<>,:]+")
FILE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z0-9_\-]+)*\.("
                       + "|".join(EXTENSIONS) + r")$")
# Capitalised names of real documents; any other ALL-CAPS part (OUT/, FILE.md) is a placeholder.
DOCUMENTS = {"README", "LICENSE", "DESIGN", "STYLE", "CHANGELOG", "CONTRIBUTING"}
# Names that are not of the tree: the home or an absolute path, a variable, a URL, a build dir.
NOT_TREE = ("/", "~", "$", "http:", "https:", "file:", "build/", "build-")
NOT_IN_TREE = "not_in_tree.txt"


def tree_files(root):
    """The repository's files (tracked, or untracked and not ignored), as relative paths."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"], capture_output=True, text=True, check=True).stdout
        names = [name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        names = [str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()]
    return sorted(name for name in set(names) if (root / name).is_file())


def ignored(root, names):
    """The names git ignores (what a build or a run writes: bench/out/, build/)."""
    if not names:
        return set()
    try:
        run = subprocess.run(["git", "-C", str(root), "check-ignore", "--no-index", "--stdin"],
                             input="\n".join(names), capture_output=True, text=True)
    except OSError:
        return set()
    return set(run.stdout.split("\n")) - {""}


class Tree:
    """What exists: files and folders, relative to the root."""

    def __init__(self, files):
        self.files = set(files)
        self.folders = {str(parent) for f in files
                        for parent in pathlib.PurePosixPath(f).parents if str(parent) != "."}
        self.top = {f.split("/")[0] for f in files if "/" in f}
        self.basenames = {f.rsplit("/", 1)[-1] for f in files}
        self.everything = sorted(self.files | self.folders)

    def exists(self, path):
        return path in self.files or path in self.folders

    def ends_some_path(self, name):
        return any(f == name or f.endswith("/" + name) for f in self.everything)

    def matches(self, pattern):
        """Some path matches the glob (** matching any folders, none included)."""
        patterns = {pattern.replace("**/", ""), pattern.replace("**", "*")}
        return any(fnmatch.fnmatch(f, p) for p in patterns for f in self.everything)


def names_in(word):
    """The names a word may hold: without line numbers (plan.c:12), test ids (::test_x) or
    trailing punctuation; a PYTHONPATH-like a:b gives both."""
    names = []
    for part in word.split("::")[0].split(":"):
        part = part.strip(".,;'`")
        if part and not part.isdigit() and not re.fullmatch(r"[\d,\-]+", part):
            names.append(part)
    return names


def placeholder(name):
    """A made-up name: <name>, OUT/x.json, 1.N, an elision, brs/_x.py."""
    if any(ch in name for ch in "<>{},") or "..." in name or name.startswith(NOT_TREE):
        return True
    for piece in re.split(r"[/._\-]", name):
        if re.fullmatch(r"[A-Z][A-Z0-9]*", piece) and piece not in DOCUMENTS:
            return True
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0].strip("_")
    return (len(stem) < 2 and "*" not in name) or ".so" in name


def candidates(folder):
    """The folders a relative name may start from: the naming file's, its parents', the root."""
    path = pathlib.PurePosixPath(folder)
    return [str(p) for p in [path, *path.parents] if str(p) != "."] + [""]


def resolve(base, name):
    joined = pathlib.PurePosixPath(base, name) if base else pathlib.PurePosixPath(name)
    parts = []
    for part in joined.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def missing(name, tree, folder):
    """Whether `name` names a file or folder of the tree that is not there (False when it is
    there or names nothing of the tree). `folder` holds the file naming it."""
    if placeholder(name):
        return False
    if "/" not in name:
        return bool(FILE_NAME.match(name)) and name not in tree.basenames
    name = name.rstrip("/")
    first, last = name.split("/")[0], name.rsplit("/", 1)[-1]
    anchored = first in tree.top or first == ".."
    if not anchored and not FILE_NAME.match(last.replace("*", "x")):
        return False  # a word with a slash that names no file: and/or, tokens/s
    for base in candidates(folder):
        where = resolve(base, name)
        if where and (tree.matches(where) if "*" in where else tree.exists(where)):
            return False
    return anchored or not tree.ends_some_path(name)


# ---------------------------------------------------------------------------------------------
# The text of comments and documents, line by line: (line number, text).
# ---------------------------------------------------------------------------------------------

def c_comments(text):
    """The comments of a C file with their line numbers (strings and characters skipped)."""
    out = []
    i, line, n = 0, 1, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            for offset, part in enumerate(text[i + 2:end].split("\n")):
                out.append((line + offset, part))
            line += text.count("\n", i, end)
            i = end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append((line, text[i + 2:end]))
            i = end
        elif ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            if ch == "\n":
                line += 1
            i += 1
    return out


def python_comments(text):
    """The comments and docstrings of a Python file with their line numbers."""
    out = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                out.append((token.start[0], token.string[1:]))
    except (tokenize.TokenError, SyntaxError):
        pass
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                first = body[0].lineno
                for offset, part in enumerate(body[0].value.value.split("\n")):
                    out.append((first + offset, part))
    return out


def hash_comments(text):
    """The comments of a meson.build file, a shell script or Julia: from a # outside quotes."""
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("#!"):
            continue
        quote = None
        for at, ch in enumerate(line):
            if quote:
                quote = None if ch == quote else quote
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                out.append((number, line[at + 1:]))
                break
    return out


def markdown_lines(text):
    return list(enumerate(text.split("\n"), 1))


def reader(path, text):
    """How to find the comments of a file, or None for a file that is not read."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith((".c", ".h", ".def", ".cpp", ".i", ".rs")):
        return c_comments
    if name.endswith(".py"):
        return python_comments
    if name.endswith(".md"):
        return markdown_lines
    if name == "meson.build" or name.endswith((".sh", ".jl")):
        return hash_comments
    first = text.split("\n", 1)[0]
    if first.startswith("#!") and "python" in first:
        return python_comments
    if first.startswith("#!") and re.search(r"\b(ba)?sh\b", first):
        return hash_comments
    return None


def not_in_tree(root):
    """The names comments mean outside the tree on purpose (not_in_tree.txt: name, then why)."""
    listed = root / "tests" / "coverage" / NOT_IN_TREE
    if not listed.exists():
        return set()
    lines = listed.read_text(encoding="utf-8").split("\n")
    return {line.split()[0] for line in lines if line.strip() and not line.startswith("#")}


def check(root):
    """Each missing name as 'file:line: name'."""
    files = tree_files(root)
    tree = Tree(files)
    allowed = not_in_tree(root)
    found = []
    for path in files:
        try:
            text = (root / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        read = reader(path, text)
        if read is None:
            continue
        folder = str(pathlib.PurePosixPath(path).parent)
        for number, line in read(text):
            for word in WORD.findall(line):
                for name in names_in(word):
                    if name not in allowed and missing(name, tree, folder):
                        found.append((path, number, name))
    skip = ignored(root, sorted({name.rstrip("/") for _, _, name in found}))
    return [f"{path}:{number}: {name}" for path, number, name in found
            if name.rstrip("/") not in skip]


SELFTEST = {
    "libbrs/api/plan.c": "/* Guards of api/plan.c and docs/guide.md; see plan.c:12. */\n"
                         "// planner/padding.h is gone\n"
                         "int x = 0; /* libbrs/api/config.h */\n"
                         "const char *s = \"gone.c in a string is code, not a comment\";\n",
    "docs/guide.md": "Read `libbrs/api/plan.c:3`, tests/*.lengths, [api](../libbrs/api/).\n"
                     "Not and/or, tokens/s, OUT/report.md, <name>.c, libbrs/libbrs.so.1, "
                     "bench/out/x.json or https://x.org/a.py.\n"
                     "Stale: docs/missing.md and plan_load.c; PYTHONPATH=docs:cli/gone.c.\n",
    "bindings/python/run.py": '"""Runs libbrs/api/plan.c and tests/x_test.py."""\n'
                              "# see cli/nothing.c and upstream.py\n"
                              'x = "cli/in_a_string.c"\n',
    "bindings/python/tests/x_test.py": "",
    "tests/coverage/" + NOT_IN_TREE: "upstream.py  a file of another project\n",
    "bench/run.sh": "# writes bench/out/\n",
    ".gitignore": "/bench/out/\n",
}
SELFTEST_MISSING = {
    "docs/guide.md:1: tests/*.lengths",
    "docs/guide.md:3: docs/missing.md",
    "docs/guide.md:3: plan_load.c",
    "docs/guide.md:3: cli/gone.c",
    "libbrs/api/plan.c:2: planner/padding.h",
    "libbrs/api/plan.c:3: libbrs/api/config.h",
    "bindings/python/run.py:2: cli/nothing.c",
}


def selftest():
    """The check names each stale pointer, passes the names that exist, and a glob passes
    once a file matches it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, text in SELFTEST.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        found = set(check(root))
        with contextlib.redirect_stdout(io.StringIO()):
            failed = main(["check_paths.py", str(root)]) == 1
        if not failed or found != SELFTEST_MISSING:
            print("selftest: expected", sorted(SELFTEST_MISSING), "found", sorted(found))
            return 1
        (root / "tests" / "a.lengths").write_text("1\n")
        if "docs/guide.md:1: tests/*.lengths" in check(root):
            print("selftest: a glob that matches a file was reported")
            return 1
    print("selftest: ok")
    return 0


def main(argv):
    if argv[1:] == ["--selftest"]:
        return selftest()
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    found = check(pathlib.Path(argv[1]).resolve())
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} names in comments and documents are not in the tree: fix each "
              f"pointer, or list a name meant outside the tree in tests/coverage/{NOT_IN_TREE}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
