//! Errors: every failed call becomes an `Error` carrying the status code and
//! a message made of brs_strerror() and the handle's detail message.

use brs_sys as sys;
use std::ffi::{c_char, CStr};
use std::fmt;

/// The status codes of brs.h (`BRS_ERR_*`), and any other negative value
/// a later library version may return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    NullPointer,
    InvalidArgument,
    Unsupported,
    OutOfRange,
    NoMemory,
    State,
    InvalidLength,
    TooFewSamples,
    SampleTooLong,
    CapInfeasible,
    TooLarge,
    /// A status this binding does not know (from a newer libbrs).
    Unknown(i32),
}

const CODES: [(i32, ErrorCode); 11] = [
    (sys::BRS_ERR_NULL_POINTER, ErrorCode::NullPointer),
    (sys::BRS_ERR_INVALID_ARGUMENT, ErrorCode::InvalidArgument),
    (sys::BRS_ERR_UNSUPPORTED, ErrorCode::Unsupported),
    (sys::BRS_ERR_OUT_OF_RANGE, ErrorCode::OutOfRange),
    (sys::BRS_ERR_NO_MEMORY, ErrorCode::NoMemory),
    (sys::BRS_ERR_STATE, ErrorCode::State),
    (sys::BRS_ERR_INVALID_LENGTH, ErrorCode::InvalidLength),
    (sys::BRS_ERR_TOO_FEW_SAMPLES, ErrorCode::TooFewSamples),
    (sys::BRS_ERR_SAMPLE_TOO_LONG, ErrorCode::SampleTooLong),
    (sys::BRS_ERR_CAP_INFEASIBLE, ErrorCode::CapInfeasible),
    (sys::BRS_ERR_TOO_LARGE, ErrorCode::TooLarge),
];

impl ErrorCode {
    /// The code of a C status (which must not be BRS_OK).
    pub fn from_status(status: i32) -> ErrorCode {
        CODES
            .iter()
            .find(|(value, _)| *value == status)
            .map_or(ErrorCode::Unknown(status), |(_, code)| *code)
    }

    /// The C status value (`BRS_ERR_*`).
    pub fn status(self) -> i32 {
        match self {
            ErrorCode::Unknown(status) => status,
            known => CODES.iter().find(|(_, code)| *code == known).unwrap().0,
        }
    }

    /// The library's sentence for this code (brs_strerror).
    pub fn description(self) -> String {
        // SAFETY: brs_strerror returns a static string for any value.
        unsafe { owned(sys::brs_strerror(self.status())) }
    }
}

/// A failed libbrs call: what went wrong (`code`) and why (`message`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error whose message is brs_strerror(code), then the detail if any.
    pub(crate) fn new(code: ErrorCode, detail: &str) -> Error {
        let description = code.description();
        let message = if detail.is_empty() {
            description
        } else {
            format!("{description}: {detail}")
        };
        Error { code, message }
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The C status value of the error (`BRS_ERR_*`).
    pub fn status(&self) -> i32 {
        self.code.status()
    }

    /// brs_strerror() of the code, then ": " and the handle's detail message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Copies a C string; NULL (never returned by libbrs) becomes "".
///
/// # Safety
/// `text` is NULL or a NUL-terminated string valid for the duration of the call.
pub(crate) unsafe fn owned(text: *const c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    CStr::from_ptr(text).to_string_lossy().into_owned()
}

/// Ok for BRS_OK; otherwise an Error with the detail `last_error` reads from
/// the handle. It must be called right after the failed call, before any
/// other call on that handle replaces the message.
pub(crate) fn check(status: i32, last_error: impl FnOnce() -> String) -> Result<()> {
    if status == sys::BRS_OK {
        Ok(())
    } else {
        Err(Error::new(ErrorCode::from_status(status), &last_error()))
    }
}
