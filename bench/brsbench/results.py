"""The one writer of the studies' outputs: tables on standard output, files under --out (for the
committed ones, bench/results/), and the command line that regenerates them."""

import json
import shlex
from pathlib import Path

ENTRY = "python3 -m brsbench"


def command(argv: list[str]) -> str:
    """The command line of a study run with these arguments (those after `python -m brsbench`)."""
    return f"{ENTRY} {shlex.join(argv)}"


def write_text(path: Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def write_json(path: Path, data, indent: int = 1) -> Path:
    return write_text(path, json.dumps(data, indent=indent) + "\n")


def emit(text: str, out: Path | None) -> None:
    """The text on standard output, and in the file out when given (ending with a newline)."""
    print(text)
    if out:
        write_text(out, text if text.endswith("\n") else text + "\n")


def write_job(out: Path, results: dict, report: str) -> None:
    """A job's directory: results.json (the raw numbers) and report.md."""
    write_json(Path(out) / "results.json", results)
    write_text(Path(out) / "report.md", report)
