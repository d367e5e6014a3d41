#!/usr/bin/env python3
"""Install the built project into a temporary DESTDIR and use it as a user would.

    install_test.py MESON BUILD_ROOT SOURCE_ROOT PROJECT_VERSION CONSUMER_C

Checks: the installed files (brs.h at <includedir>/brs.h, identical to the
source; libbrs.so.1 with SONAME libbrs.so.1, the real file
libbrs.so.<version>, the libbrs.so link, libbrs.pc, the brs executable);
`pkg-config --cflags --libs libbrs` from the installed libbrs.pc compiles
consumer.c, which then runs against the installed library (LD_LIBRARY_PATH)
and prints a plan that is checked here; `brs plan` runs from the install.
Exit status 0 pass, 1 fail, 77 skip (a sanitized build: an uninstrumented
consumer cannot load it).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


class Failure(Exception):
    pass


def run(cmd, env=None, stdin=None, check=True):
    proc = subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise Failure(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return proc


def expect(condition, message):
    if not condition:
        raise Failure(message)


def build_options(meson, build_root):
    out = run([meson, "introspect", "--buildoptions", build_root]).stdout
    return {o["name"]: o["value"] for o in json.loads(out)}


def under(destdir, prefix, path):
    """Where <prefix>/<path> lands inside destdir (path may be absolute)."""
    full = path if os.path.isabs(path) else os.path.join(prefix, path)
    return os.path.join(destdir, full.lstrip("/"))


def dynamic_section(path):
    return run(["readelf", "-d", path]).stdout


def check_library(libdir, version):
    soname_link = os.path.join(libdir, "libbrs.so.1")
    real = os.path.join(libdir, f"libbrs.so.{version}")
    expect(os.path.isfile(real), f"missing {real}")
    expect(os.path.exists(soname_link), f"missing {soname_link}")
    expect(os.path.realpath(soname_link) == os.path.realpath(real),
           "libbrs.so.1 does not lead to the versioned file")
    expect(os.path.exists(os.path.join(libdir, "libbrs.so")), "missing libbrs.so (link for -lbrs)")
    expect("Library soname: [libbrs.so.1]" in dynamic_section(soname_link),
           "SONAME of the installed library is not libbrs.so.1")


def pkg_config(pcdir, root, *args):
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir, PKG_CONFIG_LIBDIR=pcdir)
    # The .pc names the configured prefix; relocate it into the DESTDIR copy.
    return run(["pkg-config", f"--define-variable=prefix={root}", *args, "libbrs"], env=env)


def resolved_libbrs(binary, env):
    """The file the dynamic loader picks for libbrs.so.1 (from ldd)."""
    for line in run(["ldd", binary], env=env).stdout.splitlines():
        m = re.match(r"\s*libbrs\.so\.1 => (\S+)", line)
        if m:
            return os.path.realpath(m.group(1))
    raise Failure(f"{binary} does not load libbrs.so.1")


def header_constant(header, name):
    m = re.search(rf"#define {name} \(?(-?\d+)\)?", open(header).read())
    expect(m is not None, f"{name} not in {header}")
    return int(m.group(1))


def check_consumer_output(out, version, header):
    lines = out.splitlines()
    fields = {line.split()[0]: line.split()[1:] for line in lines if line.split()}
    major, minor, patch = (int(x) for x in version.split("."))
    number = major * 10000 + minor * 100 + patch
    expect(fields["version"] == [version, str(number)], f"runtime version {fields['version']}")
    expect(fields["header"] == [str(number)], f"installed header version {fields['header']}")
    lengths = [int(x) for x in fields["lengths"]]
    expect(fields["steps"] == [str(len(lengths) // 24)], f"steps {fields['steps']}")
    seen = []
    micro_batches = [line.split()[1:] for line in lines if line.startswith("mb ")]
    expect(len(micro_batches) == 2 * 6, f"{len(micro_batches)} micro-batches, want 12")
    for mb in micro_batches:
        padded, indices = int(mb[3]), [int(x) for x in mb[4:]]
        expect(indices, f"empty micro-batch {mb[:3]}")
        expect(padded == len(indices) * max(lengths[i] for i in indices),
               f"padded tokens of {mb[:3]}")
        seen += indices
    expect(sorted(seen) == list(range(len(lengths))), "indices do not cover the dataset once")
    status = int(fields["zero-length"][0])
    expect(status == header_constant(header, "BRS_ERR_INVALID_LENGTH"),
           f"zero length gave status {status}")


def check_consumer(root, pcdir, libdir, header, consumer_c, version, work):
    modversion = pkg_config(pcdir, root, "--modversion").stdout.strip()
    expect(modversion == version, f"pkg-config --modversion {modversion}")
    flags = pkg_config(pcdir, root, "--cflags", "--libs").stdout.split()
    expect(f"-I{os.path.dirname(header)}" in flags or os.path.dirname(header) == "/usr/include",
           f"pkg-config --cflags does not name the installed include dir: {flags}")
    exe = os.path.join(work, "consumer")
    cc = os.environ.get("CC", "cc")
    run([cc, "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", consumer_c, "-o", exe,
         *flags])
    expect("Shared library: [libbrs.so.1]" in dynamic_section(exe),
           "the consumer does not need libbrs.so.1")
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    expect(resolved_libbrs(exe, env) == os.path.realpath(os.path.join(libdir, "libbrs.so.1")),
           "the consumer loads a libbrs other than the installed one")
    check_consumer_output(run([exe], env=env).stdout, version, header)


def check_cli(bindir, libdir, build_root):
    brs = os.path.join(bindir, "brs")
    expect(os.access(brs, os.X_OK), f"missing executable {brs}")
    expect(build_root not in dynamic_section(brs), "installed brs keeps a RUNPATH into the build")
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    expect(resolved_libbrs(brs, env) == os.path.realpath(os.path.join(libdir, "libbrs.so.1")),
           "installed brs loads a libbrs other than the installed one")
    lengths = [5, 3, 8, 1, 6, 2]
    out = run([brs, "plan", "--lengths", "-", "--batch-size", "2"], env=env,
              stdin="".join(f"{n}\n" for n in lengths)).stdout
    seen = []
    for line in out.splitlines():
        mb = json.loads(line)
        indices = mb["indices"]
        expect(mb["padded_tokens"] == len(indices) * max(lengths[i] for i in indices),
               f"brs plan: padded tokens of {line}")
        seen += indices
    expect(sorted(seen) == list(range(len(lengths))), f"brs plan does not cover the input:\n{out}")


def check_tcl(build_root, destdir, prefix, options, libdir):
    """The Tcl SWIG module, when this build made one, loads with `package require`."""
    if not os.path.exists(os.path.join(build_root, "bindings", "swig", "brs_swig_tcl.so")):
        return
    tclsh = shutil.which("tclsh")
    expect(tclsh is not None, "the Tcl module was built but there is no tclsh to load it")
    tcl_dir = under(destdir, prefix, options["tcl_dir"] or "lib/tcltk/brs_swig")
    expect(os.path.isfile(os.path.join(tcl_dir, "pkgIndex.tcl")), f"missing {tcl_dir}/pkgIndex.tcl")
    env = dict(os.environ, LD_LIBRARY_PATH=libdir, TCLLIBPATH=os.path.dirname(tcl_dir))
    script = "package require brs_swig; puts [package present brs_swig] ; puts [version_string]\n"
    out = run([tclsh], env=env, stdin=script).stdout.split()
    expect(out == [options["version"], options["version"]],
           f"package require brs_swig printed {out}")


def main():
    meson, build_root, source_root, version, consumer_c = sys.argv[1:6]
    options = build_options(meson, build_root)
    if options.get("b_sanitize") not in ("none", "", [], None):
        print("sanitized build: an uninstrumented consumer cannot load it; skipped")
        return 77
    for tool in ("pkg-config", "readelf", "ldd", os.environ.get("CC", "cc")):
        if shutil.which(tool) is None:
            print(f"{tool} not found; skipped")
            return 77
    prefix = options["prefix"]
    with tempfile.TemporaryDirectory(prefix="brs-install-") as work:
        destdir = os.path.join(work, "destdir")
        run([meson, "install", "-C", build_root, "--no-rebuild", "--destdir", destdir])
        root = under(destdir, prefix, "")
        libdir = under(destdir, prefix, options["libdir"])
        header = os.path.join(under(destdir, prefix, options["includedir"]), "brs.h")
        pcdir = os.path.join(libdir, "pkgconfig")
        expect(os.path.isfile(header), f"missing {header}")
        with open(header) as a, open(os.path.join(source_root, "include", "brs.h")) as b:
            expect(a.read() == b.read(), "installed brs.h differs from include/brs.h")
        expect(os.path.isfile(os.path.join(pcdir, "libbrs.pc")), f"missing {pcdir}/libbrs.pc")
        check_library(libdir, version)
        check_consumer(root.rstrip("/"), pcdir, libdir, header, consumer_c, version, work)
        if options.get("cli", True):
            check_cli(under(destdir, prefix, options["bindir"]), libdir, build_root)
        check_tcl(build_root, destdir, prefix, dict(options, version=version), libdir)
    print("install test passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as failure:
        print(f"install test FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
