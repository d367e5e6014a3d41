"""Runs the fenced code blocks of README.md and docs/*.md, each as its own test case.

A recipe in the docs is a promise about the pinned versions of requirements-test.txt; this module
keeps the promise checked. Case ids name the file and the line of the opening fence
("docs/trainer.md:55"). By the block's language:

- python: run by a fresh interpreter in a temporary directory, after its preludes (below);
- sh, bash, shell: run by bash in a temporary directory holding a link to data/, with `brs`
  being $BRS_CLI;
- c: compiled against include/brs.h and $BRS_LIBRARY with -Werror, then run; a block without
  `main` is a fragment, wrapped in one after its preludes' declarations;
- text, json, console: shown output, not run and no test case.

Any other language, or none, fails: every block must say what it is. What a recipe assumes
its reader has (lengths, a dataset, a model, ...) comes from preludes named by a directive, an HTML comment on
the line just before the fence (invisible when the markdown is rendered):

    <!-- doc-test: setup data model -->   run these PRELUDES first (C_PRELUDES, SHELL_PRELUDES)
    <!-- doc-test: then train -->         run these EPILOGUES after the block (checks, a run)
    <!-- doc-test: env KEY=VALUE ... -->  extra environment
    <!-- doc-test: skip (REASON) -->      not run; REASON says why and what tests it instead
    <!-- doc-test: output -->             shown output, not run

The preludes build the smallest inputs that exercise a recipe: 64 gsm8k lengths divided by 4, a
one-layer GPT-2 of width 32 built from a config, a word-level tokenizer; nothing is downloaded.
A prelude only binds the placeholders the text names (data, a model, a position): it never
changes how a library call of the block behaves (no patched library, no environment), so that a
block runs for its reader as it runs here; test_preludes_set_no_hidden_argument checks it.
"""

import ast
import importlib.metadata
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

import brs

REPO = pathlib.Path(__file__).resolve().parents[3]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
TIMEOUT_S = 240
PYTHON = {"python", "py"}
SHELL = {"sh", "bash", "shell"}
C = {"c"}
SHOWN = {"text", "json", "console", "output"}
DIRECTIVES = {"setup", "then", "env", "skip", "output"}
# The packages the recipes import: they must be the versions the docs are checked against.
RECIPE_PACKAGES = ("torch", "transformers", "accelerate", "datasets", "lightning", "trl",
                   "torchdata")

PRELUDES = {
    # What a reader of the Python recipes already has: token counts, a map-style dataset of
    # token ids with those lengths, a padding collator, a number of epochs.
    "data": f"""
import pathlib
import brs
import torch
VOCAB = 96
GSM8K = pathlib.Path({str(REPO / "data" / "gsm8k_train.lengths")!r})
lengths = [max(int(n) // 4, 2) for n in GSM8K.read_text().split()[:64]]
dataset = [{{"input_ids": [1 + (i * 7 + p * 3) % (VOCAB - 1) for p in range(n)]}}
           for i, n in enumerate(lengths)]
epochs = 2

def pad_collate(rows):
    width = max(len(row["input_ids"]) for row in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, :len(row["input_ids"])] = torch.tensor(row["input_ids"])
        mask[i, :len(row["input_ids"])] = 1
    return {{"input_ids": ids, "attention_mask": mask,
             "labels": ids.masked_fill(mask == 0, -100)}}

collate = collator = pad_to_longest = pad_collate
""",
    # A model, its tokenizer and the dataset as a datasets.Dataset (needs "data").
    "model": """
import datasets
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast, TrainingArguments
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB, n_positions=128, n_embd=32, n_layer=1,
                                   n_head=2))
tokenizer = PreTrainedTokenizerFast(
    tokenizer_object=Tokenizer(WordLevel({str(i): i for i in range(VOCAB)}, unk_token="1")),
    pad_token="0", eos_token=str(VOCAB - 1))
train = datasets.Dataset.from_dict({"input_ids": [row["input_ids"] for row in dataset]})
""",
    # A sampler and a position in it (needs "data").
    "sampler": """
sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=2, dp_size=2,
                                    rank=0, seed=0)
step, rank, micro = 1, 1, 0
""",
    # A state saved by rank 0 of 2 after two optimizer steps (needs "data").
    "two_ranks": """
sampler_on_2_ranks = brs.BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=2,
                                               dp_size=2, rank=0, seed=42)
micro_batches = iter(sampler_on_2_ranks)
for _ in range(2 * sampler_on_2_ranks.grad_accum):
    next(micro_batches)
""",
    "accelerator": """
from accelerate import Accelerator
accelerator = Accelerator(cpu=True)
""",
    # A prepared loader and a saved accelerate state, one epoch in (needs "data", "accelerator").
    "accelerate_checkpoint": """
from torch.utils.data import DataLoader
from brs.integrations.accelerate import prepare_dataloader
sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=4, grad_accum=2, seed=42)
loader = prepare_dataloader(accelerator, DataLoader(dataset, batch_sampler=sampler,
                                                    collate_fn=collate))
dir = "checkpoint"
accelerator.save_state(dir)
epoch, micro_batches_done_in_epoch = 1, 3
""",
    # A one-process device mesh with the dims of a dp x tp job, as a LightningModule's self.
    "mesh": """
import types
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
dist.init_process_group("gloo", init_method=f"file://{pathlib.Path('pg').resolve()}",
                        rank=0, world_size=1)
self = types.SimpleNamespace(device_mesh=init_device_mesh("cpu", (1, 1),
                                                          mesh_dim_names=("dp", "tp")))
""",
    # A cost-model file as `python -m brs calibrate -o cost.json` writes it (made-up numbers).
    "cost_model": """
import brs
brs.CostModel(alpha=1e-4, intercept=2.0, max_tokens=4096).save("cost.json")
""",
}

