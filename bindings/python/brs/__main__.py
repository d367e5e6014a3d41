"""python -m brs: the brs command's plan, compare and demo, and `report`, its table plus a figure.

plan, compare and demo run the C `brs` command with the same arguments, so their flags, output
and exit status are its own: one parser and one formatter for both tools. The command is found
through $BRS_CLI, then brs/bin/brs inside this package (pip install), then PATH (_c_command.py).

report prints `brs compare`'s table for the same flags, then where the time goes with
transformers' batch_rebalance on the same samples (when transformers is installed), and with
--plot OUT draws the figure from the library's plan queries (report.py, _plot.py). Its flags are made from the library's
option table, as the C command's are (--batch-size N, --packed / --no-packed, --sync NAME);
without the C command it can still draw the figure. Bad input exits with status 2 and one line
on stderr that says what to change, as the C command does.
"""

import argparse
import os
import subprocess
import sys

from . import _lengths, _options
from ._c_command import find_cli

USAGE_ERROR = 2
SYSTEM_FAILURE = 1


class BadInput(Exception):
    """Ends the command: one line on stderr, exit status ``status`` (2: change the input)."""

    def __init__(self, message, status=USAGE_ERROR):
        super().__init__(message)
        self.status = status


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump, as the C command
        raise BadInput(f"{message} (see --help)")


def read_lengths(path):
    """One length >= 1 per line (docs/formats.md), read by the rules of the brs command."""
    try:
        return _lengths.read_file(path)
    except ValueError as exc:
        raise BadInput(str(exc)) from None


# -- the C command --------------------------------------------------------------------------

def _missing_cli(what):
    return (f"{what} needs the C brs command, which was not found: set BRS_CLI to its path "
            "(a build tree has it at BUILD/cli/brs) or put brs on PATH")


def _delegate(argv):
    cli = find_cli()
    if cli is None:
        print(f"python -m brs: {_missing_cli(' '.join(argv[:1]) or 'python -m brs')}",
              file=sys.stderr)
        return SYSTEM_FAILURE
    return subprocess.run([cli, *argv]).returncode


def _compare_table(argv):
    """`brs compare`'s stdout for the same flags; None without the C command."""
    cli = find_cli()
    if cli is None:
        return None
    done = subprocess.run([cli, "compare", *argv], capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"brs compare exited {done.returncode}"]
        raise BadInput(lines[-1].removeprefix("brs compare: "), done.returncode)
    return done.stdout.replace("brs compare: ", "brs report: ", 1)


_TIME_BLOCK = "where the time goes:"


def _with_time_table(table, time_lines):
    """The C table with its "where the time goes" block (up to the blank line after it, which
    ends with the pointer to this very command) replaced by the report's, which adds
    batch_rebalance; the report's block at the end where the table has none."""
    lines = table.rstrip("\n").split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(_TIME_BLOCK)), None)
    if start is None:
        return "\n".join(lines + [""] + time_lines)
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return "\n".join(lines[:start] + time_lines + lines[end:])


# -- report -----------------------------------------------------------------------------------

def _integer(text):
    if not text.lstrip("-").isdigit() or not text.isascii():
        raise argparse.ArgumentTypeError(f"needs an integer, got '{text}'")
    return int(text)


def _number(text):
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a number, got '{text}'") from None


def _add_option(parser, option):
    """The flag of one library option, made as the C command makes it (cli/args.c)."""
    # argparse formats help with %: a literal percent sign in the library's text must be doubled
    default = option.default_value
    dest = _options.keyword(option)
    help_text = f"{option.help} (default: the library's, {default})".replace("%", "%%")
    if option.is_switch:
        parser.add_argument(option.flag, dest=dest, action="store_const", const=True,
                            help=help_text)
        negated = "--no-" + option.flag[2:]
        parser.add_argument(negated, dest=dest, action="store_const", const=False,
                            help=f"the opposite of {option.flag}")
    elif option.value_names:
        parser.add_argument(option.flag, dest=dest, metavar="|".join(option.value_names),
                            help=help_text)
    else:
        parser.add_argument(option.flag, dest=dest, type=_number if option.is_double
                            else _integer, metavar=option.name.upper(), help=help_text)


# Options a report does not take, as `brs compare`: it shows every strategy and every rank.
_COMPARED = ("strategy", "rank")


def _report_parser():
    parser = _Parser(prog="python -m brs report", allow_abbrev=False,
                     description="brs compare's table for the same flags, and --plot OUT: the "
                     "figure of every strategy over one epoch")
    parser.add_argument("--lengths", required=True, metavar="FILE",
                        help="one token count per line, '-' for standard input")
    parser.add_argument("--epoch", type=_integer, default=0, help="the epoch (default 0)")
    parser.add_argument("--step", type=_integer, default=None,
                        help="only this step (default: every step)")
    parser.add_argument("--plot", metavar="OUT.png",
                        help="also write the one-page figure (png, pdf or svg by extension)")
    parser.add_argument("--cost-model", metavar="FILE",
                        help="alpha, intercept and max_tokens from a cost-model JSON file (as "
                        "brs.calibrate writes it); a flag given here wins over the file")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the table to FILE instead of standard output")
    for option in _options.TABLE:
        if option.name not in _COMPARED:
            _add_option(parser, option)
    return parser


