//! The library's option table (LIBBRS_1.1): the one place that names every
//! option, its type, default, bounds and help. Read it instead of restating
//! any of them.

use brs_sys as sys;
use std::ffi::{c_char, CStr};

/// The default and bounds of an option, in its type.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    Int {
        default: i64,
        lower: i64,
        upper: i64,
    },
    Double {
        default: f64,
        lower: f64,
        upper: f64,
    },
}

/// One option of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionInfo {
    /// The BRS_OPT_* key.
    pub key: sys::brs_option,
    /// The option's one name, e.g. "batch_size".
    pub name: &'static str,
    /// A one-line description.
    pub help: &'static str,
    pub value: OptionValue,
    /// The names of the values lower..=upper of an enum-like option
    /// (strategy, sync); empty for a plain number.
    pub value_names: Vec<&'static str>,
}

fn static_str(pointer: *const c_char) -> &'static str {
    // SAFETY: libbrs returns static NUL-terminated strings it never frees.
    unsafe { CStr::from_ptr(pointer) }.to_str().unwrap_or("?")
}

fn value_of(key: sys::brs_option) -> Option<OptionValue> {
    let mut kind = -1i32;
    // SAFETY: valid out-pointers; the table is read-only and thread-safe.
    unsafe {
        if sys::brs_option_type(&mut kind, key) != sys::BRS_OK {
            return None;
        }
        if kind == sys::BRS_OPTION_INT {
            let (mut default, mut lower, mut upper) = (0i64, 0i64, 0i64);
            let ok = sys::brs_option_default_int(&mut default, key) == sys::BRS_OK
                && sys::brs_option_bounds_int(&mut lower, &mut upper, key) == sys::BRS_OK;
            ok.then_some(OptionValue::Int {
                default,
                lower,
                upper,
            })
        } else {
            let (mut default, mut lower, mut upper) = (0f64, 0f64, 0f64);
            let ok = sys::brs_option_default_double(&mut default, key) == sys::BRS_OK
                && sys::brs_option_bounds_double(&mut lower, &mut upper, key) == sys::BRS_OK;
            ok.then_some(OptionValue::Double {
                default,
                lower,
                upper,
            })
        }
    }
}

fn value_names(key: sys::brs_option, value: &OptionValue) -> Vec<&'static str> {
    let OptionValue::Int { lower, upper, .. } = *value else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for v in lower..=upper {
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: a valid out-pointer; BRS_ERR_UNSUPPORTED for plain numbers.
        if unsafe { sys::brs_option_value_name(&mut name, key, v) } != sys::BRS_OK {
            return Vec::new();
        }
        names.push(static_str(name));
    }
    names
}

fn info(index: usize) -> Option<OptionInfo> {
    let mut key: sys::brs_option = 0;
    let mut name: *const c_char = std::ptr::null();
    let mut help: *const c_char = std::ptr::null();
    // SAFETY: valid out-pointers; index < brs_option_count.
    unsafe {
        if sys::brs_option_key(&mut key, index) != sys::BRS_OK
            || sys::brs_option_name(&mut name, key) != sys::BRS_OK
            || sys::brs_option_help(&mut help, key) != sys::BRS_OK
        {
            return None;
        }
    }
    let value = value_of(key)?;
    let value_names = value_names(key, &value);
    Some(OptionInfo {
        key,
        name: static_str(name),
        help: static_str(help),
        value,
        value_names,
    })
}

/// Every option of the loaded libbrs, in the table's order.
pub fn options() -> Vec<OptionInfo> {
    let mut count = 0usize;
    // SAFETY: a valid out-pointer.
    if unsafe { sys::brs_option_count(&mut count) } != sys::BRS_OK {
        return Vec::new();
    }
    (0..count).filter_map(info).collect()
}

/// The option named `name`, if the library has one.
pub fn option(name: &str) -> Option<OptionInfo> {
    options().into_iter().find(|o| o.name == name)
}

/// The value of an option: what [`SamplerBuilder::option`](crate::SamplerBuilder::option)
/// sets and [`Sampler::option`](crate::Sampler::option) reads back.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer (a bool is 1 or 0). Wide enough for every Rust integer:
    /// the library's int64_t range is checked when the option is set.
    Int(i128),
    Double(f64),
    /// One of the named values of an option such as strategy or sync.
    Name(String),
}

macro_rules! integer_values {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(value: $t) -> Value {
                Value::Int(i128::from(value))
            }
        }
    )*};
}
integer_values!(i8, i16, i32, i64, i128, u8, u16, u32, u64, bool);

impl From<usize> for Value {
    fn from(value: usize) -> Value {
        Value::Int(value as i128)
    }
}

impl From<f64> for Value {
    fn from(value: f64) -> Value {
        Value::Double(value)
    }
}

impl From<f32> for Value {
    fn from(value: f32) -> Value {
        Value::Double(f64::from(value))
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Value {
        Value::Name(value.to_owned())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Value {
        Value::Name(value)
    }
}
