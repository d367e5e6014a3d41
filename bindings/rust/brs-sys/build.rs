//! Finds libbrs and tells Cargo how to link it.
//!
//! Where the library is looked for, first match wins:
//!   1. `BRS_LIB_DIR`: a directory holding libbrs.so (or only libbrs.so.1);
//!   2. `BRS_LIBRARY`: the path of the library file itself (e.g. libbrs.so.1);
//!   3. the `pkg-config` command (`pkg-config --libs-only-L libbrs`), which also
//!      reads Meson's uninstalled .pc: PKG_CONFIG_PATH=<builddir>/meson-uninstalled;
//!   4. the linker's default search path.
//!
//! The directory found is published to dependent build scripts as
//! DEP_BRS_LIB_DIR, and the tests of this crate get it as their run path so
//! they find the library at run time without LD_LIBRARY_PATH.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const SEARCH_VARIABLES: &[&str] = &[
    "BRS_LIB_DIR",
    "BRS_LIBRARY",
    "PKG_CONFIG",
    "PKG_CONFIG_PATH",
    "PKG_CONFIG_LIBDIR",
    "PKG_CONFIG_SYSROOT_DIR",
];

/// How to name the library to the linker.
enum Link {
    /// `-L dir -lbrs`
    Dir(PathBuf),
    /// `-L dir -l:file`, for a directory without the libbrs.so development link.
    File(PathBuf, String),
    /// `-lbrs` from the linker's default path.
    Default,
}

fn main() {
    for variable in SEARCH_VARIABLES {
        println!("cargo:rerun-if-env-changed={variable}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    emit(find_library());
}

fn find_library() -> Link {
    if let Some(dir) = env::var_os("BRS_LIB_DIR") {
        return link_from_dir(Path::new(&dir), "BRS_LIB_DIR");
    }
    if let Some(file) = env::var_os("BRS_LIBRARY") {
        return link_from_file(Path::new(&file));
    }
    if let Some(dir) = pkg_config_dir() {
        return Link::Dir(dir);
    }
    Link::Default
}

/// A directory named by the user must hold the library: say so if it does not,
/// rather than failing later with an obscure linker error.
fn link_from_dir(dir: &Path, variable: &str) -> Link {
    // Build scripts run in the crate directory, so a relative path would not
    // mean what the user typed.
    if dir.is_relative() {
        panic!("{variable}={} must be an absolute path", dir.display());
    }
    if dir.join("libbrs.so").exists() {
        return Link::Dir(dir.to_path_buf());
    }
    if dir.join("libbrs.so.1").exists() {
        return Link::File(dir.to_path_buf(), "libbrs.so.1".to_string());
    }
    panic!(
        "{variable}={} holds neither libbrs.so nor libbrs.so.1; \
         point it at the directory of the built library (e.g. <meson builddir>/libbrs)",
        dir.display()
    );
}

fn link_from_file(file: &Path) -> Link {
    let name = file.file_name().and_then(|n| n.to_str());
    if file.is_relative() {
        panic!("BRS_LIBRARY={} must be an absolute path", file.display());
    }
    match (file.is_file(), file.parent(), name) {
        (true, Some(dir), Some(name)) => Link::File(dir.to_path_buf(), name.to_string()),
        _ => panic!("BRS_LIBRARY={} is not a library file", file.display()),
    }
}

/// The first -L directory pkg-config reports for libbrs; None when pkg-config
/// is absent, does not know libbrs, or reports only default directories.
fn pkg_config_dir() -> Option<PathBuf> {
    let program = env::var_os("PKG_CONFIG").unwrap_or_else(|| "pkg-config".into());
    let output = Command::new(program)
        .args(["--libs-only-L", "libbrs"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let flags = String::from_utf8(output.stdout).ok()?;
    flags
        .split_whitespace()
        .find_map(|flag| flag.strip_prefix("-L"))
        .map(PathBuf::from)
}

fn emit(link: Link) {
    match link {
        Link::Dir(dir) => {
            search(&dir);
            println!("cargo:rustc-link-lib=dylib=brs");
        }
        Link::File(dir, name) => {
            search(&dir);
            println!("cargo:rustc-link-lib=dylib:+verbatim={name}");
        }
        Link::Default => {
            println!(
                "cargo:warning=libbrs not found through BRS_LIB_DIR, BRS_LIBRARY or pkg-config; \
                 linking -lbrs from the default linker path"
            );
            println!("cargo:rustc-link-lib=dylib=brs");
        }
    }
}

fn search(dir: &Path) {
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{}", dir.display());
    // Read by dependents' build scripts as DEP_BRS_LIB_DIR.
    println!("cargo:lib_dir={}", dir.display());
}