EPILOGUES = {
    "train": "trainer.train()\n",
    # The resumed 1-rank sampler continues at the saved step.
    "check_elastic": """
assert sampler_on_1_rank.state_dict()["step"] == 2, sampler_on_1_rank.state_dict()
""",
    # The skipped loader yields the rest of the epoch.
    "check_skip": """
assert len(list(batches)) == len(loader) - micro_batches_done_in_epoch
""",
    "check_mesh": "assert (dp_size, rank) == (1, 0), (dp_size, rank)\n",
}

C_PRELUDES = {
    # What the C fragment of the README assumes: a lengths array and a position.
    "lengths": """
    static uint32_t lengths[256];
    size_t n = sizeof lengths / sizeof lengths[0];
    for (size_t i = 0; i < n; i++)
        lengths[i] = 1 + (uint32_t)(i * 37 % 500);
    uint64_t epoch = 0, step = 0;
    int64_t rank = 1, micro = 0;
""",
}


SHELL_PRELUDES = {
    "cost_model": f"{shlex.quote(sys.executable)} -c {shlex.quote(PRELUDES['cost_model'])}\n",
}


@dataclass
class Block:
    path: pathlib.Path
    line: int
    language: str
    code: str
    directives: dict = field(default_factory=dict)

    @property
    def where(self):
        return f"{self.path.relative_to(REPO)}:{self.line}"


FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
DIRECTIVE = re.compile(r"^\s*<!--\s*doc-test:\s*(?P<kind>[\w-]+)\s*(?P<args>.*?)\s*-->\s*$")


def parse_directives(lines):
    """{kind: argument string} of the directive comments directly above a fence."""
    found = {}
    for text in reversed(lines):
        match = DIRECTIVE.match(text)
        if not match:
            break
        found[match["kind"]] = match["args"]
    return found


