"""The Debian packages of debian/: built with dpkg-buildpackage from a copy of the checkout,
installed on this machine, used as a distribution's user would (a pkg-config consumer, the
system python3 importing brs and brs_swig against the system libbrs, tclsh, the man page),
then purged. Needs root (it installs packages); skipped otherwise."""

import os
import re
import shutil
import subprocess
import tarfile

import pytest

from brs_testing import REPO

PACKAGES = ("libbrs1", "libbrs-dev", "brs-tools", "python3-brs", "tcl-brs")
SYSTEM_PYTHON = "/usr/bin/python3"


def _run(args, **kwargs):
    done = subprocess.run(args, capture_output=True, text=True, timeout=900, **kwargs)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def _meson_version():
    return re.search(r"version:\s*'([^']+)'", (REPO / "meson.build").read_text()).group(1)


def _clean_env():
    return {k: v for k, v in os.environ.items()
            if k not in ("BRS_LIBRARY", "PYTHONPATH", "BRS_CLI", "LD_LIBRARY_PATH")}


def test_changelog_version_is_the_project_version():
    first = (REPO / "debian" / "changelog").read_text().splitlines()[0]
    assert re.match(r"libbrs \(([^)]+)\)", first).group(1) == _meson_version(), (
        "debian/changelog must name the version of meson.build: add an entry with dch")


def test_symbols_file_lists_every_exported_symbol():
    made = _run(["python3", str(REPO / "debian" / "symbols-from-version-script"),
                 str(REPO / "libbrs" / "libbrs.sym")]).stdout
    listed = set(re.findall(r"^ (brs_\w+)@LIBBRS_1\.\d+ ", made, re.M))
    script = (REPO / "libbrs" / "libbrs.sym").read_text()
    exported = set(re.findall(r"^\s*(brs_\w+);", script, re.M))
    assert listed == exported and exported


def _skip_reason():
    if os.geteuid() != 0:
        return "installing Debian packages needs root"
    for tool in ("dpkg-buildpackage", "dpkg-checkbuilddeps", "dpkg", SYSTEM_PYTHON):
        if shutil.which(tool) is None:
            return f"{tool} not found (Debian packaging tools: scripts/install-deps)"
    return None


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("deb")
    source = work / "libbrs"
    # The tracked files only, as a source package holds them: no build trees of the checkout.
    files = _run(["git", "ls-files", "-co", "--exclude-standard"], cwd=str(REPO)).stdout.split("\n")
    archive = work / "source.tar"
    with tarfile.open(archive, "w") as tar:
        for name in filter(None, files):
            if (REPO / name).exists():
                tar.add(str(REPO / name), arcname=name, recursive=False)
    source.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(source)
    _run(["dpkg-checkbuilddeps"], cwd=str(source))
    _run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=str(source), env=_clean_env())
    version = _meson_version()
    debs = {name: next(work.glob(f"{name}_{version}_*.deb")) for name in PACKAGES}
    try:
        _run(["dpkg", "-i", *map(str, debs.values())])
        yield debs
    finally:
        subprocess.run(["dpkg", "--purge", *PACKAGES], capture_output=True, timeout=300)


def _contents(deb):
    return _run(["dpkg-deb", "-c", str(deb)]).stdout


def test_each_package_holds_its_part(installed):
    expected = {
        "libbrs1": [r"/usr/lib/[^/]+/libbrs\.so\.1\.\d+\.\d+$", r"/usr/lib/[^/]+/libbrs\.so\.1 ->"],
        "libbrs-dev": [r"/usr/include/brs\.h$", r"/pkgconfig/libbrs\.pc$", r"/libbrs\.so ->"],
        "brs-tools": [r"/usr/bin/brs$", r"/usr/share/man/man1/brs\.1\.gz$"],
        "python3-brs": [r"/dist-packages/brs/sampler\.py$", r"/dist-packages/brs_swig\.py$",
                        r"/dist-packages/_brs_swig[^/]*\.so$"],
        "tcl-brs": [r"/brs_swig/pkgIndex\.tcl$", r"/brs_swig/brs_swig_tcl\.so$"],
    }
    for name, patterns in expected.items():
        listing = _contents(installed[name])
        for pattern in patterns:
            assert re.search(pattern, listing, re.M), f"{name} lacks {pattern}:\n{listing}"
    python_listing = _contents(installed["python3-brs"])
    assert "libbrs.so" not in python_listing, "python3-brs must use the system libbrs"


def test_pkg_config_consumer_builds_and_runs_against_the_package(installed, tmp_path):
    flags = _run(["pkg-config", "--cflags", "--libs", "libbrs"], env=_clean_env()).stdout.split()
    exe = tmp_path / "consumer"
    _run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror",
          str(REPO / "tests" / "install" / "consumer.c"), "-o", str(exe), *flags])
    out = _run([str(exe)], env=_clean_env()).stdout
    assert re.search(rf"^version {re.escape(_meson_version())} ", out, re.M), out
    ldd = _run(["ldd", str(exe)]).stdout
    loaded = re.search(r"libbrs\.so\.1 => (\S+)", ldd)
    assert loaded and os.path.realpath(loaded.group(1)).startswith("/usr/lib/"), ldd


def test_system_python_imports_brs_and_swig_against_the_system_library(installed, tmp_path):
    script = ("import brs, brs._native as n, brs_swig\n"
              "s = brs.BatchRebalanceSampler([5, 3, 9, 1, 7, 2], per_device_batch_size=2)\n"
              "assert sorted(i for mb in s for i in mb) == list(range(6))\n"
              "print(n.library_path)\n"
              "print(brs_swig.version_string())\n")
    out = _run([SYSTEM_PYTHON, "-c", script], cwd=str(tmp_path), env=_clean_env()).stdout.split()
    assert out[0] == "libbrs.so.1", f"loaded {out[0]}, not the system library by its SONAME"
    assert out[1] == _meson_version()


def test_cli_tcl_and_man_page_are_installed(installed):
    assert _run(["/usr/bin/brs", "--version"], env=_clean_env()).stdout.strip()
    tcl = _run(["tclsh"], input="puts [package require brs_swig]\n", env=_clean_env()).stdout
    assert tcl.strip() == _meson_version()
    assert os.path.exists("/usr/share/man/man1/brs.1.gz")
