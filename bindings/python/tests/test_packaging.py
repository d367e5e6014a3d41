"""pip builds a wheel of the checkout that bundles libbrs.so.1 and imports without BRS_LIBRARY;
the package, its metadata and the library all carry meson.build's project version."""

import json
import os
import subprocess
import sys
import zipfile

import pytest

from brs_testing import REPO

pytest.importorskip("mesonpy")

VERSIONS = ("import brs, importlib.metadata as m\n"
            "print(brs.__version__, brs.library_version, m.version('brs'))\n")


def _meson_version():
    """meson.build's project version: the single source of every version below."""
    done = subprocess.run(["meson", "introspect", "--projectinfo", str(REPO / "meson.build")],
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)["version"]


def test_source_tree_package_is_the_version_of_its_library():
    import brs
    assert brs.__version__ == brs.library_version == _meson_version()

SMOKE = ("import brs, brs._native as n\n"
         "s = brs.BatchRebalanceSampler([5, 3, 9, 1, 7, 2], per_device_batch_size=2)\n"
         "assert sum(len(mb) for mb in s) == 6\n"
         "print(n.library_path)\n")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation: the build requirements are the pinned ones already installed, and
    # the machine may have no index to fetch them from.
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps",
                           "--no-build-isolation", "-w", str(out)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (
        f"pip wheel failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}\n"
        "If meson-python says the package is split between platlib and purelib, libbrs must be "
        "installed with import('python').find_installation(pure: false) in libbrs/meson.build.")
    (path,) = out.glob("brs-*.whl")
    return path


def test_wheel_holds_the_package_and_the_library(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "brs/__init__.py" in names and "brs/sampler.py" in names
    assert any(name.startswith("brs/libbrs.so.1") for name in names)
    assert "brs/bin/brs" in names, "the C command, run by the brs console script"
    assert not any(name.endswith(("brs.h", ".pc")) for name in names), "devel files in a wheel"


def test_wheel_name_has_the_meson_version(wheel):
    assert wheel.name.split("-")[1] == _meson_version(), wheel.name


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The wheel installed into a directory of its own, and the environment that imports it."""
    site = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target",
                           str(site), str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("BRS_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    return site, env


def test_installed_wheel_loads_its_bundled_library(installed, tmp_path):
    site, env = installed
    run = subprocess.run([sys.executable, "-c", SMOKE], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().startswith(str(site / "brs" / "libbrs.so.1"))


def test_installed_package_library_and_metadata_agree(installed, tmp_path):
    site, env = installed
    run = subprocess.run([sys.executable, "-c", VERSIONS], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [_meson_version()] * 3, (
        "brs.__version__, brs.library_version, the metadata's version: " + run.stdout)


def test_every_binding_manifest_carries_the_meson_version():
    """The Rust workspace, its brs-sys dependency, the lock file and the Julia project say the
    same version as meson.build, so no binding is published under another one."""
    version = _meson_version()
    rust = REPO / "bindings" / "rust"
    manifests = {
        rust / "Cargo.toml": f'version = "{version}"',
        rust / "brs" / "Cargo.toml": f'brs-sys = {{ path = "../brs-sys", version = "{version}" }}',
        REPO / "bindings" / "julia" / "BatchRebalance.jl" / "Project.toml": f'version = "{version}"',
    }
    for path, line in manifests.items():
        assert line in path.read_text().splitlines(), f"{path} lacks {line!r}"
    lock = (rust / "Cargo.lock").read_text()
    for crate in ("brs", "brs-sys"):
        assert f'name = "{crate}"\nversion = "{version}"' in lock, f"Cargo.lock: {crate} is not {version}"
