//! Calls every declaration against the linked library: NULL handles first
//! (each must be refused with BRS_ERR_NULL_POINTER, never crash), then one
//! real session through the raw API. A wrong parameter order or width in
//! brs-sys shows up here as a wrong status or a wrong value.

use brs_sys::*;
use std::ffi::CStr;
use std::ptr::{null, null_mut};

fn text(message: *const std::ffi::c_char) -> String {
    assert!(!message.is_null());
    unsafe { CStr::from_ptr(message) }
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_loaded_library_has_the_major_version_of_the_header() {
    let number = unsafe { brs_version_number() };
    assert_eq!(number / 10000, BRS_VERSION_MAJOR);
    let expected = format!("{}.{}.{}", number / 10000, number / 100 % 100, number % 100);
    assert_eq!(text(unsafe { brs_version_string() }), expected);
}

#[test]
fn strerror_names_every_status_and_unknown_ones() {
    let known = [
        BRS_ERR_NULL_POINTER,
        BRS_ERR_INVALID_ARGUMENT,
        BRS_ERR_CAP_INFEASIBLE,
    ];
    for status in known {
        let message = text(unsafe { brs_strerror(status) });
        assert!(
            !message.is_empty() && message != "unknown status",
            "{status}: {message}"
        );
    }
    assert_eq!(text(unsafe { brs_strerror(-1000) }), "unknown status");
}

#[test]
fn null_pointers_are_refused() {
    let mut i = 0i64;
    let mut d = 0f64;
    let mut u = 0u64;
    let mut v = 0u64;
    let mut n = 0usize;
    let mut indices: *const u64 = null();
    let lengths = [1u32];
    unsafe {
        assert_eq!(
            brs_option_bounds_int(null_mut(), &mut i, BRS_OPT_RANK),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_option_bounds_double(&mut d, null_mut(), BRS_OPT_ALPHA),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(brs_sampler_new(null_mut()), BRS_ERR_NULL_POINTER);
        brs_sampler_free(null_mut());
        let lengths = lengths.as_ptr();
        assert_eq!(
            brs_sampler_set_lengths(null_mut(), lengths, 1, 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_set_int(null_mut(), BRS_OPT_RANK, 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_set_double(null_mut(), BRS_OPT_ALPHA, 0.0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_get_int(&mut i, null(), BRS_OPT_RANK),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_get_double(&mut d, null(), BRS_OPT_ALPHA),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(brs_sampler_validate(null_mut()), BRS_ERR_NULL_POINTER);
        assert_eq!(
            brs_sampler_steps_per_epoch(&mut u, null_mut()),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_fingerprint(&mut u, null()),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_check_epoch(&mut u, &mut v, null(), 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_stream_fingerprint(&mut u, null()),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_set_length_buckets(null_mut(), lengths, 1),
            BRS_ERR_NULL_POINTER
        );
        let mut buckets: *const u32 = null();
        assert_eq!(
            brs_sampler_get_length_buckets(&mut buckets, &mut n, null()),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_bucket_ladder(null_mut(), &mut n, null(), 0, 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_shapes(null_mut(), &mut n, null(), 0, 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_shape_vocabulary(null_mut(), &mut n, null(), 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_option_value_find(null_mut(), BRS_OPT_SYNC, c"step".as_ptr()),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_option_value_find(&mut i, BRS_OPT_SYNC, null()),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_option_keyword(null_mut(), BRS_OPT_BATCH_SIZE),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_option_scope(null_mut(), BRS_OPT_RANK),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_set_encoder_loads(null_mut(), null(), null(), 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_sampler_encoder_load(&mut u, &mut v, null(), 0),
            BRS_ERR_NULL_POINTER
        );
        assert!(!text(brs_sampler_last_error(null())).is_empty());
        assert_eq!(brs_plan_new(null_mut()), BRS_ERR_NULL_POINTER);
        brs_plan_free(null_mut());
        assert_eq!(
            brs_plan_compute(null_mut(), null(), 0, 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_plan_compute_batch(null_mut(), null(), null(), 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_plan_compute_batch_images(null_mut(), null(), null(), null(), null(), 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_plan_get_int(&mut i, null(), BRS_PLAN_STEP),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_plan_get_double(&mut d, null(), BRS_PLAN_MAX_COST),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_plan_micro_batch(&mut indices, &mut n, null(), 0, 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_plan_micro_batch_stats(&mut u, &mut u, &mut d, null(), 0, 0),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_plan_micro_batch_encoder(&mut u, &mut v, &mut d, null(), 0, 0),
            BRS_ERR_NULL_POINTER
        );
        assert!(!text(brs_plan_last_error(null())).is_empty());
    }
}

#[test]
fn option_bounds_are_typed() {
    let (mut lo, mut hi) = (0i64, 0i64);
    let (mut dlo, mut dhi) = (0f64, 0f64);
    unsafe {
        assert_eq!(
            brs_option_bounds_int(&mut lo, &mut hi, BRS_OPT_DP_SIZE),
            BRS_OK
        );
        assert!(lo >= 1 && hi >= lo, "dp_size bounds [{lo}, {hi}]");
        assert_eq!(
            brs_option_bounds_int(&mut lo, &mut hi, BRS_OPT_ALPHA),
            BRS_ERR_UNSUPPORTED
        );
        assert_eq!(
            brs_option_bounds_double(&mut dlo, &mut dhi, BRS_OPT_ALPHA),
            BRS_OK
        );
        assert_eq!((dlo, dhi), (0.0, 1000.0));
        assert_eq!(
            brs_option_bounds_double(&mut dlo, &mut dhi, BRS_OPT_RANK),
            BRS_ERR_UNSUPPORTED
        );
        assert_eq!(
            brs_option_bounds_int(&mut lo, &mut hi, 9999),
            BRS_ERR_UNSUPPORTED
        );
    }
}

/// 16 samples, 2 ranks x 2 micro-steps of 4 on average: one step covers all.
#[test]
fn a_raw_session_plans_every_sample_once() {
    let lengths: Vec<u32> = (1..=16).map(|i| i * 10).collect();
    unsafe {
        let mut sampler = null_mut();
        assert_eq!(brs_sampler_new(&mut sampler), BRS_OK);
        let status =
            brs_sampler_set_lengths(sampler, lengths.as_ptr(), lengths.len(), BRS_LENGTHS_COPY);
        assert_eq!(status, BRS_OK);
        for (key, value) in [
            (BRS_OPT_BATCH_SIZE, 4),
            (BRS_OPT_GRAD_ACCUM, 2),
            (BRS_OPT_DP_SIZE, 2),
        ] {
            assert_eq!(brs_sampler_set_int(sampler, key, value), BRS_OK);
        }
        assert_eq!(brs_sampler_set_double(sampler, BRS_OPT_ALPHA, 0.5), BRS_OK);
        let mut alpha = 0.0;
        assert_eq!(
            brs_sampler_get_double(&mut alpha, sampler, BRS_OPT_ALPHA),
            BRS_OK
        );
        assert_eq!(alpha, 0.5);
        let mut steps = 0u64;
        assert_eq!(brs_sampler_steps_per_epoch(&mut steps, sampler), BRS_OK);
        assert_eq!(steps, 1);

        // A cap of the longest sample: one sample per micro-batch at the
        // long end, so the step needs more than 4; the least cap plans it.
        assert_eq!(
            brs_sampler_set_int(sampler, BRS_OPT_MAX_TOKENS, 160),
            BRS_OK
        );
        let (mut cap, mut needed) = (0u64, 0u64);
        assert_eq!(
            brs_sampler_check_epoch(&mut cap, &mut needed, sampler, 3),
            BRS_ERR_CAP_INFEASIBLE
        );
        assert!(cap > 160 && needed > 4);
        assert_eq!(
            brs_sampler_set_int(sampler, BRS_OPT_MAX_TOKENS, cap as i64),
            BRS_OK
        );
        assert_eq!(
            brs_sampler_check_epoch(&mut cap, &mut needed, sampler, 3),
            BRS_OK
        );
        assert!(needed <= 4);
        assert_eq!(brs_sampler_set_int(sampler, BRS_OPT_MAX_TOKENS, 0), BRS_OK);

        let mut plan = null_mut();
        assert_eq!(brs_plan_new(&mut plan), BRS_OK);
        assert_eq!(brs_plan_compute(plan, sampler, 3, 0), BRS_OK);
        brs_sampler_free(sampler); // the plan keeps no reference to it
        let mut epoch = 0i64;
        assert_eq!(brs_plan_get_int(&mut epoch, plan, BRS_PLAN_EPOCH), BRS_OK);
        assert_eq!(epoch, 3);

        let mut seen = Vec::new();
        for rank in 0..2 {
            for micro in 0..2 {
                let (mut indices, mut count) = (null(), 0usize);
                assert_eq!(
                    brs_plan_micro_batch(&mut indices, &mut count, plan, rank, micro),
                    BRS_OK
                );
                let batch = std::slice::from_raw_parts(indices, count);
                let (mut padded, mut real, mut cost) = (0u64, 0u64, 0f64);
                let status = brs_plan_micro_batch_stats(
                    &mut padded,
                    &mut real,
                    &mut cost,
                    plan,
                    rank,
                    micro,
                );
                assert_eq!(status, BRS_OK);
                let longest = batch
                    .iter()
                    .map(|&i| lengths[i as usize] as u64)
                    .max()
                    .unwrap();
                let total: u64 = batch.iter().map(|&i| lengths[i as usize] as u64).sum();
                assert_eq!((padded, real), (longest * count as u64, total));
                seen.extend_from_slice(batch);
            }
        }
        let (mut indices, mut count) = (null(), 0usize);
        assert_eq!(
            brs_plan_micro_batch(&mut indices, &mut count, plan, 2, 0),
            BRS_ERR_OUT_OF_RANGE
        );
        brs_plan_free(plan);
        seen.sort_unstable();
        assert_eq!(seen, (0..16).collect::<Vec<u64>>());
    }
}

/// The default ladder (its length, then the buckets), set and read back;
/// the epoch's shapes (their count, then the pairs) padded to its buckets.
#[test]
fn a_raw_session_sets_buckets_and_reads_the_shapes() {
    let lengths: Vec<u32> = (1..=32).map(|i| i * 7).collect();
    unsafe {
        let mut sampler = null_mut();
        assert_eq!(brs_sampler_new(&mut sampler), BRS_OK);
        let status =
            brs_sampler_set_lengths(sampler, lengths.as_ptr(), lengths.len(), BRS_LENGTHS_COPY);
        assert_eq!(status, BRS_OK);
        for (key, value) in [
            (BRS_OPT_BATCH_SIZE, 4),
            (BRS_OPT_GRAD_ACCUM, 2),
            (BRS_OPT_DP_SIZE, 2),
            (BRS_OPT_PAD_TO_MULTIPLE_OF, 8),
        ] {
            assert_eq!(brs_sampler_set_int(sampler, key, value), BRS_OK);
        }
        let mut count = 0usize;
        assert_eq!(
            brs_sampler_bucket_ladder(null_mut(), &mut count, sampler, 0, 0),
            BRS_OK
        );
        let mut ladder = vec![0u32; count];
        assert_eq!(
            brs_sampler_bucket_ladder(ladder.as_mut_ptr(), &mut count, sampler, 0, count),
            BRS_OK
        );
        assert!(ladder.windows(2).all(|w| w[0] < w[1]));
        assert!(ladder.iter().all(|b| b % 8 == 0));
        assert!(*ladder.last().unwrap() >= 224);
        assert_eq!(
            brs_sampler_set_length_buckets(sampler, ladder.as_ptr(), ladder.len()),
            BRS_OK
        );
        let (mut buckets, mut n) = (null(), 0usize);
        assert_eq!(
            brs_sampler_get_length_buckets(&mut buckets, &mut n, sampler),
            BRS_OK
        );
        assert_eq!(std::slice::from_raw_parts(buckets, n), &ladder[..]);

        let mut pairs = 0usize;
        assert_eq!(
            brs_sampler_shapes(null_mut(), &mut pairs, sampler, 0, 0),
            BRS_OK
        );
        assert!(pairs >= 1 && pairs <= 4 * 2, "{pairs} shapes");
        let mut shapes = vec![0u64; 2 * pairs];
        assert_eq!(
            brs_sampler_shapes(shapes.as_mut_ptr(), &mut pairs, sampler, 0, pairs),
            BRS_OK
        );
        for pair in shapes.chunks(2) {
            assert!(pair[0] >= 1);
            assert!(ladder.contains(&(pair[1] as u32)), "{pair:?}");
        }
        if pairs > 1 {
            assert_eq!(
                brs_sampler_shapes(shapes.as_mut_ptr(), &mut pairs, sampler, 0, 1),
                BRS_ERR_OUT_OF_RANGE
            );
        }
        assert_eq!(brs_sampler_set_length_buckets(sampler, null(), 0), BRS_OK);
        assert_eq!(
            brs_sampler_get_length_buckets(&mut buckets, &mut n, sampler),
            BRS_OK
        );
        assert!(n == 0 && buckets.is_null());
        brs_sampler_free(sampler);
    }
}

/// Encoder loads through the raw API: flat patches with offsets, one load
/// read back, and every micro-batch's patches and images summing to the
/// plan's totals (the order of the out-parameters is what this checks).
#[test]
fn a_raw_session_sets_encoder_loads() {
    let lengths = [40u32, 30, 20, 10, 40, 30, 20, 10];
    // Samples 0 and 5 have images: [16, 4] and [9]; the others none.
    let patches = [16u32, 4, 9];
    let offsets = [0u64, 2, 2, 2, 2, 2, 3, 3, 3];
    unsafe {
        let mut sampler = null_mut();
        assert_eq!(brs_sampler_new(&mut sampler), BRS_OK);
        let status =
            brs_sampler_set_lengths(sampler, lengths.as_ptr(), lengths.len(), BRS_LENGTHS_COPY);
        assert_eq!(status, BRS_OK);
        assert_eq!(brs_sampler_set_int(sampler, BRS_OPT_BATCH_SIZE, 2), BRS_OK);
        assert_eq!(brs_sampler_set_int(sampler, BRS_OPT_DP_SIZE, 2), BRS_OK);
        assert_eq!(brs_sampler_set_int(sampler, BRS_OPT_GRAD_ACCUM, 2), BRS_OK);
        assert_eq!(
            brs_sampler_set_double(sampler, BRS_OPT_ENCODER_INTERCEPT, 5.0),
            BRS_OK
        );
        let status = brs_sampler_set_encoder_loads(sampler, patches.as_ptr(), offsets.as_ptr(), 8);
        assert_eq!(status, BRS_OK);
        assert_eq!(brs_sampler_validate(sampler), BRS_OK);
        let (mut images, mut sum) = (0u64, 0u64);
        assert_eq!(
            brs_sampler_encoder_load(&mut images, &mut sum, sampler, 0),
            BRS_OK
        );
        assert_eq!((images, sum), (2, 20));
        assert_eq!(
            brs_sampler_encoder_load(&mut images, &mut sum, sampler, 1),
            BRS_OK
        );
        assert_eq!((images, sum), (0, 0));
        assert_eq!(
            brs_sampler_encoder_load(&mut images, &mut sum, sampler, 8),
            BRS_ERR_OUT_OF_RANGE
        );

        let mut plan = null_mut();
        assert_eq!(brs_plan_new(&mut plan), BRS_OK);
        assert_eq!(brs_plan_compute(plan, sampler, 0, 0), BRS_OK);
        let (mut tokens, mut count, mut cost) = (0u64, 0u64, 0f64);
        let (mut all_tokens, mut all_images, mut all_cost) = (0u64, 0u64, 0f64);
        for rank in 0..2 {
            for micro in 0..2 {
                let status = brs_plan_micro_batch_encoder(
                    &mut tokens,
                    &mut count,
                    &mut cost,
                    plan,
                    rank,
                    micro,
                );
                assert_eq!(status, BRS_OK);
                all_tokens += tokens;
                all_images += count;
                all_cost += cost;
            }
        }
        assert_eq!((all_tokens, all_images), (29, 3));
        let mut total = 0i64;
        assert_eq!(
            brs_plan_get_int(&mut total, plan, BRS_PLAN_TOTAL_ENCODER_TOKENS),
            BRS_OK
        );
        assert_eq!(total, 29);
        let mut encoder_cost = 0f64;
        assert_eq!(
            brs_plan_get_double(&mut encoder_cost, plan, BRS_PLAN_ENCODER_COST),
            BRS_OK
        );
        assert!((encoder_cost - all_cost).abs() < 1e-6 * encoder_cost.max(1.0));
        assert!(encoder_cost >= 29.0 + 3.0 * 5.0, "{encoder_cost}");

        // The same images given with a batch plan the same totals.
        let status = brs_plan_compute_batch_images(
            plan,
            sampler,
            lengths.as_ptr(),
            patches.as_ptr(),
            offsets.as_ptr(),
            lengths.len(),
        );
        assert_eq!(status, BRS_OK);
        assert_eq!(
            brs_plan_get_int(&mut total, plan, BRS_PLAN_TOTAL_ENCODER_TOKENS),
            BRS_OK
        );
        assert_eq!(total, 29);

        // n = 0 with NULLs clears the loads.
        assert_eq!(
            brs_sampler_set_encoder_loads(sampler, null(), null(), 0),
            BRS_OK
        );
        assert_eq!(
            brs_sampler_encoder_load(&mut images, &mut sum, sampler, 0),
            BRS_OK
        );
        assert_eq!((images, sum), (0, 0));
        brs_plan_free(plan);
        brs_sampler_free(sampler);
    }
}

#[test]
fn the_file_readers_refuse_null_handles() {
    let mut present = 0i32;
    let mut d = 0f64;
    let mut i = 0i64;
    let mut n = 0usize;
    let mut values: *const u32 = null();
    let mut offsets: *const u64 = null();
    let mut json: *const std::ffi::c_char = null();
    let name = c"x".as_ptr();
    unsafe {
        assert_eq!(brs_lengths_file_new(null_mut()), BRS_ERR_NULL_POINTER);
        brs_lengths_file_free(null_mut());
        assert_eq!(
            brs_lengths_file_parse(null_mut(), name, 1, name),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_lengths_file_begin(null_mut(), name),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_lengths_file_feed(null_mut(), name, 1),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(brs_lengths_file_finish(null_mut()), BRS_ERR_NULL_POINTER);
        assert_eq!(
            brs_lengths_file_lengths(&mut values, &mut n, null()),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_lengths_file_images(&mut values, &mut offsets, null()),
            BRS_ERR_NULL_POINTER
        );
        assert!(!text(brs_lengths_file_last_error(null())).is_empty());
        assert_eq!(brs_cost_model_file_new(null_mut()), BRS_ERR_NULL_POINTER);
        brs_cost_model_file_free(null_mut());
        assert_eq!(
            brs_cost_model_file_parse(null_mut(), name, 1, name),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_cost_model_file_has(&mut present, null(), name),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_cost_model_file_get_double(&mut d, null(), name),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_cost_model_file_get_int(&mut i, null(), name),
            BRS_ERR_NULL_POINTER
        );
        assert_eq!(
            brs_cost_model_file_get_json(&mut json, &mut n, null(), name),
            BRS_ERR_NULL_POINTER
        );
        assert!(!text(brs_cost_model_file_last_error(null())).is_empty());
    }
}

#[test]
fn a_raw_session_reads_both_file_formats() {
    let name = c"data.lengths".as_ptr();
    let text_in = b"5\n17 3,4\n";
    let mut file: *mut brs_lengths_file = null_mut();
    let (mut lengths, mut count): (*const u32, usize) = (null(), 0);
    let (mut patches, mut offsets): (*const u32, *const u64) = (null(), null());
    unsafe {
        assert_eq!(brs_lengths_file_new(&mut file), BRS_OK);
        assert_eq!(brs_lengths_file_begin(file, name), BRS_OK);
        for chunk in text_in.chunks(3) {
            assert_eq!(
                brs_lengths_file_feed(file, chunk.as_ptr().cast(), chunk.len()),
                BRS_OK
            );
        }
        assert_eq!(brs_lengths_file_finish(file), BRS_OK);
        assert_eq!(
            brs_lengths_file_lengths(&mut lengths, &mut count, file),
            BRS_OK
        );
        assert_eq!(std::slice::from_raw_parts(lengths, count), [5, 17]);
        assert_eq!(
            brs_lengths_file_images(&mut patches, &mut offsets, file),
            BRS_OK
        );
        assert_eq!(std::slice::from_raw_parts(offsets, 3), [0, 0, 2]);
        assert_eq!(std::slice::from_raw_parts(patches, 2), [3, 4]);
        let bad = b"5\n0\n";
        assert_eq!(
            brs_lengths_file_parse(file, bad.as_ptr().cast(), bad.len(), name),
            BRS_ERR_INVALID_ARGUMENT
        );
        assert!(text(brs_lengths_file_last_error(file)).starts_with("data.lengths line 2: '0'"));
        brs_lengths_file_free(file);
    }

    let json_in = br#"{"format": "brs-cost-model", "version": 1, "alpha": 0.5, "intercept": 2, "model": "m"}"#;
    let mut reader: *mut brs_cost_model_file = null_mut();
    let (mut alpha, mut present, mut version) = (0f64, -1i32, 0i64);
    let (mut json, mut length): (*const std::ffi::c_char, usize) = (null(), 0);
    unsafe {
        assert_eq!(brs_cost_model_file_new(&mut reader), BRS_OK);
        assert_eq!(
            brs_cost_model_file_parse(reader, json_in.as_ptr().cast(), json_in.len(), name),
            BRS_OK
        );
        assert_eq!(
            brs_cost_model_file_get_double(&mut alpha, reader, c"alpha".as_ptr()),
            BRS_OK
        );
        assert_eq!(alpha, 0.5);
        assert_eq!(
            brs_cost_model_file_get_int(&mut version, reader, c"version".as_ptr()),
            BRS_OK
        );
        assert_eq!(version, 1);
        assert_eq!(
            brs_cost_model_file_has(&mut present, reader, c"max_tokens".as_ptr()),
            BRS_OK
        );
        assert_eq!(present, 0);
        assert_eq!(
            brs_cost_model_file_get_json(&mut json, &mut length, reader, c"model".as_ptr()),
            BRS_OK
        );
        assert_eq!(
            std::slice::from_raw_parts(json.cast::<u8>(), length),
            b"\"m\""
        );
        assert_eq!(
            brs_cost_model_file_get_double(&mut alpha, reader, c"nope".as_ptr()),
            BRS_ERR_UNSUPPORTED
        );
        brs_cost_model_file_free(reader);
    }
}

/// LIBBRS_1.6 through the raw API: value names found back, keywords and
/// scopes (the order and widths of the out-parameters are what this checks),
/// then a shape vocabulary read with and without room.
#[test]
fn a_raw_session_reads_names_scopes_and_the_shape_vocabulary() {
    unsafe {
        let mut value = -1i64;
        assert_eq!(
            brs_option_value_find(&mut value, BRS_OPT_STRATEGY, c"length_grouped".as_ptr()),
            BRS_OK
        );
        assert_eq!(value, BRS_STRATEGY_LENGTH_GROUPED);
        assert_eq!(
            brs_option_value_find(&mut value, BRS_OPT_SYNC, c"micro-step".as_ptr()),
            BRS_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            brs_option_value_find(&mut value, BRS_OPT_SEED, c"0".as_ptr()),
            BRS_ERR_UNSUPPORTED
        );
        let mut keyword = null();
        assert_eq!(brs_option_keyword(&mut keyword, BRS_OPT_BATCH_SIZE), BRS_OK);
        assert_eq!(text(keyword), "per_device_batch_size");
        assert_eq!(brs_option_keyword(&mut keyword, BRS_OPT_MAX_SHAPES), BRS_OK);
        assert_eq!(text(keyword), "max_shapes");
        let mut scope = -1i32;
        for (key, want) in [
            (BRS_OPT_RANK, BRS_OPTION_SCOPE_RANK),
            (BRS_OPT_DP_SIZE, BRS_OPTION_SCOPE_SPLIT),
            (BRS_OPT_SEED, BRS_OPTION_SCOPE_RUN),
        ] {
            assert_eq!(brs_option_scope(&mut scope, key), BRS_OK);
            assert_eq!(scope, want, "key {key}");
        }
        assert_eq!(brs_option_scope(&mut scope, 9999), BRS_ERR_UNSUPPORTED);

        let lengths: Vec<u32> = (1..=96).map(|i| 16 + (i * 37) % 500).collect();
        let mut sampler = null_mut();
        assert_eq!(brs_sampler_new(&mut sampler), BRS_OK);
        let status =
            brs_sampler_set_lengths(sampler, lengths.as_ptr(), lengths.len(), BRS_LENGTHS_COPY);
        assert_eq!(status, BRS_OK);
        for (key, value) in [
            (BRS_OPT_BATCH_SIZE, 4),
            (BRS_OPT_GRAD_ACCUM, 2),
            (BRS_OPT_DP_SIZE, 2),
            (BRS_OPT_MAX_SHAPES, 6),
        ] {
            assert_eq!(brs_sampler_set_int(sampler, key, value), BRS_OK);
        }
        let mut pairs = 0usize;
        assert_eq!(
            brs_sampler_shape_vocabulary(null_mut(), &mut pairs, sampler, 0),
            BRS_OK
        );
        assert!((1..=6).contains(&pairs), "{pairs} shapes");
        let mut shapes = vec![0u64; 2 * pairs];
        assert_eq!(
            brs_sampler_shape_vocabulary(shapes.as_mut_ptr(), &mut pairs, sampler, pairs),
            BRS_OK
        );
        assert_eq!(shapes.len(), 2 * pairs);
        assert!(shapes.chunks(2).all(|pair| pair[0] >= 1 && pair[1] >= 17));
        if pairs > 1 {
            assert_eq!(
                brs_sampler_shape_vocabulary(shapes.as_mut_ptr(), &mut pairs, sampler, 1),
                BRS_ERR_OUT_OF_RANGE
            );
        }
        brs_sampler_free(sampler);
    }
}
