//! Bad input gets an Error with the right code and a message that says
//! what is wrong: brs_strerror's sentence, then the handle's detail.

mod common;

use brs::{Error, ErrorCode, Sampler, SamplerBuilder};
use common::synthetic_lengths;

fn build_error(builder: SamplerBuilder, lengths: &[u32]) -> Error {
    builder
        .build(lengths)
        .expect_err("the sampler should be refused")
}

/// The message starts with the code's sentence and adds a detail naming `detail`.
fn assert_message(error: &Error, code: ErrorCode, detail: &str) {
    assert_eq!(error.code(), code, "{error}");
    let sentence = code.description();
    assert!(
        error.message().starts_with(&sentence),
        "{error:?} should start with {sentence:?}"
    );
    let rest = &error.message()[sentence.len()..];
    assert!(rest.contains(detail), "{error:?} should say {detail:?}");
    assert_eq!(error.to_string(), error.message());
}

#[test]
fn no_lengths_is_an_invalid_argument() {
    let error = build_error(Sampler::builder(), &[]);
    assert_message(&error, ErrorCode::InvalidArgument, "empty");
}

#[test]
fn a_zero_length_is_refused_with_its_index() {
    let mut lengths = synthetic_lengths(100, 1);
    lengths[57] = 0;
    let error = build_error(Sampler::builder().per_device_batch_size(2), &lengths);
    assert_message(&error, ErrorCode::InvalidLength, "57");
    let borrowed = Sampler::builder().build_borrowed(&lengths).unwrap_err();
    assert_eq!(borrowed.code(), ErrorCode::InvalidLength);
}

#[test]
fn fewer_samples_than_micro_batches_is_refused_when_dropping_the_last_step() {
    let lengths = synthetic_lengths(7, 2);
    let builder = Sampler::builder()
        .per_device_batch_size(1)
        .grad_accum(2)
        .dp_size(4);
    let error = build_error(builder.clone(), &lengths);
    assert_message(&error, ErrorCode::TooFewSamples, "7");
    // Kept, the last step is topped up to K = 8 instead (docs/design.md section 2).
    let kept = builder.drop_last(false).build(&lengths).unwrap();
    assert_eq!(kept.steps_per_epoch().unwrap(), 1);
}

#[test]
fn a_rank_outside_dp_size_is_out_of_range() {
    let lengths = synthetic_lengths(64, 3);
    let error = build_error(Sampler::builder().dp_size(4).rank(4), &lengths);
    assert_message(&error, ErrorCode::OutOfRange, "rank 4");
}

#[test]
fn option_values_outside_their_bounds_are_out_of_range() {
    let lengths = synthetic_lengths(64, 4);
    for builder in [
        Sampler::builder().dp_size(0),
        Sampler::builder().per_device_batch_size(0),
        Sampler::builder().alpha(f64::NAN),
        Sampler::builder().alpha(-1.0),
        Sampler::builder().intercept(2e12),
    ] {
        let error = build_error(builder.clone(), &lengths);
        assert_eq!(error.code(), ErrorCode::OutOfRange, "{builder:?}: {error}");
        assert!(
            error.message().len() > error.code().description().len(),
            "{error:?} has no detail"
        );
    }
}

#[test]
fn values_beyond_int64_are_refused_before_reaching_the_library() {
    let lengths = synthetic_lengths(64, 5);
    let error = build_error(Sampler::builder().seed(u64::MAX), &lengths);
    assert_message(&error, ErrorCode::OutOfRange, "seed");
    let error = build_error(Sampler::builder().max_tokens(Some(0)), &lengths);
    assert_message(&error, ErrorCode::OutOfRange, "None");
}

#[test]
fn a_sample_longer_than_the_cap_is_refused() {
    let mut lengths = vec![10; 32];
    lengths[9] = 5000;
    let error = build_error(Sampler::builder().max_tokens(Some(4096)), &lengths);
    assert_message(&error, ErrorCode::SampleTooLong, "4096");
}

#[test]
fn an_infeasible_cap_names_the_micro_batches_it_would_need() {
    // 8 samples of 10 tokens in one micro-batch are 80 padded tokens; a cap of
    // 40 needs 2 micro-batches.
    let sampler = Sampler::builder()
        .max_tokens(Some(40))
        .build(&[10; 8])
        .unwrap();
    let error = sampler.plan(0).unwrap_err();
    assert_message(&error, ErrorCode::CapInfeasible, "2");
    // The iterator yields the same error for the step instead of a micro-batch.
    let item = sampler.micro_batches().unwrap().next().unwrap();
    assert_eq!(item.unwrap_err(), error);
}