def _without_plot(argv):
    out, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word == "--plot":
            skip = True
        elif not word.startswith("--plot="):
            out.append(word)
    return out


def _sampler(args, lengths):
    from .sampler import BatchRebalanceSampler

    given = {keyword: getattr(args, keyword, None) for keyword in _options.BY_KEYWORD}
    given = {keyword: value for keyword, value in given.items() if value is not None}
    # A report is of the whole job, not of the machine it runs on: no topology detection.
    for name in ("dp_size", "rank"):
        given.setdefault(name, _options.BY_NAME[name].default)
    given.setdefault("per_device_batch_size", None)
    sampler = BatchRebalanceSampler(lengths, cost_model=args.cost_model, **given)
    sampler.set_epoch(args.epoch)
    return sampler


def _comparison(args):
    """Every strategy and batch_rebalance over the steps asked (report.py)."""
    from . import report as report_module

    lengths = read_lengths(args.lengths)
    try:
        sampler = _sampler(args, lengths)
        steps = None if args.step is None else [args.step]
        return report_module.compare(sampler, steps)
    except (ValueError, TypeError) as exc:
        raise BadInput(str(exc)) from None


def _figure(comparison, args, save_figure):
    try:
        save_figure(comparison, args.plot)
    except (OSError, ValueError) as exc:
        raise BadInput(f"cannot write the figure '{args.plot}': {exc}") from None


def report(argv):
    from . import report as report_module

    args = _report_parser().parse_args(argv)
    save_figure = _plotter() if args.plot else None
    if args.lengths == "-":
        raise BadInput("python -m brs report needs --lengths FILE: it reads the lengths twice "
                       "(the table, then batch_rebalance and the figure), standard input once")
    table = _compare_table(_without_plot(argv))
    if table is None and not save_figure:
        raise BadInput(_missing_cli("the table"))
    comparison = _comparison(args)
    if save_figure:
        _figure(comparison, args, save_figure)
    time_lines = report_module.time_table(comparison)
    if table is None:
        print(f"brs report: {args.lengths}\n(no table: {_missing_cli('the table')})\n")
        print("\n".join(time_lines))
    elif table:  # empty with --output: the C command wrote the table there
        print(_with_time_table(table, time_lines))
    else:
        print("\n".join(time_lines))
    if save_figure:
        print(f"  figure: {args.plot}")
    else:
        print(f"  figure: --plot OUT.png draws it{_PLOT_HINT if _no_matplotlib() else ''}")


_PLOT_HINT = " (needs matplotlib, not installed: pip install '.[plot]' or pip install matplotlib)"


def _no_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return True
    return False


def _plotter():
    try:
        from ._plot import save_figure
    except ImportError:
        raise BadInput("--plot needs matplotlib, which is not installed: pip install '.[plot]' "
                       "(or pip install matplotlib)") from None
    return save_figure


def _calibrate(argv):
    """python -m brs calibrate, Python's own command (it times a torch model):
    calibration/cli.py."""
    from .calibration import cli as calibration_cli

    parser = argparse.ArgumentParser(prog="python -m brs")
    calibration_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    args.handler(args)
    return 0


# -- entry --------------------------------------------------------------------------------------

def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in ([], ["-h"], ["--help"]):
        print("python -m brs report --lengths FILE [options] [--plot OUT.png]\n"
              "    brs compare's table and a figure (python -m brs report --help)\n"
              "python -m brs calibrate --model M --lengths FILE -o COST.json\n"
              "    fit the cost model to a torch model (python -m brs calibrate --help)\n"
              "python -m brs trial --model DIR --lengths FILE --per-device-batch-size P --out DIR\n"
              "    will brs pay on my setup? (python -m brs trial --help)\n"
              "python -m brs plan|compare|demo ...: the brs command's, below\n")
        sys.stdout.flush()
        argv = ["--help"]
    if argv[:1] == ["calibrate"]:
        return _calibrate(argv)
    if argv[:1] == ["trial"]:  # Python's own command: brs/_trial/cli.py
        from ._trial import cli as trial_cli

        return trial_cli.main(argv[1:])
    if argv[:1] != ["report"]:
        return _delegate(argv)
    try:
        report(argv[1:])
    except BadInput as exc:
        print(f"python -m brs report: {exc}", file=sys.stderr)
        return exc.status
    except BrokenPipeError:
        # The reader (e.g. `| head`) left early; not an error. Silence the flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
