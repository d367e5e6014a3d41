//! Raw FFI declarations of libbrs, one for one with `include/brs.h`.
//!
//! Every function, constant and type of the header is here under its C
//! name; the documentation of each lives in the header, which is the
//! contract. Nothing is wrapped: use the `brs` crate for a safe interface.
//! The tests of this crate parse the header and fail if a constant value or
//! a function signature here drifts from it.
#![no_std]
#![allow(non_camel_case_types)]

use core::ffi::c_char;

// ---------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------

pub const BRS_VERSION_MAJOR: u32 = 1;
pub const BRS_VERSION_MINOR: u32 = 6;
pub const BRS_VERSION_PATCH: u32 = 0;
/// MAJOR * 10000 + MINOR * 100 + PATCH, the value `brs_version_number()` returns.
pub const BRS_VERSION_NUMBER: u32 = 10600;

// ---------------------------------------------------------------------------
// Status codes
// ---------------------------------------------------------------------------

pub type brs_status = i32;

pub const BRS_OK: brs_status = 0;
pub const BRS_ERR_NULL_POINTER: brs_status = -1;
pub const BRS_ERR_INVALID_ARGUMENT: brs_status = -2;
pub const BRS_ERR_UNSUPPORTED: brs_status = -3;
pub const BRS_ERR_OUT_OF_RANGE: brs_status = -4;
pub const BRS_ERR_NO_MEMORY: brs_status = -5;
pub const BRS_ERR_STATE: brs_status = -6;
pub const BRS_ERR_INVALID_LENGTH: brs_status = -7;
pub const BRS_ERR_TOO_FEW_SAMPLES: brs_status = -8;
pub const BRS_ERR_SAMPLE_TOO_LONG: brs_status = -9;
pub const BRS_ERR_CAP_INFEASIBLE: brs_status = -10;
pub const BRS_ERR_TOO_LARGE: brs_status = -11;

// ---------------------------------------------------------------------------
// Limits of this version
// ---------------------------------------------------------------------------

pub const BRS_MAX_STEP_SAMPLES: u64 = 16777216;
pub const BRS_MAX_MICRO_BATCHES: u64 = 16777216;
/// Largest number of length buckets (`brs_sampler_set_length_buckets`, since 1.4).
pub const BRS_MAX_LENGTH_BUCKETS: u64 = 65536;
/// Most image patches of one sample, summed over its images
/// (`brs_sampler_set_encoder_loads`, since 1.5).
pub const BRS_MAX_SAMPLE_PATCHES: u64 = 4294967295;

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

pub type brs_option = i32;

pub const BRS_OPT_BATCH_SIZE: brs_option = 1;
pub const BRS_OPT_GRAD_ACCUM: brs_option = 2;
pub const BRS_OPT_DP_SIZE: brs_option = 3;
pub const BRS_OPT_RANK: brs_option = 4;
pub const BRS_OPT_SEED: brs_option = 5;
pub const BRS_OPT_SHUFFLE: brs_option = 6;
pub const BRS_OPT_DROP_LAST: brs_option = 7;
pub const BRS_OPT_MAX_TOKENS: brs_option = 8;
pub const BRS_OPT_PACKED: brs_option = 9;
pub const BRS_OPT_ALPHA: brs_option = 10;
pub const BRS_OPT_INTERCEPT: brs_option = 11;
pub const BRS_OPT_STRATEGY: brs_option = 12;
pub const BRS_OPT_SYNC: brs_option = 13;

