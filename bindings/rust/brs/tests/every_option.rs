//! Every option of the library's table is set through the builder by its
//! one name and read back from the library: the table is walked here with
//! the raw brs_option_* calls, so an option added to options.def is covered
//! with no edit.

mod common;

use brs::{ErrorCode, Sampler, Value};
use brs_sys as sys;
use common::synthetic_lengths;
use std::ffi::{c_char, CStr};

/// One row of the table, as the raw calls report it.
struct Row {
    name: String,
    default: Value,
    lower: Value,
    upper: Value,
}

fn ok(status: sys::brs_status) {
    assert_eq!(status, sys::BRS_OK, "a brs_option_* call failed");
}

fn row(index: usize) -> Row {
    let (mut key, mut kind) = (0, -1);
    let mut name: *const c_char = std::ptr::null();
    // SAFETY: valid out-pointers; index is below brs_option_count; the name
    // is a static string.
    unsafe {
        ok(sys::brs_option_key(&mut key, index));
        ok(sys::brs_option_name(&mut name, key));
        ok(sys::brs_option_type(&mut kind, key));
        let name = CStr::from_ptr(name).to_str().unwrap().to_owned();
        if kind == sys::BRS_OPTION_DOUBLE {
            let (mut default, mut lower, mut upper) = (0f64, 0f64, 0f64);
            ok(sys::brs_option_default_double(&mut default, key));
            ok(sys::brs_option_bounds_double(&mut lower, &mut upper, key));
            let v = Value::Double;
            return Row {
                name,
                default: v(default),
                lower: v(lower),
                upper: v(upper),
            };
        }
        let (mut default, mut lower, mut upper) = (0i64, 0i64, 0i64);
        ok(sys::brs_option_default_int(&mut default, key));
        ok(sys::brs_option_bounds_int(&mut lower, &mut upper, key));
        let v = |x: i64| Value::Int(i128::from(x));
        Row {
            name,
            default: v(default),
            lower: v(lower),
            upper: v(upper),
        }
    }
}

fn table() -> Vec<Row> {
    let mut count = 0usize;
    // SAFETY: a valid out-pointer.
    ok(unsafe { sys::brs_option_count(&mut count) });
    (0..count).map(row).collect()
}

/// A value within the bounds other than the default: the next one up. An
/// integer of 0 ..= i64::MAX (a count without bound: a cap whose 0 means
/// none, the seed) takes 2^20 instead, since a cap of 1 token is one that
/// no sample meets.
fn other_value(row: &Row) -> Value {
    let unbounded = Value::Int(i128::from(i64::MAX));
    match (&row.default, &row.lower, &row.upper) {
        (_, &Value::Int(0), upper) if *upper == unbounded => Value::Int(1 << 20),
        (&Value::Int(default), &Value::Int(lower), &Value::Int(upper)) => {
            Value::Int(if default < upper { default + 1 } else { lower })
        }
        (&Value::Double(default), &Value::Double(lower), &Value::Double(upper)) => {
            Value::Double(if default + 0.5 <= upper {
                default + 0.5
            } else {
                lower
            })
        }
        _ => unreachable!("bounds and default have the option's type"),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Double(a), Value::Double(b)) => (a - b).abs() <= 1e-6, // stored to 1e-6
        _ => a == b,
    }
}

#[test]
fn every_option_of_the_table_is_set_by_its_name_and_read_back() {
    let rows = table();
    assert!(rows.len() >= 14, "the table has {} options", rows.len());
    let lengths = synthetic_lengths(400, 3);
    let builder = rows.iter().fold(Sampler::builder(), |builder, row| {
        let value = other_value(row);
        assert!(!same(&value, &row.default), "{}: no other value", row.name);
        builder.option(&row.name, value)
    });
    let sampler = builder.build(&lengths).unwrap();
    for row in &rows {
        let got = sampler.option(&row.name).unwrap();
        assert!(
            same(&got, &other_value(row)),
            "{}: set {:?}, read {got:?}",
            row.name,
            other_value(row)
        );
    }
}

#[test]
fn an_option_left_unset_keeps_the_library_default() {
    let sampler = Sampler::builder().build(&synthetic_lengths(64, 5)).unwrap();
    for row in table() {
        let got = sampler.option(&row.name).unwrap();
        assert!(
            same(&got, &row.default),
            "{}: {got:?}, default {:?}",
            row.name,
            row.default
        );
    }
}

#[test]
fn named_values_and_switches_are_taken_by_name_and_bool() {
    let sampler = Sampler::builder()
        .option("sync", "step")
        .option("strategy", "length_grouped")
        .option("shuffle", false)
        .option("alpha", 0)
        .build(&synthetic_lengths(64, 5))
        .unwrap();
    assert_eq!(
        sampler.option("sync").unwrap(),
        Value::Int(i128::from(sys::BRS_SYNC_STEP))
    );
    let grouped = i128::from(sys::BRS_STRATEGY_LENGTH_GROUPED);
    assert_eq!(sampler.option("strategy").unwrap(), Value::Int(grouped));
    assert!(!sampler.shuffle());
    assert_eq!(sampler.alpha(), 0.0);
}

#[test]
fn typed_methods_and_names_set_the_same_option() {
    let by_method = Sampler::builder()
        .per_device_batch_size(3)
        .seed(9)
        .alpha(0.25);
    let by_name = Sampler::builder()
        .option("batch_size", 3)
        .option("seed", 9u64)
        .option("alpha", 0.25);
    assert_eq!(by_method, by_name);
}

#[test]
fn a_wrong_name_kind_or_value_fails_the_build() {
    let lengths = synthetic_lengths(64, 5);
    let code = |builder: brs::SamplerBuilder| builder.build(&lengths).unwrap_err().code();
    let error = Sampler::builder()
        .option("per_device_batch_size", 2)
        .build(&lengths);
    let error = error.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Unsupported);
    assert!(
        error.message().contains("batch_size"),
        "{}",
        error.message()
    );
    assert_eq!(
        code(Sampler::builder().option("seed", 0.5)),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(Sampler::builder().option("alpha", "high")),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(Sampler::builder().option("seed", "random")),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(Sampler::builder().option("sync", "never")),
        ErrorCode::OutOfRange
    );
    assert_eq!(
        code(Sampler::builder().option("sync", 2)),
        ErrorCode::OutOfRange
    );
    assert_eq!(
        code(Sampler::builder().option("seed", u64::MAX)),
        ErrorCode::OutOfRange
    );
    assert_eq!(
        code(Sampler::builder().option("seed", -1)),
        ErrorCode::OutOfRange
    );
}
