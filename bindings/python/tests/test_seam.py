"""The seam between brs's core, its integrations and the benchmarks (docs/python.md, layers).

The rules, read off the sources (ast), never by importing them:
- a name that starts with one underscore is private to the file that defines it: no file uses
  another's ``_name`` (``obj._name`` where the file defines no ``_name``, or ``from m import
  _name``);
- an underscore module is private to its package: ``brs/_x.py`` serves the core (brs/ and
  brs/calibration/), ``brs/integrations/_x.py`` the integrations; the benchmarks use none;
- the core imports no integration, not even inside a function;
and, in a fresh interpreter, ``import brs`` and the core's work (a sampler iterated, a plan,
plan_batch, the calibration's modules) load no training framework.
"""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BRS = ROOT / "bindings" / "python" / "brs"
BENCH = ROOT / "bench"
FRAMEWORKS = ("lightning", "pytorch_lightning", "transformers", "accelerate")

# Private names of other projects that brs or the benchmarks use on purpose, and why. A name
# here is allowed everywhere; keep the list short.
FOREIGN = {
    # transformers.Trainer's own state, read by BatchRebalanceMixin (a Trainer subclass) to build
    # the loader the Trainer would: the per-device batch size and its column pruning.
    "_train_batch_size": "transformers.Trainer",
    "_remove_unused_columns": "transformers.Trainer",
    "_get_collator_with_removed_columns": "transformers.Trainer",
    # transformers' BatchRebalanceSampler's split of a step: the peer the trial and the
    # benchmarks measure, reached from brs/peers.py alone (test_one_module_reaches_assign).
    "_assign": "transformers BatchRebalanceSampler",
    # torch's compiler, whose recompilations a benchmark counts.
    "_dynamo": "torch._dynamo",
}


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _sources():
    """(module name, path) of every file of brs and of the benchmarks."""
    for path in sorted(BRS.rglob("*.py")):
        parts = ("brs",) + path.relative_to(BRS).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path
    for path in sorted(BENCH.rglob("*.py")):
        # results and bench/run's git-ignored outputs (peers installed with pip --target) are
        # not the benchmarks' code
        if {"results", "out"} & set(path.relative_to(BENCH).parts):
            continue
        parts = path.relative_to(BENCH).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


SOURCES = dict(_sources())
# The top-level names of those modules: an import of anything else is another project's.
OURS = {module.split(".")[0] for module in SOURCES}


def _package(module, path):
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _absolute(node, module, path):
    """The module a (possibly relative) ``from ... import`` names."""
    if not node.level:
        return node.module
    base = _package(module, path).split(".")
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _core(module):
    return module == "brs" or (module.startswith("brs.")
                               and not module.startswith("brs.integrations"))


def _module_allowed(target, importer, path):
    """May ``importer`` import module ``target``? Each underscore component must belong to
    the importer's own package; brs's private modules serve brs.calibration too (the core)."""
    parts = target.split(".")
    package = _package(importer, path)
    for i, part in enumerate(parts):
        if _private(part):
            owner = ".".join(parts[:i])
            if package != owner and not (owner == "brs" and package.startswith("brs.")
                                         and _core(package)):
                return False
    return True


def _defined(tree):
    """Every name this file defines or binds: functions, classes, assigned names and
    attributes, arguments, imports."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def _violations(module, path):
    tree = ast.parse(path.read_text(), str(path))
    defined = _defined(tree)
    shown = path.relative_to(ROOT) if ROOT in path.parents else path
    where = f"{shown}:{{}}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OURS:
                    yield from _check_import(alias.name, module, path, where.format(node.lineno))
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, path)
            if source.split(".")[0] not in OURS:
                continue
            yield from _check_import(source, module, path, where.format(node.lineno))
            for alias in node.names:
                target = f"{source}.{alias.name}"
                if target in SOURCES:
                    yield from _check_import(target, module, path, where.format(node.lineno))
                elif _private(alias.name):
                    yield f"{where.format(node.lineno)}: imports {alias.name}, private to {source}"
        elif (isinstance(node, ast.Attribute) and _private(node.attr)
              and node.attr not in defined and node.attr not in FOREIGN):
            yield (f"{where.format(node.lineno)}: uses {ast.unparse(node)}, an underscore name "
                   "this file does not define")


def _check_import(target, module, path, where):
    if not _module_allowed(target, module, path):
        yield f"{where}: imports {target}, private to another package"
    if _core(module) and target.startswith("brs.integrations"):
        yield f"{where}: the core imports the integration {target}"


def test_the_scan_sees_the_tree():
    assert "brs.sampler" in SOURCES and "brs.integrations.accelerate" in SOURCES
    assert "brs.calibration.online" in SOURCES and "brsbench.library" in SOURCES


def test_no_file_reaches_into_another():
    found = [line for module, path in SOURCES.items() for line in _violations(module, path)]
    assert not found, "\n".join(found)


def test_the_scan_catches_what_it_forbids(tmp_path):
    # The rules fail where they should: a file that reaches into the sampler and a private
    # module of the core from the integrations, and a core file importing an integration.
    integration = tmp_path / "probe.py"
    integration.write_text("from brs import _options\nfrom brs.sampler import _keyword\n"
                           "def f(sampler):\n    return sampler._given\n")
    found = list(_violations("brs.integrations.probe", integration.resolve()))
    assert len(found) == 3, found
    core = tmp_path / "core.py"
    core.write_text("def f():\n    from .integrations import lightning\n")
    assert list(_violations("brs.core", core.resolve()))


_CORE_WORK = """
import json, sys
import brs
from brs import calibration, cost_model, native, options, arguments, recreation
from brs.calibration import fit, online, result
sampler = brs.BatchRebalanceSampler([5, 9, 2, 7, 3, 8, 1, 6], per_device_batch_size=2,
                                    grad_accum=2, dp_size=1, rank=0)
batches = list(sampler)
sampler.plan(0)
brs.plan_batch([5, 9, 2, 7], dp_size=2)
print(json.dumps(sorted(sys.modules)))
"""


def test_the_core_loads_no_framework():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(BRS.parent)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", _CORE_WORK], env=env, capture_output=True,
                         text=True, check=True).stdout
    loaded = {name.split(".")[0] for name in json.loads(out.splitlines()[-1])}
    assert not loaded & set(FRAMEWORKS), sorted(loaded & set(FRAMEWORKS))
    assert "brs.integrations" not in json.loads(out.splitlines()[-1])


def test_one_module_reaches_the_peers_assign():
    """transformers' private BatchRebalanceSampler._assign is used by brs/peers.py alone; the
    trial, the benchmarks and the tests call brs.peers."""
    users = set()
    for module, path in SOURCES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "_assign":
                users.add(module)
    assert users == {"brs.peers"}

