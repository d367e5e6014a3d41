"""Where the C `brs` command is: inside the installed package, or named by $BRS_CLI or PATH.

pip install . (and the wheel of scripts/build-wheel) ships the command as brs/bin/brs, next to
the bundled libbrs.so.1 it loads through its RPATH; system packages (Debian's brs-tools) install
it as /usr/bin/brs instead. Below both the `brs` console script (_cli.py) and python -m brs
(__main__.py), which each ask here and never each other.
"""

import importlib.resources
import os
import shutil


def bundled_cli():
    """The path of the C command inside the installed package, or None where it has none."""
    # importlib.resources, not __file__: an editable install (pip install -e .) serves the
    # package from the source tree but the command from meson-python's build tree.
    try:
        path = os.fspath(importlib.resources.files(__package__) / "bin" / "brs")
    except (OSError, TypeError):  # a resource reader without real files (a zip)
        return None
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def find_cli():
    """The path of the C `brs` command, or None: $BRS_CLI, then brs/bin/brs inside this
    package, then PATH."""
    candidates = [os.environ.get("BRS_CLI"), bundled_cli(), shutil.which("brs")]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None