#[test]
fn the_epoch_check_refuses_the_cap_before_planning_and_names_one_that_works() {
    // The same data: 2 micro-batches needed, 1 given; 80 tokens plan it.
    let sampler = Sampler::builder()
        .max_tokens(Some(40))
        .build(&[10; 8])
        .unwrap();
    let error = sampler.check_epoch(0).unwrap_err();
    assert_message(&error, ErrorCode::CapInfeasible, "80");
    let sampler = Sampler::builder()
        .max_tokens(Some(80))
        .build(&[10; 8])
        .unwrap();
    let found = sampler.check_epoch(0).unwrap();
    assert_eq!((found.min_max_tokens, found.micro_batches), (80, 1));
    assert!(sampler.plan(0).is_ok());
}

#[test]
fn a_step_past_the_epoch_is_out_of_range() {
    let sampler = Sampler::builder()
        .per_device_batch_size(4)
        .build(&synthetic_lengths(40, 6))
        .unwrap();
    assert_eq!(sampler.steps_per_epoch().unwrap(), 10);
    let error = sampler.plan(10).unwrap_err();
    assert_message(&error, ErrorCode::OutOfRange, "10");
}

#[test]
fn a_slot_outside_the_plan_is_out_of_range() {
    let sampler = Sampler::builder()
        .per_device_batch_size(2)
        .dp_size(2)
        .build(&[5; 16])
        .unwrap();
    let plan = sampler.plan(0).unwrap();
    for (rank, micro) in [(2, 0), (0, 1), (u64::MAX, 0)] {
        assert_eq!(
            plan.micro_batch(rank, micro).unwrap_err().code(),
            ErrorCode::OutOfRange
        );
        assert_eq!(
            plan.micro_batch_stats(rank, micro).unwrap_err().code(),
            ErrorCode::OutOfRange
        );
    }
}

#[test]
fn codes_map_to_and_from_the_c_status_values() {
    let codes = [
        (ErrorCode::NullPointer, brs_sys::BRS_ERR_NULL_POINTER),
        (
            ErrorCode::InvalidArgument,
            brs_sys::BRS_ERR_INVALID_ARGUMENT,
        ),
        (ErrorCode::Unsupported, brs_sys::BRS_ERR_UNSUPPORTED),
        (ErrorCode::OutOfRange, brs_sys::BRS_ERR_OUT_OF_RANGE),
        (ErrorCode::NoMemory, brs_sys::BRS_ERR_NO_MEMORY),
        (ErrorCode::State, brs_sys::BRS_ERR_STATE),
        (ErrorCode::InvalidLength, brs_sys::BRS_ERR_INVALID_LENGTH),
        (ErrorCode::TooFewSamples, brs_sys::BRS_ERR_TOO_FEW_SAMPLES),
        (ErrorCode::SampleTooLong, brs_sys::BRS_ERR_SAMPLE_TOO_LONG),
        (ErrorCode::CapInfeasible, brs_sys::BRS_ERR_CAP_INFEASIBLE),
        (ErrorCode::TooLarge, brs_sys::BRS_ERR_TOO_LARGE),
        (ErrorCode::Unknown(-99), -99),
    ];
    for (code, status) in codes {
        assert_eq!(ErrorCode::from_status(status), code);
        assert_eq!(code.status(), status);
    }
    assert_eq!(ErrorCode::Unknown(-99).description(), "unknown status");
    assert_ne!(ErrorCode::CapInfeasible.description(), "unknown status");
}

#[test]
fn errors_are_std_errors() {
    let error = build_error(Sampler::builder(), &[]);
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error.clone());
    assert_eq!(boxed.to_string(), error.message());
}

/// Appends the case to $BRS_ERROR_LOG (JSON lines) for docs/errors.md, when it is set.
fn record(call: &str, bad_input: &str, error: &Error) {
    let Ok(path) = std::env::var("BRS_ERROR_LOG") else {
        return;
    };
    let quote = |text: &str| {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out + "\""
    };
    let line = format!(
        "{{\"layer\": \"Rust\", \"call\": {}, \"input\": {}, \"outcome\": {}, \"message\": {}}}\n",
        quote(call),
        quote(bad_input),
        quote(&format!("Err(ErrorCode::{:?})", error.code())),
        quote(error.message())
    );
    use std::io::Write;
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("BRS_ERROR_LOG must be writable");
    log.write_all(line.as_bytes())
        .expect("BRS_ERROR_LOG must be writable");
}