/// Values of `BRS_OPT_STRATEGY` (names: `brs_option_value_name`).
pub const BRS_STRATEGY_BALANCED: i64 = 0;
pub const BRS_STRATEGY_RANDOM: i64 = 1;
pub const BRS_STRATEGY_LENGTH_GROUPED: i64 = 2;
/// Values of `BRS_OPT_SYNC`.
pub const BRS_SYNC_MICRO_STEP: i64 = 0;
pub const BRS_SYNC_STEP: i64 = 1;
/// int: pad_to_multiple_of, 1 ..= 65536 (since 1.4).
pub const BRS_OPT_PAD_TO_MULTIPLE_OF: brs_option = 14;
/// double: encoder_alpha, the quadratic term of an image's encoder cost (since 1.5).
pub const BRS_OPT_ENCODER_ALPHA: brs_option = 15;
/// double: encoder_intercept, the fixed encoder cost of one image (since 1.5).
pub const BRS_OPT_ENCODER_INTERCEPT: brs_option = 16;
/// int: max_encoder_tokens, cap on a micro-batch's image patches, 0: none (since 1.5).
pub const BRS_OPT_MAX_ENCODER_TOKENS: brs_option = 17;
/// double: encoder_weight, what one image patch costs in padded text tokens (since 1.5).
pub const BRS_OPT_ENCODER_WEIGHT: brs_option = 18;
/// int: max_shapes, the most distinct micro-batch shapes of the run, 0: unbounded (since 1.6).
pub const BRS_OPT_MAX_SHAPES: brs_option = 19;
/// int: cp_size, context-parallel ranks per data-parallel rank, a power of two (since 1.6).
pub const BRS_OPT_CP_SIZE: brs_option = 20;
/// int: max_tokens_per_rank, cap on the tokens one rank holds in a micro-step, 0: none (since 1.6).
pub const BRS_OPT_MAX_TOKENS_PER_RANK: brs_option = 21;
/// double: cp_comm_cost, context-parallel exchange per token received, (c - 1) / c of them (since 1.6).
pub const BRS_OPT_CP_COMM_COST: brs_option = 22;
/// int: cp_degrees, the allowed degrees as a bitmask, 0: every power of two (since 1.6).
pub const BRS_OPT_CP_DEGREES: brs_option = 23;
/// int: max_shapes_search, moves of the search that improves the shape vocabulary, 0: none (since 1.6).
pub const BRS_OPT_MAX_SHAPES_SEARCH: brs_option = 24;
/// double: cp_latency, context-parallel latency per rank a group adds (since 1.6).
pub const BRS_OPT_CP_LATENCY: brs_option = 25;

/// Option types (`brs_option_type`).
pub const BRS_OPTION_INT: i32 = 0;
pub const BRS_OPTION_DOUBLE: i32 = 1;

/// Option scopes (`brs_option_scope`, since 1.6): who shares an option's value.
pub const BRS_OPTION_SCOPE_RANK: i32 = 0;
pub const BRS_OPTION_SCOPE_SPLIT: i32 = 1;
pub const BRS_OPTION_SCOPE_RUN: i32 = 2;

// ---------------------------------------------------------------------------
// Sampler
// ---------------------------------------------------------------------------

/// Opaque sampler handle: only ever used behind a pointer.
#[repr(C)]
pub struct brs_sampler {
    _private: [u8; 0],
}

/// `brs_sampler_set_lengths` mode: copy the array into the sampler.
pub const BRS_LENGTHS_COPY: i32 = 0;
/// `brs_sampler_set_lengths` mode: borrow the array (the caller keeps it alive).
pub const BRS_LENGTHS_BORROW: i32 = 1;

// ---------------------------------------------------------------------------
// Plan
// ---------------------------------------------------------------------------

/// Opaque plan handle: only ever used behind a pointer.
#[repr(C)]
pub struct brs_plan {
    _private: [u8; 0],
}

pub type brs_plan_key = i32;

