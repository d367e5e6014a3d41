//! Safe Rust interface to libbrs, the batch-rebalancing planner for
//! distributed training: every optimizer step is a seeded random draw of
//! B samples, split into K = dp_size * grad_accum micro-batches of variable
//! size whose largest cost is the exact minimum.
//!
//! ```no_run
//! use brs::Sampler;
//!
//! let lengths: Vec<u32> = vec![12, 512, 40, 7, 300, 91, 64, 1024];
//! let mut sampler = Sampler::builder()
//!     .per_device_batch_size(2)
//!     .dp_size(2)
//!     .rank(0)
//!     .seed(42)
//!     .build(&lengths)?;
//! for epoch in 0..3 {
//!     sampler.set_epoch(epoch);
//!     for batch in sampler.micro_batches()? {
//!         let indices: Vec<u64> = batch?; // this rank's next micro-batch
//!         # let _ = indices;
//!     }
//! }
//! let plan = sampler.plan(0)?; // every rank's micro-batches of step 0
//! println!("{:?}", plan.stats());
//! # Ok::<(), brs::Error>(())
//! ```
//!
//! The library is found at build time by brs-sys (`BRS_LIB_DIR`, or
//! pkg-config); see README.md.

mod builder;
mod error;
mod files;
mod iter;
mod options;
mod plan;
mod sampler;

pub use builder::SamplerBuilder;
pub use error::{Error, ErrorCode, Result};
pub use files::{CostModelFile, LengthsFile};
pub use iter::MicroBatches;
pub use options::{option, options, OptionInfo, OptionValue, Value};
pub use plan::{CpMicroBatch, MicroBatchEncoder, MicroBatchStats, Plan, PlanStats};
pub use sampler::{EpochCheck, Sampler};

use brs_sys as sys;

/// Compiles the README's example as a doctest, so it cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The version of the loaded libbrs, "MAJOR.MINOR.PATCH".
pub fn version() -> &'static str {
    // SAFETY: a static NUL-terminated string that libbrs never frees.
    let text = unsafe { std::ffi::CStr::from_ptr(sys::brs_version_string()) };
    text.to_str().unwrap_or("?")
}

/// The version of the loaded libbrs, MAJOR * 10000 + MINOR * 100 + PATCH.
pub fn version_number() -> u32 {
    // SAFETY: no arguments, any thread.
    unsafe { sys::brs_version_number() }
}

/// The major version this binding was written for; a library of another
/// major version has another ABI and is refused.
pub const VERSION_MAJOR: u32 = sys::BRS_VERSION_MAJOR;

fn check_library_version() -> Result<()> {
    let loaded = version_number() / 10000;
    if loaded == VERSION_MAJOR {
        return Ok(());
    }
    let detail = format!(
        "libbrs {} is loaded but this binding needs major version {VERSION_MAJOR}",
        version()
    );
    Err(Error::new(ErrorCode::Unsupported, &detail))
}