def extract_blocks(path):
    """Every fenced block of a markdown file, with the directives just above it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, start = match["fence"], i
        end = start + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        indent = len(match["indent"])
        code = "\n".join(text[indent:] if text[:indent].isspace() else text
                         for text in lines[start + 1:end])
        blocks.append(Block(path, start + 1, match["lang"].lower(), code + "\n",
                            parse_directives(lines[:start])))
        i = end + 1
    return blocks


def all_blocks():
    return [block for path in DOCS for block in extract_blocks(path)]


def named(table, names, where):
    unknown = [name for name in names if name not in table]
    if unknown:
        pytest.fail(f"{where}: unknown doc-test name(s) {unknown}; known: {sorted(table)}")
    return [table[name] for name in names]


def environment(block, tmp_path):
    env = dict(os.environ)
    python_path = str(REPO / "bindings" / "python")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [python_path, env.get("PYTHONPATH")]))
    # No network, no telemetry, no thread pools fighting over a shared machine.
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_HOME=str(tmp_path / "hf"), TOKENIZERS_PARALLELISM="false",
               WANDB_MODE="disabled", OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    for assignment in block.directives.get("env", "").split():
        key, sep, value = assignment.partition("=")
        if not sep:
            pytest.fail(f"{block.where}: doc-test env takes KEY=VALUE, got {assignment!r}")
        env[key] = value
    return env


def run(block, command, cwd, env, note=""):
    try:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.where}: still running after {TIMEOUT_S} s; keep the block tiny "
                    "(preludes) or mark it doc-test: skip (REASON)")
    if done.returncode != 0:
        pytest.fail(f"{block.where}: the {block.language} block failed (exit "
                    f"{done.returncode}){note}:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    return done


def run_python(block, tmp_path):
    names = block.directives.get("setup", "").split()
    then = block.directives.get("then", "").split()
    head = "\n".join([*named(PRELUDES, names, block.where), f"# {block.where}"])
    script = "\n".join([head, block.code, *named(EPILOGUES, then, block.where)])
    (tmp_path / "block.py").write_text(script)
    first = head.count("\n") + 2
    run(block, [sys.executable, "block.py"], tmp_path, environment(block, tmp_path),
        note=f"; line {first} of block.py is line {block.line + 1} of the page")


def run_shell(block, tmp_path, cli):
    """bash in a scratch directory that sees the repository's data/ as its own."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "brs").symlink_to(os.path.abspath(cli))
    (tmp_path / "data").symlink_to(REPO / "data")
    env = environment(block, tmp_path)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    names = block.directives.get("setup", "").split()
    script = "".join([*named(SHELL_PRELUDES, names, block.where), block.code])
    run(block, ["bash", "-euo", "pipefail", "-c", script], tmp_path, env)


def c_source(block):
    """The block itself when complete, else a main() around its preludes and statements."""
    if re.search(r"\bmain\s*\(", block.code):
        return block.code
    lines = block.code.splitlines()
    includes = [text for text in lines if text.startswith("#")]
    body = [text for text in lines if not text.startswith("#")]
    names = block.directives.get("setup", "").split()
    return "\n".join(["#include <stddef.h>", "#include <stdint.h>", *includes,
                      "int main(void) {", *named(C_PRELUDES, names, block.where),
                      *("    " + text for text in body), "    return 0;", "}", ""])


def run_c(block, tmp_path):
    library = os.environ.get("BRS_LIBRARY")
    if not library:
        pytest.skip("BRS_LIBRARY is not set (point it at BUILD/libbrs/libbrs.so.1)")
    compiler = os.environ.get("CC", "cc")
    if not shutil.which(compiler):
        pytest.skip(f"no C compiler ({compiler})")
    (tmp_path / "block.c").write_text(c_source(block))
    library = os.path.abspath(library)
    env = environment(block, tmp_path)
    run(block, [compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{REPO / 'include'}",
                "block.c", library, f"-Wl,-rpath,{os.path.dirname(library)}", "-o", "block"],
        tmp_path, env)
    done = run(block, ["./block"], tmp_path, env)
    # The recipes print to stderr only on a failure they handle.
    assert not done.stderr, f"{block.where}: the C block reported an error:\n{done.stderr}"


def shown(block):
    return "output" in block.directives or block.language in SHOWN


# Shown output is no test case: nothing about it could fail.
BLOCKS = [block for block in all_blocks() if not shown(block)]


@pytest.mark.parametrize("block", BLOCKS, ids=[block.where for block in BLOCKS])
def test_doc_block(block, tmp_path, request):
    unknown = set(block.directives) - DIRECTIVES
    if unknown:
        pytest.fail(f"{block.where}: unknown doc-test directive(s) {sorted(unknown)}; "
                    f"known: {sorted(DIRECTIVES)}")
    if "skip" in block.directives:
        reason = block.directives["skip"].strip("() ")
        if not reason:
            pytest.fail(f"{block.where}: doc-test: skip needs a (REASON)")
        pytest.skip(f"{block.where}: {reason}")
    if block.language in PYTHON:
        run_python(block, tmp_path)
    elif block.language in SHELL:
        run_shell(block, tmp_path, request.getfixturevalue("cli"))
    elif block.language in C:
        run_c(block, tmp_path)
    else:
        pytest.fail(f"{block.where}: a ```{block.language} block is neither run nor marked: tag "
                    f"its language ({sorted(PYTHON | SHELL | C | SHOWN)}) or put "
                    "<!-- doc-test: output --> or <!-- doc-test: skip (REASON) --> above it")


