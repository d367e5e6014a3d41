//! Gives this crate's test binaries the run path of the libbrs that brs-sys
//! linked (DEP_BRS_LIB_DIR), so `cargo test` finds the library at run time
//! without LD_LIBRARY_PATH. Nothing is added when the library came from the
//! linker's default path.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_BRS_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_BRS_LIB_DIR") {
        println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{dir}");
    }
}
