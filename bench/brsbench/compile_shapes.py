"""python -m brsbench compile_shapes: what max_shapes saves under torch.compile(dynamic=False),
measured on this CPU.

One rank (rank 0) of a dp 4 x grad_accum 2 x per-device batch 8 job (brsbench.shapes.CFG, seed
42) trains a tiny decoder (transformers GPT2Config: 2 layers, hidden 64, 2 heads, vocab 256,
random weights, SDPA, AdamW lr 1e-4) on the bench's lognormal lengths (brsbench.datasets.lognormal,
n 8000, [16, 1024]; token ids drawn per sample from random.Random(index)) for the same optimizer
steps 0..STEPS-1 of epoch 0 with every sampler:

- brs unbounded: pad_to_multiple_of 64, the collator pads to the longest sample rounded to 64;
- brs ladder: length_buckets="auto" (the library's default ladder) and pad 64, collated through
  brs.PadToPlan (pads to the bucket);
- brs max_shapes=16: pad 64, brs.PadToPlan, no warm-up;
- brs max_shapes=16 + warmup: the same, with brs.warmup(model, sampler, PadToPlan) before step 0
  (its seconds shown apart and counted in the total);
- upstream: transformers' BatchRebalanceSampler as brsbench.peers builds it (rank 0's recorded
  micro-batches), the collator padding to the longest rounded to 64.

Two modes. compile: a fresh model under torch.compile(model, dynamic=False, backend=B) per
sampler after torch._dynamo.reset(); the wall time of the steps with their compiles; the graphs
compiled, counted by a backend wrapper (one call per graph dynamo hands the backend: a new shape
costs one per graph-break piece) and by torch._dynamo's counters["stats"]["unique_graphs"] as a
cross-check. dynamo's recompile limit is raised (RECOMPILE_LIMIT) so that every new shape is
compiled, as it would be with a limit above the run's shapes (at the default limit of 8 dynamo
falls back to eager for the rest of the run). eager: the same steps without compile: the
longest step and the summed seconds of the steps that met a shape new to the run (first runs).

The backend: --backend eager (the default) is dynamo's capture and guards without code
generation; the graphs, recompiles and their count are those inductor would get, the seconds
per compile are not. A cold inductor compile of one shape of this model takes minutes on a
shared 2-core CPU (--inductor-shapes N measures N of them in a fresh cache directory), which
does not fit 5 x 40 steps in minutes; with N > 0 the report projects inductor's seconds as eager
step seconds + shapes compiled x the measured cost of one (a projection, said where it is
shown). --compile-steps M runs the compile mode on the first M steps only (dynamo alone is
~10-17 s a shape there); the report then projects the compile mode over all the eager steps
with the measured seconds per shape, and gives the ratio of shape counts, which the time ratio
approaches where a compile costs far more than a step.
Step seconds cover forward, backward and the optimizer step (collation outside the timer),
torch.set_num_threads(1).

    PYTHONPATH=bindings/python:bench BRS_LIBRARY=<build>/libbrs/libbrs.so.1 \\
        python3 -m brsbench compile_shapes [--steps 40] [--compile-steps M] [--backend eager] \\
        [--inductor-shapes N] [--out FILE]
"""

import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

import brs

from .datasets import lognormal, lognormal_source
from .peers import upstream_batch_rebalance
from .results import emit
from .shapes import CFG, MULTIPLE, SEED

N = 8000
MAX_SHAPES = 16
RECOMPILE_LIMIT = 1024
VOCAB = 256
TARGET_SPEEDUP = 3.0  # max_shapes=16 against brs unbounded
UNBOUNDED, LADDER, SHAPED, WARMED, UPSTREAM = ("brs unbounded", "brs ladder",
                                               f"brs max_shapes={MAX_SHAPES}",
                                               f"brs max_shapes={MAX_SHAPES} + warmup",
                                               "upstream")


def sample(index: int, length: int) -> dict:
    rng = random.Random(index)
    return {"input_ids": [rng.randrange(1, VOCAB) for _ in range(length)]}