#[test]
fn extreme_values_are_refused_with_the_option_named() {
    let lengths = synthetic_lengths(64, 6);
    let cases = [
        (
            "dp_size(u64::MAX)",
            Sampler::builder().dp_size(u64::MAX),
            "dp_size",
        ),
        (
            "dp_size(2^32)",
            Sampler::builder().dp_size(1 << 32),
            "dp_size",
        ),
        (
            "per_device_batch_size(u64::MAX)",
            Sampler::builder().per_device_batch_size(u64::MAX),
            "batch_size",
        ),
        (
            "grad_accum(0)",
            Sampler::builder().grad_accum(0),
            "grad_accum",
        ),
        (
            "max_tokens(Some(u64::MAX))",
            Sampler::builder().max_tokens(Some(u64::MAX)),
            "max_tokens",
        ),
        (
            "alpha(f64::INFINITY)",
            Sampler::builder().alpha(f64::INFINITY),
            "alpha",
        ),
        (
            "intercept(f64::NEG_INFINITY)",
            Sampler::builder().intercept(f64::NEG_INFINITY),
            "intercept",
        ),
        (
            "alpha(f64::NAN)",
            Sampler::builder().alpha(f64::NAN),
            "alpha",
        ),
    ];
    for (what, builder, name) in cases {
        let error = build_error(builder, &lengths);
        assert_eq!(error.code(), ErrorCode::OutOfRange, "{what}: {error}");
        assert!(
            error.message().contains(name),
            "{what}: {error:?} should name {name}"
        );
        record("SamplerBuilder::build", what, &error);
    }
}

#[test]
fn a_length_of_zero_or_an_empty_slice_is_recorded_with_its_message() {
    let error = build_error(Sampler::builder(), &[]);
    record("SamplerBuilder::build", "lengths = &[]", &error);
    let error = build_error(Sampler::builder().per_device_batch_size(1), &[5, 0, 7]);
    assert_message(&error, ErrorCode::InvalidLength, "1");
    record("SamplerBuilder::build", "lengths = &[5, 0, 7]", &error);
}

#[test]
fn an_epoch_or_step_at_u64_max_is_refused_or_planned_never_a_crash() {
    let sampler = Sampler::builder()
        .per_device_batch_size(2)
        .build(&synthetic_lengths(64, 7))
        .unwrap();
    let error = sampler.plan_at(0, u64::MAX).expect_err("no step u64::MAX");
    assert_eq!(error.code(), ErrorCode::OutOfRange, "{error}");
    record("Sampler::plan_at(epoch, step)", "step = u64::MAX", &error);
    // Any epoch is a valid shuffle key.
    assert!(sampler.plan_at(u64::MAX, 0).is_ok());
}

#[test]
fn no_message_outlives_its_call() {
    let lengths = synthetic_lengths(64, 8);
    let sampler = Sampler::builder()
        .per_device_batch_size(2)
        .build(&lengths)
        .unwrap();
    let first = build_error(Sampler::builder().dp_size(4).rank(9), &lengths);
    assert!(first.message().contains("rank"), "{first:?}");
    let second = sampler.plan(1_000_000).expect_err("past the epoch");
    assert!(
        !second.message().contains("rank"),
        "{second:?} is the earlier call's message"
    );
    let plan = sampler.plan(0).unwrap();
    let third = plan.micro_batch(7, 0).expect_err("no rank 7");
    assert!(
        !third.message().contains("1000000"),
        "{third:?} is the earlier call's message"
    );
    record(
        "Plan::micro_batch(rank, micro)",
        "rank = 7 of dp_size 1",
        &third,
    );
}

#[test]
fn a_batch_plans_as_its_one_step_epoch_and_names_the_cap_that_would_do() {
    let lengths = [100u32, 90, 80, 10, 9, 8, 7, 6];
    // the configuration's own lengths play no part
    let config = Sampler::builder()
        .dp_size(2)
        .drop_last(false)
        .max_tokens(Some(100));
    let config = config.build(&[1]).unwrap();
    let error = config.plan_batch(&lengths).unwrap_err();
    assert_message(&error, ErrorCode::CapInfeasible, "300");
    let config = Sampler::builder()
        .dp_size(2)
        .drop_last(false)
        .build(&[1])
        .unwrap();
    let plan = config.plan_batch(&lengths).unwrap();
    let mut positions: Vec<u64> = plan
        .micro_batches()
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    positions.sort();
    assert_eq!(positions, (0..8).collect::<Vec<u64>>());
    let epoch = Sampler::builder()
        .dp_size(2)
        .per_device_batch_size(4)
        .shuffle(false)
        .drop_last(false)
        .build(&lengths)
        .unwrap();
    assert_eq!(plan.micro_batches(), epoch.plan(0).unwrap().micro_batches());
    let error = config.plan_batch(&lengths[..1]).unwrap_err();
    assert_message(&error, ErrorCode::TooFewSamples, "at least 2");
}
