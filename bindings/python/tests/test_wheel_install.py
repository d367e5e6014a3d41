"""The wheel users get from scripts/build-wheel: one py3-none wheel of the manylinux tag README.md
promises, that installs into a fresh virtual environment without the source tree, with the C `brs` command on PATH; the sdist
and wheel carry the LICENSE; and `pip install -e .` finds the library and the command in
meson-python's build tree."""

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from brs_testing import REPO

mesonpy = pytest.importorskip("mesonpy")
pytest.importorskip("auditwheel")

SMOKE = ("import brs, brs._native as n\n"
         "s = brs.BatchRebalanceSampler([5, 3, 9, 1, 7, 2], per_device_batch_size=2)\n"
         "assert sorted(i for mb in s for i in mb) == list(range(6))\n"
         "print(n.library_path)\n")


def _run(args, **kwargs):
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


CLI_FOUND = "from brs.__main__ import find_cli; print(find_cli())"
VERSION = "import brs; print(brs.library_version)"
VERSIONS = ("import brs, importlib.metadata as m\n"
            "print(brs.__version__, brs.library_version, m.version('brs'))\n")


def _meson_version():
    """meson.build's project version, the one version of libbrs and of the package brs."""
    done = _run(["meson", "introspect", "--projectinfo", str(REPO / "meson.build")])
    return json.loads(done.stdout)["version"]


def _promised_tag():
    """The manylinux tag of README.md's scripts/build-wheel line (py3-none-manylinux_2_N)."""
    promised = set(re.findall(r"py3-none-(manylinux_2_\d+)", (REPO / "README.md").read_text()))
    assert len(promised) == 1, f"README.md should name one wheel tag, not {sorted(promised)}"
    return f"{promised.pop()}_{platform.machine()}"


def _clean_env(venv=None):
    """The environment of a user who has none of the test run's paths (and ``venv`` activated:
    its bin first on PATH, where pip put the `brs` console script)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("BRS_LIBRARY", "PYTHONPATH", "BRS_CLI", "LD_LIBRARY_PATH")}
    if venv is not None:
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _venv(path, system_site_packages=False):
    args = [sys.executable, "-m", "venv", str(path)]
    if system_site_packages:
        args.insert(3, "--system-site-packages")
    _run(args)
    return path / "bin" / "python"


def _small_lengths(directory):
    """200 lengths of data/gsm8k_train.lengths, outside the source tree."""
    lines = (REPO / "data" / "gsm8k_train.lengths").read_text().splitlines()[:200]
    path = directory / "small.lengths"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    _run([str(REPO / "scripts" / "build-wheel"), str(out)])
    (path,) = out.glob("brs-*.whl")
    return path


def test_wheel_is_one_for_every_python3_and_manylinux(wheel):
    # name-version-python-abi-platform.whl
    python_tag, abi_tag, platform_tag = wheel.stem.split("-")[2:5]
    assert (python_tag, abi_tag) == ("py3", "none"), wheel.name
    assert re.search(r"manylinux_2_\d+_x86_64|manylinux_2_\d+_aarch64", platform_tag), wheel.name


def test_wheel_tag_is_the_one_readme_promises(wheel):
    promised = _promised_tag()
    platform_tags = wheel.stem.split("-")[4].split(".")
    assert promised in platform_tags, f"{wheel.name}: README.md promises {promised}"
    # auditwheel reads the glibc symbol versions the library and the command need.
    shown = " ".join(_run([sys.executable, "-m", "auditwheel", "show", str(wheel)]).stdout.split())
    consistent = re.search(r'consistent with the following platform tag: "([^"]+)"', shown)
    assert consistent and consistent.group(1) == promised, shown


def test_wheel_carries_the_license_and_the_library(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert any(n.startswith("brs/libbrs.so.1") for n in names), names


def test_wheel_carries_the_command_next_to_the_library(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "brs/bin/brs" in names, names
    assert "brs/libbrs.so.1" in names, "the command's loader looks up the soname itself"
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "brs = brs._cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """A fresh venv with only the wheel, and a working directory outside the source tree."""
    root = tmp_path_factory.mktemp("wheel-venv")
    python = _venv(root / "venv")
    _run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)])
    work = root / "elsewhere"
    work.mkdir()
    return root / "venv", work


def test_wheel_installs_in_a_fresh_venv_without_the_source_tree(installed):
    venv, work = installed
    done = _run([str(venv / "bin" / "python"), "-c", SMOKE], cwd=str(work), env=_clean_env())
    loaded = done.stdout.strip()
    assert loaded.startswith(str(venv)), loaded
    assert not loaded.startswith(str(REPO)), loaded


def test_brs_on_path_is_the_bundled_command_of_the_library_version(installed):
    venv, work = installed
    env = _clean_env(venv)
    version = _run([str(venv / "bin" / "python"), "-c", VERSION], cwd=str(work), env=env)
    done = _run(["brs", "--version"], cwd=str(work), env=env)
    assert done.stdout.strip() == f"brs {version.stdout.strip()}"
    assert shutil.which("brs", path=env["PATH"]) == str(venv / "bin" / "brs")


def test_package_library_and_metadata_say_the_meson_version(installed):
    venv, work = installed
    done = _run([str(venv / "bin" / "python"), "-c", VERSIONS], cwd=str(work), env=_clean_env())
    assert done.stdout.split() == [_meson_version()] * 3, (
        "brs.__version__, brs.library_version, the metadata's version: " + done.stdout)


def test_python_m_brs_compare_runs_the_bundled_command(installed):
    venv, work = installed
    python, env = str(venv / "bin" / "python"), _clean_env(venv)
    found = _run([python, "-c", CLI_FOUND], cwd=str(work), env=env).stdout.strip()
    assert found.startswith(str(venv)) and found.endswith("/brs/bin/brs"), found
    done = _run([python, "-m", "brs", "compare", "--lengths", str(_small_lengths(work)),
                 "--batch-size", "4", "--grad-accum", "2", "--dp-size", "2"],
                cwd=str(work), env=env)
    assert "200 samples" in done.stdout, done.stdout
    assert re.search(r"^brs +\d+", done.stdout, re.MULTILINE), done.stdout


def test_sdist_carries_the_license(tmp_path):
    out = tmp_path / "sdist"
    out.mkdir()
    name = _run([sys.executable, "-c", f"import mesonpy; print(mesonpy.build_sdist({str(out)!r}))"],
                cwd=str(REPO)).stdout.strip().splitlines()[-1]
    with tarfile.open(out / name) as tar:
        members = tar.getnames()
    assert any(m.endswith("/LICENSE") for m in members), members


def test_editable_install_finds_the_library_in_the_build_tree(tmp_path):
    python = _venv(tmp_path / "venv", system_site_packages=True)
    build_dir = tmp_path / "editable-build"
    _run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
          f"--config-settings=build-dir={build_dir}", "-e", str(REPO)])
    work = tmp_path / "elsewhere"
    work.mkdir()
    done = _run([str(python), "-c", SMOKE], cwd=str(work), env=_clean_env())
    assert done.stdout.strip().startswith(str(build_dir)), done.stdout
    found = _run([str(python), "-c", CLI_FOUND], cwd=str(work), env=_clean_env())
    assert found.stdout.strip().startswith(str(build_dir)), found.stdout
    version = _run([str(tmp_path / "venv" / "bin" / "brs"), "--version"], cwd=str(work),
                   env=_clean_env())
    assert version.stdout.startswith("brs "), version.stdout
    versions = _run([str(python), "-c", VERSIONS], cwd=str(work), env=_clean_env())
    assert versions.stdout.split() == [_meson_version()] * 3, versions.stdout
