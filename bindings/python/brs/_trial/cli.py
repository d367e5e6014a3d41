"""python -m brs trial --model DIR --lengths FILE --per-device-batch-size P [--grad-accum G]
[--dp-size D] [--steps N] --out DIR [--device cpu|cuda] [--max-tokens T]
[--pad-to-multiple-of M] [--memory-budget BYTES] [--seed S] [--sync micro_step|step]
[--cost-model COST.json]
torchrun --nproc_per_node=C -m brs trial --cp-size C --max-tokens-per-rank T --model reference
--lengths FILE --per-device-batch-size P [--grad-accum G] [--steps N] --out DIR

Runs brs.trial and writes OUT/results.json, OUT/report.md and OUT/trial.png; prints the table
and the verdict. Bad input (arguments, a model it cannot build, a lengths file with a bad line,
a batch that does not fit at per-device batch 1 under --memory-budget) exits with status 2 and
one line on stderr, before anything is timed.

Under torchrun (torchrun --nproc_per_node=N -m brs trial ...) each process runs one dp rank
(--dp-size defaults to N and must equal it); rank 0 alone writes and prints, bad input
included, and every rank exits with the same status.

With --cp-size C (under torchrun, C processes or a multiple) it times brs's dynamic context
parallelism against a fixed CP degree and megatron-core's BalancedCPScheduler instead
(brs/_trial/context_parallel.py): OUT/results.json and OUT/report.md, the same exit statuses.
"""

import argparse
import os
import shlex
import sys

from .config import DEFAULT_STEPS

USAGE_ERROR = 2
PROG = "python -m brs trial"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise _Bad(f"{message} (see --help)")


class _Bad(Exception):
    pass


def _positive(text):
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"needs an integer >= 1, got '{text}'")
    return int(text)


def _seed(text):
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"needs an integer >= 0, got '{text}'")
    return int(text)


def parser():
    p = _Parser(prog=PROG, allow_abbrev=False,
                description="will brs pay on my setup? brs against transformers' upstream "
                "sampler, group_by_length and random batches on your model, lengths and device "
                "(docs/trial.md)")
    p.add_argument("--model", required=True, metavar="DIR",
                   help="a folder with a transformers config.json (random weights), or a "
                   "locally cached hub name")
    p.add_argument("--lengths", required=True, metavar="FILE",
                   help="the dataset's token counts, one per line (docs/formats.md)")
    p.add_argument("--per-device-batch-size", required=True, type=_positive, metavar="P")
    p.add_argument("--grad-accum", type=_positive, default=1, metavar="G")
    p.add_argument("--dp-size", type=_positive, default=None, metavar="D",
                   help="data-parallel ranks, simulated in this one process (default 1); "
                   "under torchrun one per process (default and only value: the world size)")
    p.add_argument("--steps", type=_positive, default=DEFAULT_STEPS, metavar="N",
                   help="timed optimizer steps, drawn at random over the epoch (default "
                   f"{DEFAULT_STEPS})")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="folder for results.json, report.md and trial.png")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    p.add_argument("--max-tokens", type=_positive, default=None, metavar="T",
                   help="brs's cap on padded tokens per micro-batch")
    p.add_argument("--pad-to-multiple-of", type=_positive, default=None, metavar="M",
                   help="the collator's padding multiple, for every strategy")
    p.add_argument("--memory-budget", default=None, metavar="BYTES",
                   help="bytes or e.g. 8GiB: the largest-batch search's limit (on CPU no search "
                   "without it)")
    p.add_argument("--seed", type=_seed, default=0, metavar="S")
    p.add_argument("--sync", choices=("micro_step", "step"), default=None,
                   help="the sync model brs plans for and the step time reported (default: the "
                   "library's, micro_step)")
    p.add_argument("--cost-model", default=None, metavar="COST.json",
                   help="brs's cost model (alpha, intercept, max_tokens) from python -m brs "
                   "calibrate; the other strategies do not use one")
    p.add_argument("--cp-size", type=_positive, default=None, metavar="C",
                   help="context parallelism: brs's dynamic CP against a fixed CP degree and "
                   "megatron-core's BalancedCPScheduler on the same samples, one process per "
                   "rank (torchrun --nproc_per_node=C, or a multiple); --model is then "
                   "'reference', a TinyDecoder config (JSON) or MODULE:FUNCTION")
    p.add_argument("--max-tokens-per-rank", type=_positive, default=None, metavar="T",
                   help="with --cp-size: the most tokens a rank may hold, every strategy's cap")
    p.add_argument("--no-progress", action="store_true")
    return p