# Calls that change behaviour behind a block's back instead of binding a placeholder.
HIDDEN_CALLS = {"setattr", "delattr", "putenv", "setdefault", "reload", "patch"}


def hidden_arguments(source):
    """What a prelude does besides binding names at its top level: assignments to an attribute
    or an item (patching a library, os.environ[...]), calls that patch or set the environment,
    global. The bodies of the functions it defines (a collator's own tensors) are its own."""
    found = []
    for node in _top_level(ast.parse(source)):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            found += [f"line {node.lineno}: assigns {ast.unparse(element)}"
                      for element in elements
                      if isinstance(element, (ast.Attribute, ast.Subscript))]
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
                node.func, "id", "")
            if name in HIDDEN_CALLS:
                found.append(f"line {node.lineno}: calls {ast.unparse(node.func)}")
        if isinstance(node, ast.Attribute) and node.attr == "environ":
            found.append(f"line {node.lineno}: touches {ast.unparse(node)}")
    return found


def _top_level(tree):
    """Every node of the module outside the bodies of its functions, lambdas and classes."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                      ast.ClassDef)):
                pending.append(child)


@pytest.mark.parametrize("name", sorted(PRELUDES))
def test_preludes_set_no_hidden_argument(name):
    found = hidden_arguments(PRELUDES[name])
    assert not found, (f"prelude {name!r} does more than bind the placeholders a recipe names: "
                       f"{found}; put what the recipe needs in the recipe itself")


def test_env_directives_are_shown_in_their_block():
    for block in all_blocks():
        for assignment in block.directives.get("env", "").split():
            key = assignment.partition("=")[0]
            assert key in block.code, (f"{block.where}: doc-test env sets {key}, which the block "
                                       "does not show; set it in the block")


def test_hidden_argument_check_catches_a_patched_library():
    patched = ("import transformers.training_args\n"
               "transformers.training_args.is_torch_bf16_gpu_available = lambda: True\n")
    assert hidden_arguments(patched) == [
        "line 2: assigns transformers.training_args.is_torch_bf16_gpu_available"]
    assert hidden_arguments("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = ''\n")
    assert hidden_arguments("setattr(model.config, 'use_cache', False)\n")
    assert hidden_arguments(PRELUDES["data"]) == []


def test_python_md_lists_every_state_dict_key():
    text = (REPO / "docs" / "python.md").read_text()
    match = re.search(r"`sampler\.state_dict\(\)` is `\{(?P<keys>[^}]*)\}`", text)
    assert match, "docs/python.md no longer says `sampler.state_dict()` is `{...}`"
    documented = set(re.findall(r'"(\w+)"', match["keys"]))
    actual = brs.BatchRebalanceSampler([5, 9, 3, 7], per_device_batch_size=1, dp_size=1,
                                       rank=0).state_dict()
    assert documented == set(actual), (
        f"docs/python.md lists {sorted(documented)}; state_dict() has {sorted(actual)}")


def pinned_versions():
    pins = {}
    for text in (REPO / "requirements-test.txt").read_text().splitlines():
        name, sep, version = text.split("#")[0].strip().partition("==")
        if sep:
            pins[name.lower()] = version
    return pins


@pytest.mark.parametrize("package", RECIPE_PACKAGES)
def test_recipes_run_on_the_pinned_versions(package):
    pinned = pinned_versions().get(package)
    assert pinned, f"requirements-test.txt pins no {package}, which the docs' recipes import"
    try:
        installed = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(f"{package} is not installed: pip install -r requirements-test.txt")
    assert installed.split("+")[0] == pinned, (
        f"{package} {installed} is installed, but the docs' recipes are checked against "
        f"{pinned} (requirements-test.txt): install the pinned version")


def test_extractor_finds_fences_and_directives(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n<!-- doc-test: setup data model -->\n<!-- doc-test: then train -->\n"
                    "```python\nx = 1\n```\n\n    indented\n~~~sh\nbrs --version\n~~~\n```\n")
    blocks = extract_blocks(page)
    assert [(b.line, b.language, b.code) for b in blocks] == [
        (4, "python", "x = 1\n"), (9, "sh", "brs --version\n"), (12, "", "\n")]
    assert blocks[0].directives == {"setup": "data model", "then": "train"}
    assert blocks[1].directives == {}
