"""python -m brs report --lengths FILE [options] [--plot out.png]

The options are those of the C CLI (`brs compare`); bad input exits with status 2 and one line
on stderr that says what to change, as the CLI does.
"""

import argparse
import os
import sys

USAGE_ERROR = 2


class BadInput(Exception):
    pass


def read_lengths(path):
    """One length >= 1 per line; indices are 0-based line numbers, so blank lines are errors."""
    name = "standard input" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    except OSError as exc:
        raise BadInput(f"cannot open lengths file '{path}': {exc.strerror}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{name} is not text (expected one token count >= 1 per line)") from None
    values = []
    for number, line in enumerate(text.splitlines(), 1):
        word = line.strip()
        if not word.isdigit() or not word.isascii():
            raise BadInput(f"{name} line {number}: '{line[:44]}' is not a positive integer "
                           "(expected one token count >= 1 per line)")
        if int(word) == 0:
            raise BadInput(f"{name} line {number}: '{word}' is 0; every sample needs at least "
                           "one token")
        values.append(int(word))
    if not values:
        raise BadInput(f"{name} has no lengths (expected one token count >= 1 per line)")
    return values


def _parser():
    parser = argparse.ArgumentParser(prog="python -m brs",
                                     description="batch rebalancing reports over libbrs")
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="compare brs with fixed-size random and "
                                 "length-grouped batches over one epoch")
    report.add_argument("--lengths", required=True, metavar="FILE",
                        help="one token count per line, '-' for standard input")
    report.add_argument("--batch-size", type=int, default=8, help="P, the average micro-batch size")
    report.add_argument("--grad-accum", type=int, default=1)
    report.add_argument("--dp-size", type=int, default=1)
    report.add_argument("--seed", type=int, default=0)
    report.add_argument("--epoch", type=int, default=0)
    report.add_argument("--no-shuffle", action="store_true")
    report.add_argument("--no-drop-last", action="store_true")
    report.add_argument("--alpha", type=float, default=0.001)
    report.add_argument("--intercept", type=float, default=0.0)
    report.add_argument("--max-tokens", type=int, default=None)
    report.add_argument("--packed", action="store_true")
    report.add_argument("--plot", metavar="OUT.png",
                        help="also write the one-page figure (png, pdf or svg by extension)")
    from . import _calibrate_cli  # python -m brs calibrate lives in brs/_calibrate_cli.py
    _calibrate_cli.register(commands)
    return parser


def _sampler(args, lengths):
    from .sampler import BatchRebalanceSampler

    sampler = BatchRebalanceSampler(
        lengths, per_device_batch_size=args.batch_size, grad_accum=args.grad_accum,
        dp_size=args.dp_size, rank=0, seed=args.seed, shuffle=not args.no_shuffle,
        drop_last=not args.no_drop_last, alpha=args.alpha, intercept=args.intercept,
        max_tokens=args.max_tokens, packed=args.packed)
    sampler.set_epoch(args.epoch)
    return sampler


def report(args):
    from . import report as report_module

    save_figure = _plotter() if args.plot else None
    lengths = read_lengths(args.lengths)
    try:
        sampler = _sampler(args, lengths)
        comparison = report_module.compare(sampler)
    except (ValueError, TypeError) as exc:
        raise BadInput(str(exc)) from None
    print(report_module.format_report(comparison, args.lengths))
    if save_figure:
        try:
            save_figure(comparison, args.plot)
        except (OSError, ValueError) as exc:
            raise BadInput(f"cannot write the figure '{args.plot}': {exc}") from None
        print(f"  figure: {args.plot}")


def _plotter():
    try:
        from ._plot import save_figure
    except ImportError:
        raise BadInput("--plot needs matplotlib: pip install matplotlib") from None
    return save_figure


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        getattr(args, "handler", report)(args)
    except BadInput as exc:
        print(f"python -m brs {args.command}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:
        # The reader (e.g. `| head`) left early; not an error. Silence the flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