pub const BRS_PLAN_EPOCH: brs_plan_key = 1;
pub const BRS_PLAN_STEP: brs_plan_key = 2;
pub const BRS_PLAN_NUM_SAMPLES: brs_plan_key = 3;
pub const BRS_PLAN_DP_SIZE: brs_plan_key = 4;
pub const BRS_PLAN_GRAD_ACCUM: brs_plan_key = 5;
pub const BRS_PLAN_TOTAL_PADDED_TOKENS: brs_plan_key = 6;
pub const BRS_PLAN_TOTAL_REAL_TOKENS: brs_plan_key = 7;
pub const BRS_PLAN_MAX_PADDED_TOKENS: brs_plan_key = 8;
pub const BRS_PLAN_MEGABATCH_SIZE: brs_plan_key = 9;
/// Since 1.5: the image patches (encoder tokens) of the step, and of its largest micro-batch.
pub const BRS_PLAN_TOTAL_ENCODER_TOKENS: brs_plan_key = 10;
pub const BRS_PLAN_MAX_ENCODER_TOKENS: brs_plan_key = 11;
/// Since 1.6: the plan's cp_size (1 without context parallelism).
pub const BRS_PLAN_CP_SIZE: brs_plan_key = 12;
/// Since 1.6: the most padded tokens one rank holds in one micro-step.
pub const BRS_PLAN_MAX_RANK_TOKENS: brs_plan_key = 13;
pub const BRS_PLAN_MAX_COST: brs_plan_key = 20;
pub const BRS_PLAN_LOWER_BOUND: brs_plan_key = 21;
pub const BRS_PLAN_TOTAL_COST: brs_plan_key = 22;
pub const BRS_PLAN_MICRO_SYNC_TIME: brs_plan_key = 23;
pub const BRS_PLAN_STEP_SYNC_TIME: brs_plan_key = 24;
pub const BRS_PLAN_TIME_LOWER_BOUND: brs_plan_key = 25;
/// Since 1.5: the encoder's share of BRS_PLAN_TOTAL_COST.
pub const BRS_PLAN_ENCODER_COST: brs_plan_key = 26;
/// Since 1.6: the step time of the sync model; the ranks' time in it is
/// USEFUL + PADDING + WAITING (brs.h).
pub const BRS_PLAN_STEP_TIME: brs_plan_key = 27;
pub const BRS_PLAN_USEFUL_TIME: brs_plan_key = 28;
pub const BRS_PLAN_PADDING_TIME: brs_plan_key = 29;
pub const BRS_PLAN_WAITING_TIME: brs_plan_key = 30;

// ---------------------------------------------------------------------------
// Files: the readers of docs/formats.md (since 1.5)
// ---------------------------------------------------------------------------

/// Opaque lengths-file reader: only ever used behind a pointer.
#[repr(C)]
pub struct brs_lengths_file {
    _private: [u8; 0],
}

/// The largest cost-model file, in bytes.
pub const BRS_COST_MODEL_FILE_MAX_BYTES: usize = 16777216;

/// Opaque cost-model-file reader: only ever used behind a pointer.
#[repr(C)]
pub struct brs_cost_model_file {
    _private: [u8; 0],
}

// ---------------------------------------------------------------------------
// Functions (in header order)
// ---------------------------------------------------------------------------