def collate(samples, multiple: int = MULTIPLE) -> dict:
    """Pad to the longest sample rounded up to `multiple`: input_ids 0, attention_mask 0, labels
    -100 (DataCollatorWithPadding(pad_to_multiple_of=64) with labels)."""
    import torch

    longest = max(len(s["input_ids"]) for s in samples)
    width = -(-longest // multiple) * multiple
    ids = torch.zeros((len(samples), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, s in enumerate(samples):
        n = len(s["input_ids"])
        ids[row, :n] = torch.tensor(s["input_ids"])
        mask[row, :n] = 1
    return {"input_ids": ids, "attention_mask": mask,
            "labels": ids.masked_fill(mask == 0, -100)}


def brs_sampler(lengths, **options):
    return brs.BatchRebalanceSampler(lengths, per_device_batch_size=CFG.batch, grad_accum=CFG.ga,
                                     dp_size=CFG.dp, rank=0, seed=SEED,
                                     pad_to_multiple_of=MULTIPLE, **options)


def cases(lengths, steps):
    """name -> (steps[t] = rank 0's micro-batches (index lists), collate_fn, the brs sampler or
    None, whether to warm up, seconds to build the sampler)."""
    out = {}
    for name, options, wrap, warm in ((UNBOUNDED, {}, False, False),
                                      (LADDER, {"length_buckets": "auto"}, True, False),
                                      (SHAPED, {"max_shapes": MAX_SHAPES}, True, False),
                                      (WARMED, {"max_shapes": MAX_SHAPES}, True, True)):
        t0 = time.perf_counter()
        sampler = brs_sampler(lengths, **options)
        built = time.perf_counter() - t0
        plan = [[list(mb.indices) for mb in sampler.plan(t).micro_batches[0]]
                for t in range(steps)]
        fn = brs.PadToPlan(collate, sampler) if wrap else collate
        out[name] = (plan, fn, sampler, warm, built)
    upstream, _ = upstream_batch_rebalance(lengths, CFG, SEED)
    out[UPSTREAM] = ([[list(mb) for mb in step[0]] for step in upstream.plan[:steps]], collate,
                     None, False, upstream.seconds)
    return out


def new_model():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=VOCAB, n_positions=1024,
                        bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(config)


class Counting:
    """A torch.compile backend that counts the graphs it is handed, then compiles with `name`."""

    def __init__(self, name: str):
        from torch._dynamo.backends.registry import lookup_backend

        self.inner, self.calls = lookup_backend(name), 0

    def __call__(self, gm, example_inputs):
        self.calls += 1
        return self.inner(gm, example_inputs)


def train(model, plan, fn, lengths, warm_sampler=None, vocabulary=None):
    """Run the steps; returns a dict of the seconds (warm-up, per step) and the shapes met."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    seen, out = set(), {"warmup": 0.0, "steps": [], "new": [], "shapes": set()}
    if warm_sampler is not None:
        t0 = time.perf_counter()
        seen.update(tuple(s) for s in brs.warmup(model, warm_sampler, collate_fn=fn))
        out["warmup"] = time.perf_counter() - t0
    for micro_batches in plan:
        batches = [fn([sample(i, lengths[i]) for i in mb]) for mb in micro_batches]
        shapes = [tuple(b["input_ids"].shape) for b in batches]
        if vocabulary is not None:
            assert all(s in vocabulary for s in shapes), (shapes, vocabulary)
        new = any(s not in seen for s in shapes)
        seen.update(shapes)
        out["shapes"].update(shapes)
        t0 = time.perf_counter()
        for batch in batches:
            (model(**batch).loss / len(batches)).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        out["steps"].append(time.perf_counter() - t0)
        out["new"].append(new)
    return out


def configure_dynamo():
    import torch._dynamo

    for key in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, key):
            setattr(torch._dynamo.config, key, RECOMPILE_LIMIT)
    for key in ("accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(torch._dynamo.config, key):
            setattr(torch._dynamo.config, key, 4 * RECOMPILE_LIMIT)


def run_case(name, case, lengths, compiled: bool, backend: str):
    import torch
    import torch._dynamo

    plan, fn, sampler, warm, _ = case
    vocabulary = None
    if sampler is not None and sampler.shape_vocabulary() is not None:
        vocabulary = {tuple(s) for s in sampler.shape_vocabulary()}
    model = new_model()
    counter = None
    if compiled:
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        counter = Counting(backend)
        model = torch.compile(model, dynamic=False, backend=counter)
    t0 = time.perf_counter()
    result = train(model, plan, fn, lengths, sampler if warm else None, vocabulary)
    result["total"] = time.perf_counter() - t0
    result["graphs"] = counter.calls if counter else 0
    result["unique_graphs"] = (torch._dynamo.utils.counters["stats"]["unique_graphs"]
                               if compiled else 0)
    print(f"{'compile' if compiled else 'eager'}: {name}: {result['total']:.1f} s, "
          f"{result['graphs']} graphs, {len(result['shapes'])} shapes", file=sys.stderr,
          flush=True)
    return result


def inductor_probe(plan, lengths, count: int):
    """Seconds of the first and of a second run of `count` distinct shapes (the first ones of
    `plan`) under torch.compile(dynamic=False) with inductor, caches in a fresh directory."""
    import torch
    import torch._dynamo
    import torch._inductor.config as inductor_config

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="brs-inductor-")
    inductor_config.fx_graph_cache = False
    try:
        import torch._functorch.config as functorch_config
        functorch_config.enable_autograd_cache = False
    except (ImportError, AttributeError):
        pass
    torch._dynamo.reset()
    counter = Counting("inductor")
    model = torch.compile(new_model(), dynamic=False, backend=counter)
    model.train()
    rows, seen = [], set()
    for micro_batches in plan:
        for mb in micro_batches:
            batch = collate([sample(i, lengths[i]) for i in mb])
            shape = tuple(batch["input_ids"].shape)
            if shape in seen or len(rows) >= count:
                continue
            seen.add(shape)
            times = []
            for _ in range(2):
                t0 = time.perf_counter()
                model(**batch).loss.backward()
                times.append(time.perf_counter() - t0)
            rows.append((shape, times[0], times[1]))
            print(f"inductor: {shape}: first {times[0]:.1f} s, again {times[1]:.2f} s",
                  file=sys.stderr, flush=True)
    return rows, counter.calls


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import torch
    import transformers

    return (f"{cpu}, {os.cpu_count()} cores (shared with other jobs; load average at the start "
            f"{os.getloadavg()[0]:.1f}), Python {platform.python_version()}, torch "
            f"{torch.__version__}, transformers {transformers.__version__}, libbrs "
            f"{getattr(brs, '__version__', '?')}")


def markdown(args, info, lengths, built, compiled, eager, probe, seconds) -> str:
    steps = args.steps
    lines = ["# torch.compile(dynamic=False) and max_shapes, measured on the CPU", "",
             f"Command: `{args.invocation}` (PYTHONPATH=bindings/python:bench, BRS_LIBRARY at "
             "the build).", "", f"Machine: {info}.", "",
             f"Rank 0 of dp {CFG.dp} x grad_accum {CFG.ga} x per-device batch {CFG.batch}, "
             f"seed {SEED}, optimizer steps 0..{steps - 1} of epoch 0 ({steps * CFG.ga} "
             f"micro-batches) with every sampler; {lognormal_source(N, SEED)}; GPT-2 config "
             "with 2 layers, hidden 64, 2 heads, vocab 256 (random weights, SDPA, AdamW); "
             "torch.set_num_threads(1). Module docstring: brsbench/compile_shapes.py. Seconds "
             "are one run each on a shared machine.", "",
             f"## torch.compile(model, dynamic=False, backend=\"{args.backend}\"), steps "
             f"0..{len(next(iter(compiled.values()))['steps']) - 1}", "",
             f"A fresh model per sampler after torch._dynamo.reset(); dynamo's recompile limit "
             f"raised to {RECOMPILE_LIMIT} so that every new shape compiles. graphs = calls "
             "of a counting backend wrapper (one per graph dynamo compiles; the model has a "
             "graph break, so a new shape costs 2); unique_graphs = "
             "torch._dynamo.utils.counters[\"stats\"][\"unique_graphs\"]. steps with a new "
             "shape: the steps in which a micro-batch met a shape not run before (warm-up "
             "shapes count as run).", "",
             "| sampler | distinct shapes in the steps | warm-up s | steps s | total s | graphs "
             "(backend calls) | unique_graphs | steps with a new shape: n, s | other steps s "
             "| brs unbounded / this (total) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    base = compiled[UNBOUNDED]["total"]
    for name, r in compiled.items():
        new_s = sum(s for s, n in zip(r["steps"], r["new"]) if n)
        lines.append(f"| {name} | {len(r['shapes'])} | {r['warmup']:.1f} | "
                     f"{sum(r['steps']):.1f} | {r['total']:.1f} | {r['graphs']} | "
                     f"{r['unique_graphs']} | {sum(r['new'])}, {new_s:.1f} | "
                     f"{sum(r['steps']) - new_s:.1f} | {base / r['total']:.2f}x |")
    lines += ["", f"## Eager (no compile), steps 0..{len(next(iter(eager.values()))['steps']) - 1}",
              "",
              "| sampler | distinct shapes | longest step s | steps with a new shape: n, "
              "summed s | all steps s (warm-up s) |", "|---|---:|---:|---:|---:|"]
    for name, r in eager.items():
        new_s = sum(s for s, n in zip(r["steps"], r["new"]) if n)
        lines.append(f"| {name} | {len(r['shapes'])} | {max(r['steps']):.3f} | "
                     f"{sum(r['new'])}, {new_s:.1f} | {sum(r['steps']):.1f} "
                     f"({r['warmup']:.1f}) |")
    per_shape = None
    if probe:
        rows, calls = probe
        per_shape = sum(first - again for _, first, again in rows) / len(rows)
        lines += ["", "## inductor: one new shape", "",
                  "torch.compile(dynamic=False) with inductor (default options, a fresh cache "
                  "directory, FX graph and AOT autograd caches off), forward and backward of "
                  f"the first {len(rows)} distinct shape(s) of brs unbounded's micro-batches, "
                  f"each run twice ({calls} graphs compiled):", "",
                  "| shape (batch, length) | first run s | second run s |", "|---|---:|---:|"]
        lines += [f"| {s} | {a:.1f} | {b:.2f} |" for s, a, b in rows]
        lines += ["", f"Projection, not a measurement: inductor's seconds = the eager steps' "
                  f"seconds + shapes compiled (warm-up included) x {per_shape:.0f} s (first run "
                  "minus second, the mean above):", "",
                  "| sampler | shapes compiled | projected s | brs unbounded / this |",
                  "|---|---:|---:|---:|"]
        projected = projection(eager, per_shape)
        for name, value in projected.items():
            lines.append(f"| {name} | {shapes_compiled(eager[name])} | {value:.0f} | "
                         f"{projected[UNBOUNDED] / value:.2f}x |")
    lines += ["", "## max_shapes=16 against the targets", "",
              summary(args, compiled, eager, per_shape), "", f"Wall time {seconds:.0f} s.", ""]
    return "\n".join(lines)


def shapes_compiled(r) -> int:
    """Shapes that met the compiler: those warmed up plus those of the steps (a warm-up shape
    met again in the steps compiles once)."""
    return len(r["warmup_shapes"] | r["shapes"])


def dynamo_seconds_per_shape(compiled, eager, cs) -> float:
    """Compile seconds per shape compiled, over all compile runs: (compiled run's total - the
    eager run's seconds of the same steps and warm-up) / shapes compiled."""
    extra = shapes = 0
    for name, r in compiled.items():
        extra += r["total"] - sum(eager[name]["steps"][:cs]) - eager[name]["warmup"]
        shapes += len(r["warmup_shapes"] | r["shapes"])
    return extra / shapes


def projection(eager, per_shape) -> dict:
    """All the eager steps (and warm-up) + every shape they met compiled at per_shape seconds."""
    return {name: sum(r["steps"]) + r["warmup"] + len(r["warmup_shapes"] | r["shapes"]) * per_shape
            for name, r in eager.items()}


def summary(args, compiled, eager, per_shape) -> str:
    backend = args.backend
    def verdict(totals, how):
        parts = []
        for name in (SHAPED, WARMED):
            mine = totals[name]
            speedup = totals[UNBOUNDED] / mine
            vs_up = totals[UPSTREAM] / mine
            text = (f"{name} takes {mine:.1f} s against brs unbounded's {totals[UNBOUNDED]:.1f} s "
                    f"({speedup:.2f}x faster; target {TARGET_SPEEDUP:.0f}x: "
                    + ("met" if speedup >= TARGET_SPEEDUP else
                       f"missed by {TARGET_SPEEDUP / speedup:.2f}x, it would need "
                       f"{totals[UNBOUNDED] / TARGET_SPEEDUP:.1f} s")
                    + f") and upstream's {totals[UPSTREAM]:.1f} s ("
                    + (f"{vs_up:.2f}x faster" if vs_up > 1 else
                       f"slower by {(1 / vs_up - 1) * 100:.1f}%") + ")")
            parts.append(text)
        return f"{how}: " + "; ".join(parts) + "."

    cs = len(next(iter(compiled.values()))["steps"])
    measured = {name: r["total"] for name, r in compiled.items()}
    text = [verdict(measured, f"Measured with backend \"{backend}\" over {cs} steps (total "
                              "incl. warm-up)")]
    shapes = {name: len(r["warmup_shapes"] | r["shapes"]) for name, r in compiled.items()}
    text.append("Shapes compiled: " + ", ".join(f"{k} {v}" for k, v in shapes.items()) + "; "
                "graphs: " + ", ".join(f"{k} {r['graphs']}" for k, r in compiled.items()) + ".")
    steps = len(next(iter(eager.values()))["steps"])
    if cs < steps:
        dyn = dynamo_seconds_per_shape(compiled, eager, cs)
        text.append(verdict(projection(eager, dyn),
                            f"Projected over the {steps} eager steps (eager seconds + each shape "
                            f"met x {dyn:.1f} s, backend \"{backend}\"'s mean compile seconds "
                            "per shape in the runs above; not measured end to end)"))
    shapes = {name: len(r["warmup_shapes"] | r["shapes"]) for name, r in eager.items()}
    text.append(f"Shapes met (compiled) over the {steps} steps: " + ", ".join(
        f"{k} {v}" for k, v in shapes.items()) + f"; where a compile costs far more than a step "
        "(inductor), the time ratio tends to the ratio of these counts: brs unbounded / "
        f"max_shapes=16 {shapes[UNBOUNDED] / shapes[SHAPED]:.2f}x without warm-up, "
        f"{shapes[UNBOUNDED] / shapes[WARMED]:.2f}x with it; upstream / max_shapes=16 "
        f"{shapes[UPSTREAM] / shapes[SHAPED]:.2f}x and {shapes[UPSTREAM] / shapes[WARMED]:.2f}x.")
    if per_shape is not None:
        text.append(verdict(projection(eager, per_shape),
                            f"Projected for inductor ({per_shape:.0f} s a shape, not measured "
                            "end to end)"))
    return " ".join(text)


def add_arguments(ap) -> None:
    ap.add_argument("--steps", type=int, default=40, help="optimizer steps (default 40)")
    ap.add_argument("--compile-steps", type=int, default=0,
                    help="optimizer steps of the compile mode (default: --steps), the first ones "
                         "of the eager mode's")
    ap.add_argument("--backend", default="eager",
                    help="torch.compile backend of the compile mode (default eager: dynamo's "
                         "capture and recompiles without code generation; inductor is minutes "
                         "per shape on a 2-core CPU)")
    ap.add_argument("--inductor-shapes", type=int, default=0,
                    help="cold inductor compiles of this many shapes, to project inductor's "
                         "seconds (default 0: none)")
    ap.add_argument("--out", type=Path, help="also write the markdown to this file")


def run(args) -> int:
    import torch

    t0 = time.perf_counter()
    torch.set_num_threads(1)
    configure_dynamo()
    info = machine()
    lengths = lognormal(SEED, n=N)
    all_cases = cases(lengths, args.steps)
    built = {name: case[4] for name, case in all_cases.items()}
    compiled, eager = {}, {}
    for name, case in all_cases.items():
        eager[name] = run_case(name, case, lengths, False, args.backend)
    cs = args.compile_steps or args.steps
    for name, case in all_cases.items():
        compiled[name] = run_case(name, (case[0][:cs],) + tuple(case[1:]), lengths, True,
                                  args.backend)
    for r in list(compiled.values()) + list(eager.values()):
        r["warmup_shapes"] = set()
    sampler = all_cases[WARMED][2]
    warm = {tuple(s) for s in sampler.shape_vocabulary()}
    compiled[WARMED]["warmup_shapes"] = eager[WARMED]["warmup_shapes"] = warm
    probe = None
    if args.inductor_shapes:
        probe = inductor_probe(all_cases[UNBOUNDED][0], lengths, args.inductor_shapes)
    args.invocation = getattr(args, "invocation", "python3 -m brsbench compile_shapes")
    emit(markdown(args, info, lengths, built, compiled, eager, probe,
                  time.perf_counter() - t0), args.out)
    return 0
