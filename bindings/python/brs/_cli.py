"""The `brs` console script: it execs the C command that pip installs inside the package.

pip install . (and the wheel of scripts/build-wheel) ships the command as brs/bin/brs, next to
the bundled libbrs.so.1 it loads through its RPATH (_c_command.py finds it); the `brs` console
script on PATH execs it. System packages (Debian's brs-tools) install the command itself as
/usr/bin/brs instead.

`brs report` and `brs calibrate` are the Python package's own commands (python -m brs's): the
console script runs them itself. Everything else goes to the C command without importing
torch (the package imports its modules on first use), so a call costs milliseconds.
"""

import os
import subprocess
import sys

from ._c_command import bundled_cli

# Commands of python -m brs (brs/__main__.py) that the C command names but does not run.
PYTHON_COMMANDS = ("calibrate", "report", "trial")


def main():
    """The `brs` console script: report and calibrate run here (python -m brs's), every other
    command is the bundled C command with the same arguments."""
    argv = sys.argv[1:]
    if argv[:1] and argv[0] in PYTHON_COMMANDS:
        from .__main__ import main as python_main  # imports torch, as these commands need

        return python_main(argv)
    # Not $BRS_CLI: that may name this very script (it is `brs` on PATH), which would exec itself.
    cli = bundled_cli()
    if cli is None:
        print("brs: this installation of the Python package brs lacks its C command brs/bin/brs; "
              "install the package from its wheel (pip install brs), or the brs command of your "
              "system (Debian: brs-tools)", file=sys.stderr)
        return 1
    if argv[:1] in (["-h"], ["--help"]):
        return _help(cli)
    # exec, not a child process: signals, exit status and the terminal are the command's own.
    os.execv(cli, [cli, *argv])


def _help(cli):
    """The C command's help, and that this `brs` runs the Python commands it lists too."""
    status = subprocess.run([cli, "--help"]).returncode
    print(f"This brs (the Python package's) also runs them: brs {' | '.join(PYTHON_COMMANDS)} "
          "... is python -m brs's command.")
    return status