extern "C" {
    pub fn brs_version_number() -> u32;
    pub fn brs_version_string() -> *const c_char;

    pub fn brs_strerror(status: brs_status) -> *const c_char;

    pub fn brs_option_bounds_int(lower: *mut i64, upper: *mut i64, key: brs_option) -> brs_status;
    pub fn brs_option_bounds_double(
        lower: *mut f64,
        upper: *mut f64,
        key: brs_option,
    ) -> brs_status;

    // LIBBRS_1.1: the option table.
    pub fn brs_option_count(count: *mut usize) -> brs_status;
    pub fn brs_option_key(key: *mut brs_option, index: usize) -> brs_status;
    pub fn brs_option_find(key: *mut brs_option, name: *const c_char) -> brs_status;
    pub fn brs_option_name(name: *mut *const c_char, key: brs_option) -> brs_status;
    pub fn brs_option_type(kind: *mut i32, key: brs_option) -> brs_status;
    pub fn brs_option_default_int(value: *mut i64, key: brs_option) -> brs_status;
    pub fn brs_option_default_double(value: *mut f64, key: brs_option) -> brs_status;
    pub fn brs_option_help(text: *mut *const c_char, key: brs_option) -> brs_status;
    pub fn brs_option_value_name(
        name: *mut *const c_char,
        key: brs_option,
        value: i64,
    ) -> brs_status;
    // LIBBRS_1.6: value names back to values, keywords and scopes.
    pub fn brs_option_value_find(
        value: *mut i64,
        key: brs_option,
        name: *const c_char,
    ) -> brs_status;
    pub fn brs_option_keyword(keyword: *mut *const c_char, key: brs_option) -> brs_status;
    pub fn brs_option_scope(scope: *mut i32, key: brs_option) -> brs_status;

    pub fn brs_sampler_new(out: *mut *mut brs_sampler) -> brs_status;
    pub fn brs_sampler_free(sampler: *mut brs_sampler);
    pub fn brs_sampler_set_lengths(
        sampler: *mut brs_sampler,
        lengths: *const u32,
        n: usize,
        mode: i32,
    ) -> brs_status;
    pub fn brs_sampler_set_int(
        sampler: *mut brs_sampler,
        key: brs_option,
        value: i64,
    ) -> brs_status;
    pub fn brs_sampler_set_double(
        sampler: *mut brs_sampler,
        key: brs_option,
        value: f64,
    ) -> brs_status;
    pub fn brs_sampler_get_int(
        out: *mut i64,
        sampler: *const brs_sampler,
        key: brs_option,
    ) -> brs_status;
    pub fn brs_sampler_get_double(
        out: *mut f64,
        sampler: *const brs_sampler,
        key: brs_option,
    ) -> brs_status;
    pub fn brs_sampler_validate(sampler: *mut brs_sampler) -> brs_status;
    pub fn brs_sampler_steps_per_epoch(out: *mut u64, sampler: *mut brs_sampler) -> brs_status;
    pub fn brs_sampler_fingerprint(out: *mut u64, sampler: *const brs_sampler) -> brs_status;
    // LIBBRS_1.2
    pub fn brs_sampler_check_epoch(
        min_max_tokens: *mut u64,
        micro_batches: *mut u64,
        sampler: *const brs_sampler,
        epoch: u64,
    ) -> brs_status;
    // LIBBRS_1.3
    pub fn brs_sampler_stream_fingerprint(out: *mut u64, sampler: *const brs_sampler)
        -> brs_status;
    // LIBBRS_1.4
    pub fn brs_sampler_set_length_buckets(
        sampler: *mut brs_sampler,
        buckets: *const u32,
        n: usize,
    ) -> brs_status;
    // LIBBRS_1.5
    pub fn brs_sampler_set_encoder_loads(
        sampler: *mut brs_sampler,
        image_patches: *const u32,
        image_offsets: *const u64,
        n: usize,
    ) -> brs_status;
    pub fn brs_sampler_encoder_load(
        images: *mut u64,
        patches: *mut u64,
        sampler: *const brs_sampler,
        index: u64,
    ) -> brs_status;
    pub fn brs_sampler_get_length_buckets(
        buckets: *mut *const u32,
        count: *mut usize,
        sampler: *const brs_sampler,
    ) -> brs_status;
    pub fn brs_sampler_bucket_ladder(
        buckets: *mut u32,
        count: *mut usize,
        sampler: *const brs_sampler,
        steps_per_doubling: u32,
        capacity: usize,
    ) -> brs_status;
    pub fn brs_sampler_shapes(
        shapes: *mut u64,
        count: *mut usize,
        sampler: *const brs_sampler,
        epoch: u64,
        capacity: usize,
    ) -> brs_status;
    pub fn brs_sampler_shape_vocabulary(
        shapes: *mut u64,
        count: *mut usize,
        sampler: *const brs_sampler,
        capacity: usize,
    ) -> brs_status;
    pub fn brs_sampler_last_error(sampler: *const brs_sampler) -> *const c_char;

    pub fn brs_plan_new(out: *mut *mut brs_plan) -> brs_status;
    pub fn brs_plan_free(plan: *mut brs_plan);
    pub fn brs_plan_compute(
        plan: *mut brs_plan,
        sampler: *const brs_sampler,
        epoch: u64,
        step: u64,
    ) -> brs_status;
    // LIBBRS_1.2
    pub fn brs_plan_compute_batch(
        plan: *mut brs_plan,
        config: *const brs_sampler,
        lengths: *const u32,
        n: usize,
    ) -> brs_status;
    // LIBBRS_1.5
    pub fn brs_plan_compute_batch_images(
        plan: *mut brs_plan,
        config: *const brs_sampler,
        lengths: *const u32,
        image_patches: *const u32,
        image_offsets: *const u64,
        n: usize,
    ) -> brs_status;
    // LIBBRS_1.1
    pub fn brs_plan_load(
        plan: *mut brs_plan,
        sampler: *const brs_sampler,
        indices: *const u64,
        counts: *const u64,
        num_micro_batches: usize,
        epoch: u64,
        step: u64,
    ) -> brs_status;
    pub fn brs_plan_get_int(out: *mut i64, plan: *const brs_plan, key: brs_plan_key) -> brs_status;
    pub fn brs_plan_get_double(
        out: *mut f64,
        plan: *const brs_plan,
        key: brs_plan_key,
    ) -> brs_status;
    pub fn brs_plan_micro_batch(
        indices: *mut *const u64,
        count: *mut usize,
        plan: *const brs_plan,
        rank: i64,
        micro: i64,
    ) -> brs_status;
    pub fn brs_plan_micro_batch_stats(
        padded_tokens: *mut u64,
        real_tokens: *mut u64,
        cost: *mut f64,
        plan: *const brs_plan,
        rank: i64,
        micro: i64,
    ) -> brs_status;
    // LIBBRS_1.5
    pub fn brs_plan_micro_batch_encoder(
        encoder_tokens: *mut u64,
        images: *mut u64,
        encoder_cost: *mut f64,
        plan: *const brs_plan,
        rank: i64,
        micro: i64,
    ) -> brs_status;
    pub fn brs_plan_last_error(plan: *const brs_plan) -> *const c_char;
    // LIBBRS_1.6: context parallelism
    pub fn brs_plan_cp_micro_steps(count: *mut u64, plan: *const brs_plan) -> brs_status;
    pub fn brs_plan_cp_micro_batch(
        indices: *mut *const u64,
        count: *mut usize,
        first_rank: *mut u64,
        degree: *mut u64,
        plan: *const brs_plan,
        global_rank: u64,
        micro: u64,
    ) -> brs_status;
    pub fn brs_plan_cp_micro_batch_stats(
        padded_tokens: *mut u64,
        real_tokens: *mut u64,
        cost: *mut f64,
        plan: *const brs_plan,
        global_rank: u64,
        micro: u64,
    ) -> brs_status;
    pub fn brs_plan_cp_token_ranges(
        ranges: *mut u64,
        count: *mut usize,
        plan: *const brs_plan,
        global_rank: u64,
        micro: u64,
        capacity: usize,
    ) -> brs_status;

    // LIBBRS_1.5
    pub fn brs_lengths_file_new(out: *mut *mut brs_lengths_file) -> brs_status;
    pub fn brs_lengths_file_free(file: *mut brs_lengths_file);
    pub fn brs_lengths_file_parse(
        file: *mut brs_lengths_file,
        bytes: *const c_char,
        size: usize,
        name: *const c_char,
    ) -> brs_status;
    pub fn brs_lengths_file_begin(file: *mut brs_lengths_file, name: *const c_char) -> brs_status;
    pub fn brs_lengths_file_feed(
        file: *mut brs_lengths_file,
        bytes: *const c_char,
        size: usize,
    ) -> brs_status;
    pub fn brs_lengths_file_finish(file: *mut brs_lengths_file) -> brs_status;
    pub fn brs_lengths_file_lengths(
        lengths: *mut *const u32,
        count: *mut usize,
        file: *const brs_lengths_file,
    ) -> brs_status;
    pub fn brs_lengths_file_images(
        patches: *mut *const u32,
        offsets: *mut *const u64,
        file: *const brs_lengths_file,
    ) -> brs_status;
    pub fn brs_lengths_file_last_error(file: *const brs_lengths_file) -> *const c_char;
    pub fn brs_cost_model_file_new(out: *mut *mut brs_cost_model_file) -> brs_status;
    pub fn brs_cost_model_file_free(file: *mut brs_cost_model_file);
    pub fn brs_cost_model_file_parse(
        file: *mut brs_cost_model_file,
        bytes: *const c_char,
        size: usize,
        name: *const c_char,
    ) -> brs_status;
    pub fn brs_cost_model_file_has(
        present: *mut i32,
        file: *const brs_cost_model_file,
        key: *const c_char,
    ) -> brs_status;
    pub fn brs_cost_model_file_get_double(
        value: *mut f64,
        file: *const brs_cost_model_file,
        key: *const c_char,
    ) -> brs_status;
    pub fn brs_cost_model_file_get_int(
        value: *mut i64,
        file: *const brs_cost_model_file,
        key: *const c_char,
    ) -> brs_status;
    pub fn brs_cost_model_file_get_json(
        text: *mut *const c_char,
        length: *mut usize,
        file: *const brs_cost_model_file,
        key: *const c_char,
    ) -> brs_status;
    pub fn brs_cost_model_file_last_error(file: *const brs_cost_model_file) -> *const c_char;
}
