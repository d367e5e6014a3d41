"""The C `brs` command that pip installs inside the package, and the console script that runs it.

pip install . (and the wheel of scripts/build-wheel) ships the command as brs/bin/brs, next to
the bundled libbrs.so.1 it loads through its RPATH; the `brs` console script on PATH execs it.
System packages (Debian's brs-tools) install the command itself as /usr/bin/brs instead.
"""

import importlib.resources
import os
import sys


def bundled_cli():
    """The path of the C command inside the installed package, or None where it has none."""
    # importlib.resources, not __file__: an editable install (pip install -e .) serves the
    # package from the source tree but the command from meson-python's build tree.
    try:
        path = os.fspath(importlib.resources.files(__package__) / "bin" / "brs")
    except (OSError, TypeError):  # a resource reader without real files (a zip)
        return None
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def main():
    """The `brs` console script: the bundled C command with the same arguments."""
    # Not $BRS_CLI: that may name this very script (it is `brs` on PATH), which would exec itself.
    cli = bundled_cli()
    if cli is None:
        print("brs: this installation of the Python package brs lacks its C command brs/bin/brs; "
              "install the package from its wheel (pip install brs), or the brs command of your "
              "system (Debian: brs-tools)", file=sys.stderr)
        return 1
    # exec, not a child process: signals, exit status and the terminal are the command's own.
    os.execv(cli, [cli, *sys.argv[1:]])
