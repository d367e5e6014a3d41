"""The `brs` console script (brs._cli:main, pyproject.toml [project.scripts]): plan, compare and
demo exec the C command without importing torch; report and calibrate run python -m brs's
commands in the same process instead of telling the user to run them."""

import json
import subprocess
import sys

import pytest

from brs_testing import DATA, child_env, REPO

# Runs the console script's main() as the installed wrapper does, with the bundled C command
# pointed at the build tree's; FAKE_EXEC replaces os.execv to report what would be run and
# which modules were imported by then.
SCRIPT = """
import json, os, sys
import brs._cli as console
console.bundled_cli = lambda: {cli!r}
if {fake_exec!r}:
    def execv(path, args):
        print(json.dumps({{"path": path, "args": args, "torch": "torch" in sys.modules}}))
        sys.exit(0)
    os.execv = execv
sys.argv = ["brs", *{argv!r}]
status = console.main()
print(json.dumps({{"torch": "torch" in sys.modules}}))
sys.exit(status)
"""


def console(cli, argv, fake_exec=False):
    code = SCRIPT.format(cli=cli, argv=list(argv), fake_exec=fake_exec)
    return subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True,
                          text=True, timeout=300, cwd=str(REPO))


LENGTHS = str(DATA / "gsm8k_train.lengths")


@pytest.mark.parametrize("command", [["plan", "--lengths", LENGTHS], ["demo"],
                                     ["compare", "--lengths", LENGTHS], ["--version"]])
def test_c_commands_exec_without_importing_torch(cli, command):
    done = console(cli, command, fake_exec=True)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout.splitlines()[0])
    assert run == {"path": cli, "args": [cli, *command], "torch": False}


def test_plan_output_is_the_c_commands(cli):
    command = ["plan", "--lengths", LENGTHS, "--batch-size", "4", "--step", "1"]
    done = console(cli, command)
    direct = subprocess.run([cli, *command], capture_output=True, text=True, timeout=60)
    assert done.returncode == direct.returncode == 0, done.stderr
    assert done.stdout == direct.stdout  # exec'd: the script's own print never runs


def test_report_runs_here_as_python_m_brs(cli):
    command = ["report", "--lengths", LENGTHS, "--batch-size", "4", "--dp-size", "2"]
    done = console(cli, command)
    assert done.returncode == 0, done.stderr
    module = subprocess.run([sys.executable, "-m", "brs", *command], env=child_env(BRS_CLI=cli),
                            capture_output=True, text=True, timeout=120, cwd=str(REPO))
    assert module.returncode == 0, module.stderr
    table = done.stdout.rsplit("\n", 2)[0]  # without the script's last line (the torch check)
    assert untimed(table) == untimed(module.stdout)
    assert "python -m brs" not in done.stderr


def untimed(text):
    """The lines of a report that do not measure this machine's planning speed."""
    return [line for line in text.strip().splitlines() if " per step" not in line]


def test_calibrate_runs_here(cli):
    done = console(cli, ["calibrate", "--help"])
    assert done.returncode == 0, done.stderr
    assert "--lengths" in done.stdout and "--model" in done.stdout


def test_help_says_the_python_commands_run_here(cli):
    done = console(cli, ["--help"])
    assert done.returncode == 0, done.stderr
    assert "brs plan" in done.stdout and "brs calibrate | report" in done.stdout