def main(argv):
    """python -m brs trial's exit status."""
    try:
        args = parser().parse_args(argv)
    except _Bad as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    # transformers' warnings about a config built with random weights would bury the one line
    # a bad input gets; TRANSFORMERS_VERBOSITY set by the user wins
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from . import output as _output
    from .distributed import is_main
    from .run import trial

    command = "python -m brs trial " + " ".join(shlex.quote(a) for a in argv)
    options = {} if args.sync is None else {"sync": args.sync}
    if args.cost_model is not None:
        options["cost_model"] = args.cost_model
    if args.cp_size is not None:  # launched by torchrun, one process a rank: its command
        world = os.environ.get("WORLD_SIZE", "1")
        return _context_parallel(args, command.replace(
            "python -m brs trial", f"torchrun --nproc_per_node={world} -m brs trial", 1))
    try:
        results = trial(args.model, args.lengths, per_device_batch_size=args.per_device_batch_size,
                        grad_accum=args.grad_accum, dp_size=args.dp_size, steps=args.steps,
                        device=args.device, max_tokens=args.max_tokens,
                        pad_to_multiple_of=args.pad_to_multiple_of,
                        memory_budget=args.memory_budget, seed=args.seed,
                        progress=not args.no_progress, command=command, **options)
        # rank 0 writes, after the group is gone (as trial(out=) does): the files it wrote
        written = _output.write(results, args.out) if is_main() else None
    except (ValueError, TypeError) as exc:
        # bad input is the same on every rank (the same arguments, checks and plans; a batch
        # that fits on no rank is raised everywhere alike): one line, from rank 0
        if is_main():
            print(f"{PROG}: {' '.join(str(exc).split())}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as exc:  # a file of this process: its own line
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    if is_main():
        print(summary(results, args.out, written))
    return 0


def _context_parallel(args, command):
    """--cp-size: the context-parallel trial's exit status (the same reporting rules)."""
    from . import output as _output
    from .context_parallel import trial
    from .distributed import is_main

    ignored = [flag for flag, value in (("--dp-size", args.dp_size),
                                        ("--max-tokens", args.max_tokens),
                                        ("--pad-to-multiple-of", args.pad_to_multiple_of),
                                        ("--memory-budget", args.memory_budget),
                                        ("--sync", args.sync)) if value is not None]
    try:
        if ignored:
            raise ValueError(f"--cp-size takes no {', '.join(ignored)} (dp is the world size "
                             "over cp_size; packed micro-batches under --max-tokens-per-rank)")
        results = trial(args.model, args.lengths, cp_size=args.cp_size,
                        max_tokens_per_rank=args.max_tokens_per_rank,
                        per_device_batch_size=args.per_device_batch_size,
                        grad_accum=args.grad_accum, steps=args.steps, device=args.device,
                        seed=args.seed, progress=not args.no_progress, command=command,
                        cost_model=args.cost_model)
        written = _output.write(results, args.out) if is_main() else None
    except (ValueError, TypeError) as exc:
        if is_main():
            print(f"{PROG}: {' '.join(str(exc).split())}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    if is_main():
        print(context_parallel_summary(results, args.out, written))
    return 0


def context_parallel_summary(results, out, written):
    lines = [f"brs trial (context parallelism) on {results['device']}: "
             f"{len(results['timed_steps'])} steps per strategy, dp {results['dp_size']} x cp "
             f"{results['cp_size']}, max_tokens_per_rank {results['max_tokens_per_rank']}"]
    for name, r in results["strategies"].items():
        lines.append(f"  {name:9s} median {r['median_step_seconds']:.4f} s/step, "
                     f"{r['real_tokens_per_second']:.0f} real tokens/s, peak "
                     f"{r['peak_tokens_per_rank']} tokens a rank, degrees {r['degrees']}")
    lines.append(f"  {results['verdict']}")
    lines.append(f"  clock: {results['clock']}")
    for warning in results.get("warnings", []):
        lines.append(f"  warning: {warning}")
    lines.append(f"  wrote {out}/{', '.join(written)}")
    return "\n".join(lines)


def summary(results, out, written=None):
    lines = [f"brs trial on {results['device']}: {len(results['timed_steps'])} steps per "
             f"strategy ({results['sync']} sync)"]
    for name, r in results["strategies"].items():
        peak = r["peak_reserved_bytes"]
        lines.append(f"  {name:16s} median {r['median_step_seconds']:.4f} s/step, "
                     f"{r['real_tokens_per_second']:.0f} real tokens/s, peak "
                     f"{'n/a' if peak is None else f'{peak / 2**20:.1f} MiB'}, "
                     f"{r['distinct_shapes']} shapes, largest batch {r['largest_batch']}")
    lines.append(f"  {results['verdict']}")
    lines.append(f"  clock: {results['verdict_clock_why']}")
    cm = results.get("cost_model")
    if cm:
        lines.append(f"  brs's cost model: {cm['source']} (alpha {cm['alpha']:.4g}, intercept "
                     f"{cm['intercept']:.4g})")
    for warning in results.get("warnings", []):
        lines.append(f"  warning: {warning}")
    from .output import no_figure

    written = written or []
    lines.append(f"  wrote {out}/{', '.join(written)}")
    if "trial.png" not in written:
        lines.append(f"  {no_figure()}")
    return "\n".join(lines)
