/*
 * brs.h - libbrs, the batch-rebalancing planner for distributed training.
 *
 * This header is the whole public contract of libbrs.so.1. It follows a few
 * rules that make every binding possible (docs/abi.md):
 *   - opaque handles only, created by brs_*_new(T **out) and freed by
 *     brs_*_free(T *), which accepts NULL and may run on any thread;
 *   - signatures use only fixed-width integers, size_t, double, pointers and
 *     const char *; status codes and keys are int32_t with fixed values;
 *   - out-parameters come first; read-only handles are const;
 *   - status 0 is success, every error is negative; brs_strerror() names it
 *     and every failing call on a handle (read-only calls included) writes
 *     that handle's detail message, so a message always describes the
 *     latest failure on its handle;
 *   - no global or thread-local mutable state: distinct handles may be used
 *     from distinct threads at the same time without locking;
 *   - symbols are never removed or changed within SONAME libbrs.so.1.
 *
 * Typical use:
 *
 *     brs_sampler *s; brs_plan *p;
 *     brs_sampler_new(&s);
 *     brs_sampler_set_lengths(s, lengths, n, BRS_LENGTHS_COPY);
 *     brs_sampler_set_int(s, BRS_OPT_DP_SIZE, 8);
 *     brs_plan_new(&p);
 *     if (brs_plan_compute(p, s, epoch, step) != BRS_OK)
 *         fprintf(stderr, "%s\n", brs_plan_last_error(p));
 *     brs_plan_micro_batch(&indices, &count, p, rank, micro);
 *     brs_plan_free(p); brs_sampler_free(s);
 */
#ifndef BRS_H
#define BRS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(BRS_BUILDING_LIBRARY) && defined(__GNUC__)
#define BRS_API __attribute__((visibility("default")))
#else
#define BRS_API
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                  */
/* ------------------------------------------------------------------------ */

#define BRS_VERSION_MAJOR 1
#define BRS_VERSION_MINOR 6
#define BRS_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH, the value brs_version_number() returns. */
#define BRS_VERSION_NUMBER 10600

/**
 * The version of the library actually loaded, MAJOR * 10000 + MINOR * 100 + PATCH.
 * Bindings compare its major (value / 10000) with the one they were written for.
 * Ownership: none. NULL: no pointer arguments. Thread-safety: any thread.
 */
BRS_API uint32_t brs_version_number(void);

/**
 * The version of the library loaded, as "MAJOR.MINOR.PATCH".
 * Ownership: a static string; never free it. NULL: no pointer arguments.
 * Thread-safety: any thread.
 */
BRS_API const char *brs_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes: values never change; new codes only get new values.         */
/* ------------------------------------------------------------------------ */

typedef int32_t brs_status;

#define BRS_OK 0
/** A required pointer argument (handle or out-parameter) was NULL. */
#define BRS_ERR_NULL_POINTER (-1)
/** An argument is malformed (e.g. a zero-length array, an unknown mode). */
#define BRS_ERR_INVALID_ARGUMENT (-2)
/** The option or query key is not known to this version of the library. */
#define BRS_ERR_UNSUPPORTED (-3)
/** A value lies outside its bounds (option value, rank, micro-step, step,
 *  a nonzero alpha or intercept below the 1e-6 resolution). */
#define BRS_ERR_OUT_OF_RANGE (-4)
/** Memory could not be allocated; the handle is unchanged. */
#define BRS_ERR_NO_MEMORY (-5)
/** The handle is not ready for the call (no lengths set, no plan computed). */
#define BRS_ERR_STATE (-6)
/** A sample length is 0; every sample must have at least one token (also
 *  when a borrowed array was changed to hold a 0 after set_lengths). */
#define BRS_ERR_INVALID_LENGTH (-7)
/** Too few samples: drop_last is 1 and N < B = batch_size * dp_size *
 *  grad_accum, so an epoch has no full step. With drop_last 0 any N >= 1
 *  plans (a short last step is topped up to K samples, N=1, K=8 included). */
#define BRS_ERR_TOO_FEW_SAMPLES (-8)
/** A sample is longer than max_tokens (padded as its micro-batch will be),
 *  or than the last length bucket, so no plan can respect the cap. */
#define BRS_ERR_SAMPLE_TOO_LONG (-9)
/** The step cannot be split into K micro-batches under max_tokens; the
 *  message says the smallest number of micro-batches that would do. */
#define BRS_ERR_CAP_INFEASIBLE (-10)
/** The configuration exceeds a limit of this version (see BRS_MAX_*). */
#define BRS_ERR_TOO_LARGE (-11)

/**
 * A static English sentence naming a status code ("unknown status" for a
 * value this version does not define).
 * Ownership: static; never free it. NULL: no pointer arguments.
 * Thread-safety: any thread.
 */
BRS_API const char *brs_strerror(brs_status status);

/* ------------------------------------------------------------------------ */
/* Limits of this version (the cost arithmetic is proven for these).         */
/* ------------------------------------------------------------------------ */

/** Largest number of samples in one optimizer step (B = P * K). */
#define BRS_MAX_STEP_SAMPLES 16777216
/** Largest number of micro-batches in one step (K = dp_size * grad_accum). */
#define BRS_MAX_MICRO_BATCHES 16777216
/** Largest number of length buckets (brs_sampler_set_length_buckets, since 1.4). */
#define BRS_MAX_LENGTH_BUCKETS 65536
/** Largest number of image patches of one sample, summed over its images
 *  (brs_sampler_set_encoder_loads, since 1.5). */
#define BRS_MAX_SAMPLE_PATCHES 4294967295u

/* ------------------------------------------------------------------------ */
/* Options: typed keys; an unknown key returns BRS_ERR_UNSUPPORTED.          */
/* Names, types, bounds, defaults and help of every key come from the        */
/* library's one option table (brs_option_* below): bindings ask, never     */
/* restate. An option's name is the same in every layer (CLI: --name with   */
/* '_' as '-').                                                              */
/* ------------------------------------------------------------------------ */

typedef int32_t brs_option;

/** int: batch_size, P, the AVERAGE micro-batch size (samples per micro-batch). Default 8. */
#define BRS_OPT_BATCH_SIZE 1
/** int: grad_accum, G, micro-batches per rank per optimizer step. Default 1. */
#define BRS_OPT_GRAD_ACCUM 2
/** int: dp_size, R, the number of data-parallel ranks. Default 1. */
#define BRS_OPT_DP_SIZE 3
/** int: rank, r, this rank, 0 <= r < R (checked when planning). Default 0. */
#define BRS_OPT_RANK 4
/** int: seed, the shuffle seed, 0 .. INT64_MAX. Default 0. */
#define BRS_OPT_SEED 5
/** int: shuffle, 1 to draw each epoch from a seeded permutation, 0 for identity. Default 1. */
#define BRS_OPT_SHUFFLE 6
/** int: drop_last, 1 to drop the incomplete last step, 0 to keep it (topped up
 *  to K samples, so that one step's samples depend on K). Default 1. */
#define BRS_OPT_DROP_LAST 7
/** int: max_tokens, hard cap on padded tokens (bs * longest) per micro-batch,
 *  tokens (sum of lengths) in packed mode; 0 means no cap. Default 0. The
 *  fixed-size strategies (random, length_grouped) do not bend to it: their
 *  plans report the peak they reach. */
#define BRS_OPT_MAX_TOKENS 8
/** int: packed, 1 for packed mode (varlen attention, no padding), 0 for padded. Default 0. */
#define BRS_OPT_PACKED 9
/** double: alpha, the quadratic (attention) term of the cost, 0 .. 1000,
 *  stored rounded to a multiple of 1e-6 (brs_sampler_get_double returns the
 *  stored value); a nonzero value that rounds to 0 is BRS_ERR_OUT_OF_RANGE.
 *  Default 0.001. */
#define BRS_OPT_ALPHA 10
/** double: intercept, the fixed cost of one micro-batch, 0 .. 1e12, stored as
 *  alpha is (1e-6 resolution, nonzero values rounding to 0 refused). Default 0. */
#define BRS_OPT_INTERCEPT 11
/** int: strategy, how brs_plan_compute forms micro-batches (since 1.1).
 *  Default BRS_STRATEGY_BALANCED. */
#define BRS_OPT_STRATEGY 12
/** strategy "balanced": the libbrs planner (variable-size, balanced costs). */
#define BRS_STRATEGY_BALANCED 0
/** strategy "random": the peer baseline of fixed-size micro-batches of
 *  batch_size samples read in draw order from the same epoch permutation
 *  (the same samples per step as balanced). */
#define BRS_STRATEGY_RANDOM 1
/** strategy "length_grouped": transformers' LengthGroupedSampler rule: the
 *  epoch permutation cut into megabatches of mult * batch_size * grad_accum
 *  samples, mult = min(N / (4 * batch_size * grad_accum), 50) or 1, each
 *  sorted longest first, the longest megabatch head swapped to the front;
 *  then read in fixed-size micro-batches as random is. */
#define BRS_STRATEGY_LENGTH_GROUPED 2
/** int: sync, the synchronisation model the planner optimises (since 1.1).
 *  Default BRS_SYNC_MICRO_STEP. */
#define BRS_OPT_SYNC 13
/** sync "micro_step": FSDP/ZeRO, or DDP syncing every backward: a step
 *  takes the sum over micro-steps of the slowest rank's cost. */
#define BRS_SYNC_MICRO_STEP 0
/** sync "step": DDP under no_sync: a step takes the largest per-rank sum. */
#define BRS_SYNC_STEP 1
/** int: pad_to_multiple_of, 1 .. 65536 (since 1.4). A padded micro-batch's
 *  length is its longest sample rounded up to a multiple of this, as a
 *  collator's pad_to_multiple_of builds it, then to the smallest length
 *  bucket at least as long when buckets are set
 *  (brs_sampler_set_length_buckets): its cost, max_tokens, padded tokens and
 *  bounds are those of that rounded length. In packed mode the micro-batch's
 *  total (its one packed row) is rounded so: max_tokens caps the rounded
 *  total, padded tokens report it, and the cost stays that of the samples.
 *  1 rounds nothing. Default 1. */
#define BRS_OPT_PAD_TO_MULTIPLE_OF 14
/** double: encoder_alpha, the quadratic (attention) term of an image's
 *  encoder cost, 0 .. 1000, stored as alpha is (since 1.5). An image of p
 *  patches (brs_sampler_set_encoder_loads) costs encoder_weight * p +
 *  encoder_alpha * p^2 units: by default one patch costs what one padded text
 *  token costs, and the encoder's attention runs within each image.
 *  Default 0.001. */
#define BRS_OPT_ENCODER_ALPHA 15
/** double: encoder_intercept, the fixed encoder cost of one image, 0 ..
 *  1e12, stored as alpha is (since 1.5). Default 0. */
#define BRS_OPT_ENCODER_INTERCEPT 16
/** int: max_encoder_tokens, hard cap on the image patches (the vision
 *  encoder's tokens) of one micro-batch, beside max_tokens; 0 means no cap
 *  (since 1.5). Default 0. */
#define BRS_OPT_MAX_ENCODER_TOKENS 17
/** double: encoder_weight, what one image patch costs in units of one padded
 *  text token, 0 .. 1000, stored as alpha is (since 1.5): an image of p
 *  patches costs encoder_weight * p + encoder_alpha * p^2 + encoder_intercept
 *  units. Default 1. */
#define BRS_OPT_ENCODER_WEIGHT 18
/** int: max_shapes, the most distinct micro-batch shapes (batch size,
 *  padded length) of the whole run, over every rank and every epoch
 *  (since 1.6); 0 means unbounded. With it set, the sampler chooses a shape
 *  vocabulary once from its lengths and configuration
 *  (brs_sampler_shape_vocabulary) and every plan keeps each micro-batch to
 *  one of its shapes, with the batch size exact and the padded length the
 *  vocabulary's. In packed mode a shape is a row (1, padded total) and
 *  max_tokens (or length buckets) is required, the padded cap's row being
 *  one of them; without it, and with samples with images, max_shapes > 0 is
 *  BRS_ERR_UNSUPPORTED; the fixed-size strategies (random, length_grouped)
 *  ignore it. 0 .. 4096. Default 0. */
#define BRS_OPT_MAX_SHAPES 19
/** int: cp_size, C, the context-parallel ranks of each data-parallel rank,
 *  a power of two, 1 .. 4096 (since 1.6). The world is dp_size x cp_size
 *  ranks, global rank = dp index x cp_size + cp index (DeviceMesh order
 *  ("dp", "cp")); a step draws the same samples as with cp_size 1. With
 *  cp_size > 1 each micro-step's micro-batches get a degree c (cp_degrees)
 *  and a group of c consecutive ranks starting at a multiple of c within one
 *  block of cp_size, every rank runs grad_accum micro-steps (a placeholder
 *  where it has nothing) and each rank of a group holds a head-tail share of
 *  each sequence (brs_plan_cp_micro_batch, brs_plan_cp_token_ranges).
 *  Packed mode and the balanced strategy only; max_tokens, max_shapes and
 *  images with cp_size > 1 are BRS_ERR_UNSUPPORTED. Default 1. */
#define BRS_OPT_CP_SIZE 20
/** int: max_tokens_per_rank, hard cap on the tokens one rank holds in one
 *  micro-step when cp_size > 1 (since 1.6): a sequence of length L on c ranks
 *  puts ceil(L / c) on each, a micro-batch's share is the sum over its
 *  sequences, rounded as pad_to_multiple_of and the length buckets round a
 *  packed row; 0 means no cap. 0 .. INT64_MAX. Default 0. */
#define BRS_OPT_MAX_TOKENS_PER_RANK 21
/** double: cp_comm_cost, the context-parallel exchange term of the cost,
 *  0 .. 1e6, stored as alpha is (since 1.6): a micro-batch of T tokens on
 *  c > 1 ranks costs each of them intercept + (its sum of L + alpha * L^2) / c
 *  + cp_comm_cost * (c - 1) / c * T + cp_latency * (c - 1) units (the keys
 *  and values of the group's other ranks, as all-gather and ring attention
 *  receive them; docs/algorithm.md, "Context parallelism"). Default 0.6. */
#define BRS_OPT_CP_COMM_COST 22
/** int: cp_degrees, the degrees a context-parallel micro-batch may take, a
 *  bitmask: bit j allows degree 2^j, which must be at most cp_size (since
 *  1.6); 0 allows every power of two up to cp_size. 0 .. 8191. Default 0. */
#define BRS_OPT_CP_DEGREES 23
/** int: max_shapes_search, the moves of a search that improves the shape
 *  vocabulary after its greedy choice (since 1.6): each move changes one
 *  chosen shape (its batch size, its length, or another shape the sampled
 *  plans used) and plans the sampled steps within the changed vocabulary,
 *  kept where it is not much slower, by a threshold that falls to zero
 *  (docs/algorithm.md, "Shape vocabulary"). Deterministic: the same
 *  vocabulary on every rank. About 5 ms a move at dp 4 x grad_accum 2 x
 *  batch 8 on a 2-core CPU, for long runs where a few percent of step time
 *  repays a minute once. Ignored when max_shapes is 0, in packed mode (its
 *  rows are already an optimal quantisation) and by the fixed-size
 *  strategies. 0 .. 1000000. Default 0 (none). */
#define BRS_OPT_MAX_SHAPES_SEARCH 24
/** double: cp_latency, the context-parallel latency term of the cost, 0 ..
 *  1e12, stored as alpha is (since 1.6): each rank of a micro-batch's group
 *  of c ranks pays cp_latency * (c - 1) units (BRS_OPT_CP_COMM_COST), what a
 *  ring's c - 1 steps a layer cost whatever the tokens. Default 7500. */
#define BRS_OPT_CP_LATENCY 25

/** Option types (brs_option_type). */
#define BRS_OPTION_INT 0
#define BRS_OPTION_DOUBLE 1

/** Option scopes (brs_option_scope): who shares an option's value. */
/** This process's own value (the rank): every rank of a job sets it
 *  differently, and no fingerprint holds it. */
#define BRS_OPTION_SCOPE_RANK 0
/** Shared by every rank; decides only which rank and micro-step trains
 *  which sample of a step (dp_size, batch_size, grad_accum, sync), so a
 *  stream's fingerprint, which outlives the split, leaves it out. */
#define BRS_OPTION_SCOPE_SPLIT 1
/** Shared by every rank; decides the samples of a step or their plan. */
#define BRS_OPTION_SCOPE_RUN 2

/**
 * The bounds [*lower, *upper] of an integer option.
 * Returns BRS_ERR_UNSUPPORTED for an unknown key or a double option.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if lower or upper is NULL.
 * Thread-safety: any thread.
 */
BRS_API brs_status brs_option_bounds_int(int64_t *lower, int64_t *upper, brs_option key);

/**
 * The bounds [*lower, *upper] of a double option.
 * Returns BRS_ERR_UNSUPPORTED for an unknown key or an integer option.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if lower or upper is NULL.
 * Thread-safety: any thread.
 */
BRS_API brs_status brs_option_bounds_double(double *lower, double *upper, brs_option key);

/**
 * The number of option keys of this library (since 1.1).
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if count is NULL.
 * Thread-safety: any thread.
 */
BRS_API brs_status brs_option_count(size_t *count);

/**
 * The key of option number `index` (0 <= index < brs_option_count), in the
 * table's order; BRS_ERR_OUT_OF_RANGE past the end (since 1.1).
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if key is NULL.
 * Thread-safety: any thread.
 */
BRS_API brs_status brs_option_key(brs_option *key, size_t index);

/**
 * The key of the option named `name` (e.g. "batch_size"); BRS_ERR_UNSUPPORTED
 * if no option has that name (since 1.1).
 * Ownership: name is only read. NULL: BRS_ERR_NULL_POINTER if key or name is
 * NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_option_find(brs_option *key, const char *name);

/**
 * The name of an option, e.g. "batch_size"; BRS_ERR_UNSUPPORTED for an
 * unknown key (since 1.1).
 * Ownership: a static string; never free it. NULL: BRS_ERR_NULL_POINTER if
 * name is NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_option_name(const char **name, brs_option key);

/**
 * The type of an option, BRS_OPTION_INT or BRS_OPTION_DOUBLE;
 * BRS_ERR_UNSUPPORTED for an unknown key (since 1.1).
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if type is NULL.
 * Thread-safety: any thread.
 */
BRS_API brs_status brs_option_type(int32_t *type, brs_option key);

/**
 * The default of an integer option (the value a new sampler holds);
 * BRS_ERR_UNSUPPORTED for an unknown key or a double option (since 1.1).
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if value is NULL.
 * Thread-safety: any thread.
 */
BRS_API brs_status brs_option_default_int(int64_t *value, brs_option key);

/**
 * The default of a double option, as a new sampler holds it (rounded to
 * 1e-6); BRS_ERR_UNSUPPORTED for an unknown key or an integer option (since 1.1).
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if value is NULL.
 * Thread-safety: any thread.
 */
BRS_API brs_status brs_option_default_double(double *value, brs_option key);

/**
 * A one-line English description of an option, for --help and docstrings;
 * BRS_ERR_UNSUPPORTED for an unknown key (since 1.1).
 * Ownership: a static string; never free it. NULL: BRS_ERR_NULL_POINTER if
 * text is NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_option_help(const char **text, brs_option key);

/**
 * The name of value `value` of an enum-like option: strategy 0/1/2 ->
 * "balanced"/"random"/"length_grouped", sync 0/1 -> "micro_step"/"step".
 * BRS_ERR_UNSUPPORTED for an unknown key or an option of plain numbers
 * (shuffle, drop_last, packed and the rest), BRS_ERR_OUT_OF_RANGE for a
 * value outside the option's bounds (since 1.1).
 * Ownership: a static string; never free it. NULL: BRS_ERR_NULL_POINTER if
 * name is NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_option_value_name(const char **name, brs_option key, int64_t value);

/**
 * The value named `name` of an enum-like option, the inverse of
 * brs_option_value_name: strategy "random" -> 1, sync "step" -> 1 (since
 * 1.6). BRS_ERR_UNSUPPORTED for an unknown key or an option of plain
 * numbers, BRS_ERR_INVALID_ARGUMENT when the option has no value of that
 * name (the names are compared exactly; list them with
 * brs_option_value_name).
 * Ownership: name is only read. NULL: BRS_ERR_NULL_POINTER if value or name
 * is NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_option_value_find(int64_t *value, brs_option key, const char *name);

/**
 * The keyword that bindings use for an option: its name, except where the
 * frameworks users come from spell it otherwise ("per_device_batch_size"
 * for batch_size, transformers' name) (since 1.6). BRS_ERR_UNSUPPORTED for
 * an unknown key.
 * Ownership: a static string; never free it. NULL: BRS_ERR_NULL_POINTER if
 * keyword is NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_option_keyword(const char **keyword, brs_option key);

/**
 * Who shares an option's value: BRS_OPTION_SCOPE_RANK, _SPLIT or _RUN
 * (since 1.6). A saved state or a check across ranks compares the options
 * whose scope is not RANK; a stream's state, which outlives the split of a
 * step, those of scope RUN. BRS_ERR_UNSUPPORTED for an unknown key.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if scope is NULL.
 * Thread-safety: any thread.
 */
BRS_API brs_status brs_option_scope(int32_t *scope, brs_option key);

/* ------------------------------------------------------------------------ */
/* Sampler: the lengths and the configuration; read-only while planning.     */
/* ------------------------------------------------------------------------ */

typedef struct brs_sampler brs_sampler;

/** brs_sampler_set_lengths: copy the array into the sampler. */
#define BRS_LENGTHS_COPY 0
/** brs_sampler_set_lengths: borrow the array; the caller keeps it alive and
 *  unchanged until the sampler is freed or given other lengths. */
#define BRS_LENGTHS_BORROW 1

/**
 * Create a sampler with default options and no lengths.
 * On failure *out is set to NULL.
 * Ownership: the caller owns *out and frees it with brs_sampler_free.
 * NULL: BRS_ERR_NULL_POINTER if out is NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_sampler_new(brs_sampler **out);

/**
 * Free a sampler. Plans computed from it stay valid.
 * Ownership: takes the handle. NULL: a no-op. Thread-safety: any thread, once
 * no other call on this handle is running.
 */
BRS_API void brs_sampler_free(brs_sampler *sampler);

/**
 * Set the dataset: lengths[i] is the token count of sample i, n samples.
 * Every length must be >= 1 (BRS_ERR_INVALID_LENGTH names the first bad
 * index); n must be >= 1. mode is BRS_LENGTHS_COPY or BRS_LENGTHS_BORROW.
 * Scans the array once (validation and fingerprint). On error the sampler
 * keeps its previous lengths.
 * Ownership: COPY keeps a private copy; BORROW keeps the pointer only.
 * NULL: BRS_ERR_NULL_POINTER if sampler or lengths is NULL.
 * Thread-safety: not concurrently with any other call on this sampler.
 */
BRS_API brs_status brs_sampler_set_lengths(brs_sampler *sampler, const uint32_t *lengths,
                                           size_t n, int32_t mode);

/**
 * Set an integer option (BRS_OPT_*). BRS_ERR_OUT_OF_RANGE outside its bounds,
 * BRS_ERR_UNSUPPORTED for an unknown key or a double option; on error the
 * option keeps its value and the handle's message says why.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if sampler is NULL.
 * Thread-safety: not concurrently with any other call on this sampler.
 */
BRS_API brs_status brs_sampler_set_int(brs_sampler *sampler, brs_option key, int64_t value);

/**
 * Set a double option (BRS_OPT_ALPHA, BRS_OPT_INTERCEPT). The value is stored
 * rounded to a multiple of 1e-6; NaN, a value outside the bounds, and a
 * nonzero value below 5e-7 (it would round to 0) are BRS_ERR_OUT_OF_RANGE.
 * Errors otherwise as brs_sampler_set_int.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if sampler is NULL.
 * Thread-safety: not concurrently with any other call on this sampler.
 */
BRS_API brs_status brs_sampler_set_double(brs_sampler *sampler, brs_option key, double value);

/**
 * Read an integer option into *out. BRS_ERR_UNSUPPORTED for an unknown key
 * or a double option (the sampler's message says which).
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if out or sampler is NULL.
 * Thread-safety: concurrently with other read-only calls on this sampler
 * (a failure writes the sampler's message; failures at once are serialised).
 */
BRS_API brs_status brs_sampler_get_int(int64_t *out, const brs_sampler *sampler, brs_option key);

/**
 * Read a double option into *out: the stored value, i.e. the value set
 * rounded to a multiple of 1e-6. Errors as brs_sampler_get_int.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if out or sampler is NULL.
 * Thread-safety: concurrently with other read-only calls on this sampler
 * (a failure writes the sampler's message; failures at once are serialised).
 */
BRS_API brs_status brs_sampler_get_double(double *out, const brs_sampler *sampler,
                                          brs_option key);

/**
 * Check that the options fit together and with the lengths: rank < dp_size,
 * B and K within BRS_MAX_*, at least one step, no sample above max_tokens.
 * The handle's message says what to change.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if sampler is NULL.
 * Thread-safety: not concurrently with any other call on this sampler.
 */
BRS_API brs_status brs_sampler_validate(brs_sampler *sampler);

/**
 * The number of optimizer steps in one epoch (the same on every rank).
 * Validates first, as brs_sampler_validate.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if out or sampler is NULL.
 * Thread-safety: not concurrently with any other call on this sampler.
 */
BRS_API brs_status brs_sampler_steps_per_epoch(uint64_t *out, brs_sampler *sampler);

/**
 * A 64-bit hash of the lengths, every option except the rank, and the plan
 * algorithm version: two samplers plan identically iff they agree on it
 * (up to hash collisions). Ranks of one job compare it to detect divergence.
 * BRS_ERR_STATE if no lengths are set.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if out or sampler is NULL.
 * Thread-safety: concurrently with other read-only calls on this sampler
 * (a failure writes the sampler's message; failures at once are serialised).
 */
BRS_API brs_status brs_sampler_fingerprint(uint64_t *out, const brs_sampler *sampler);

/**
 * A 64-bit hash of what decides an epoch's sample stream (since 1.3): the
 * lengths, the plan algorithm version and every option that
 * brs_sampler_fingerprint covers except those that only split a step among
 * ranks and micro-steps (dp_size, batch_size, grad_accum, sync; never the
 * rank). Two samplers that agree on it draw the same samples in the same
 * order, each step being the next global batch of batch_size x grad_accum x
 * dp_size samples (up to hash collisions): a state saved on one number of
 * ranks resumes on another with the same global batch, which the caller
 * compares itself.
 * BRS_ERR_STATE if no lengths are set.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if out or sampler is NULL.
 * Thread-safety: as brs_sampler_fingerprint.
 */
BRS_API brs_status brs_sampler_stream_fingerprint(uint64_t *out, const brs_sampler *sampler);

/**
 * Whether max_tokens lets brs_plan_compute plan every step of `epoch`,
 * decided in one pass before any step is planned (O(B) per step, O(N) for
 * the epoch; no plan is kept). Validates first, as brs_sampler_validate.
 * *min_max_tokens gets the least max_tokens with which every step of the
 * epoch plans with this dp_size x grad_accum; *micro_batches the most
 * micro-batches a step needs under the configured max_tokens (the count of
 * brs_plan_compute's "needs at least N micro-batches"; 1 without a cap and
 * for the fixed-size strategies, which do not bend to the cap; 0 when a
 * sample is longer than max_tokens). Both are written whenever the status
 * is BRS_OK, BRS_ERR_CAP_INFEASIBLE or BRS_ERR_SAMPLE_TOO_LONG.
 * Returns BRS_OK when every step plans; BRS_ERR_CAP_INFEASIBLE when a step
 * needs more micro-batches than dp_size x grad_accum (the message names the
 * first such step, the count, and *min_max_tokens);
 * BRS_ERR_SAMPLE_TOO_LONG when a sample is longer than max_tokens (the
 * message names *min_max_tokens); BRS_ERR_UNSUPPORTED in packed mode, whose
 * cap is bin packing that only planning a step settles; otherwise the
 * errors of brs_sampler_validate and, for a borrowed lengths array changed
 * since it was set, those of brs_plan_compute (since 1.2).
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if min_max_tokens,
 * micro_batches or sampler is NULL.
 * Thread-safety: concurrently with other read-only calls on this sampler
 * (a failure writes the sampler's message; failures at once are serialised).
 */
BRS_API brs_status brs_sampler_check_epoch(uint64_t *min_max_tokens, uint64_t *micro_batches,
                                           const brs_sampler *sampler, uint64_t epoch);

/**
 * Set the length buckets (since 1.4): the padded lengths a micro-batch may
 * take. A padded micro-batch's length becomes the smallest bucket at least
 * its longest sample (rounded up to pad_to_multiple_of first); a packed
 * micro-batch's total is rounded the same way, and no total may exceed the
 * last bucket. The plan, its costs and max_tokens use the rounded length.
 * buckets[0..n-1] must be >= 1 and strictly increasing, n <=
 * BRS_MAX_LENGTH_BUCKETS; n = 0 clears them (buckets may then be NULL).
 * A sample longer than the last bucket is BRS_ERR_SAMPLE_TOO_LONG from
 * brs_sampler_validate and everything that validates. The buckets enter
 * both fingerprints when set. On error the sampler keeps its buckets
 * (BRS_ERR_INVALID_ARGUMENT: a 0 or an order that is not increasing, named
 * by the message; BRS_ERR_TOO_LARGE: too many).
 * Ownership: the array is copied. NULL: BRS_ERR_NULL_POINTER if sampler is
 * NULL, or buckets is NULL with n > 0.
 * Thread-safety: not concurrently with any other call on this sampler.
 */
BRS_API brs_status brs_sampler_set_length_buckets(brs_sampler *sampler, const uint32_t *buckets,
                                                  size_t n);

/**
 * Set the encoder loads of a vision-language dataset (since 1.5): sample i
 * has the images image_patches[image_offsets[i] .. image_offsets[i+1]), each
 * given by its patch count (the vision encoder's tokens), at least 1, a
 * sample's summed to at most BRS_MAX_SAMPLE_PATCHES; image_offsets has
 * n + 1 non-decreasing entries from 0. A micro-batch's
 * cost adds its images' encoder costs (BRS_OPT_ENCODER_ALPHA,
 * BRS_OPT_ENCODER_INTERCEPT) to its text cost, and its patches are capped
 * by BRS_OPT_MAX_ENCODER_TOKENS; a step whose samples have no image plans
 * exactly as without loads. n must equal the sample count of the lengths
 * when a plan is computed (BRS_ERR_INVALID_ARGUMENT otherwise). n = 0 (both
 * pointers may then be NULL) clears the loads. The loads enter both
 * fingerprints when set. On error the sampler keeps its previous loads.
 * Ownership: copied; the sampler keeps no reference to the arrays.
 * NULL: BRS_ERR_NULL_POINTER if sampler is NULL, or an array is NULL with
 * n > 0. Thread-safety: not concurrently with any other call on this
 * sampler.
 */
BRS_API brs_status brs_sampler_set_encoder_loads(brs_sampler *sampler,
                                                 const uint32_t *image_patches,
                                                 const uint64_t *image_offsets, size_t n);

/**
 * The encoder loads of sample `index` (since 1.5): its image count and its
 * patches summed; both 0 when the sampler has no loads.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if images, patches or
 * sampler is NULL. Errors: BRS_ERR_OUT_OF_RANGE for an index at or above
 * the loads' sample count. Thread-safety: concurrently with other
 * read-only calls on this sampler.
 */
BRS_API brs_status brs_sampler_encoder_load(uint64_t *images, uint64_t *patches,
                                            const brs_sampler *sampler, uint64_t index);

/**
 * The sampler's length buckets (since 1.4): *buckets points at *count
 * values, increasing; *count is 0 (and *buckets NULL) when none are set.
 * Ownership: the array belongs to the sampler; valid until the buckets are
 * set again or the sampler is freed. NULL: BRS_ERR_NULL_POINTER if buckets,
 * count or sampler is NULL.
 * Thread-safety: concurrently with other read-only calls on this sampler.
 */
BRS_API brs_status brs_sampler_get_length_buckets(const uint32_t **buckets, size_t *count,
                                                  const brs_sampler *sampler);

/**
 * The library's default ladder of length buckets for the sampler's lengths
 * (since 1.4): steps_per_doubling evenly spaced lengths per doubling (0: the
 * default, 4, i.e. 64, 80, 96, 112, 128, 160, ...: a bucket at most 25%
 * above any length it holds), from the power of two at or below the
 * shortest sample to the first rung at or above the longest, each rounded
 * up to the sampler's pad_to_multiple_of, without repeats. Writes up to
 * capacity buckets and *count, the ladder's length; BRS_ERR_OUT_OF_RANGE
 * when *count > capacity (call again with room for *count; buckets NULL
 * with capacity 0 asks for the length only and returns BRS_OK) or
 * steps_per_doubling > 64;
 * BRS_ERR_STATE without lengths. The ladder is not set: pass it to
 * brs_sampler_set_length_buckets.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if count or sampler is NULL,
 * or buckets is NULL with capacity > 0.
 * Thread-safety: concurrently with other read-only calls on this sampler.
 */
BRS_API brs_status brs_sampler_bucket_ladder(uint32_t *buckets, size_t *count,
                                             const brs_sampler *sampler,
                                             uint32_t steps_per_doubling, size_t capacity);

/**
 * The distinct shapes the sampler's rank runs in `epoch` (since 1.4),
 * computed by planning every step, before any training, so that they can be
 * warmed or captured (CUDA graphs, compilers) once: pairs (batch size,
 * padded length), the padded length as the micro-batch is padded (rounded
 * by pad_to_multiple_of and the length buckets; in packed mode the padded
 * total of its one row), sorted by batch size, then length. shapes[2i] and
 * shapes[2i+1] get pair i for i < capacity; *count the number of pairs.
 * BRS_ERR_OUT_OF_RANGE when *count > capacity (call again with room; at most
 * steps per epoch x grad_accum pairs exist); shapes NULL with capacity 0
 * asks for the count only and returns BRS_OK. Other errors: those of
 * brs_plan_compute for any step of the epoch (the message names it).
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if count or sampler is NULL,
 * or shapes is NULL with capacity > 0.
 * Thread-safety: concurrently with other read-only calls on this sampler
 * (a failure writes the sampler's message; failures at once are serialised).
 */
BRS_API brs_status brs_sampler_shapes(uint64_t *shapes, size_t *count, const brs_sampler *sampler,
                                      uint64_t epoch, size_t capacity);

/**
 * The shape vocabulary of the run (since 1.6): with max_shapes > 0, the at
 * most max_shapes pairs (batch size, padded length) that every micro-batch
 * of every rank in every epoch has, sorted by batch size, then length. It is
 * chosen once from the lengths and the configuration (the same on every
 * rank, whatever the epoch; docs/algorithm.md, "Shape vocabulary"), on the
 * first call that needs it, and kept until the sampler changes, so it can be
 * warmed before step 0. shapes[2i] and shapes[2i+1] get pair i for
 * i < capacity; *count the number of pairs, 0 when max_shapes is 0 or the
 * strategy is a fixed-size one (which ignores max_shapes). In packed mode a
 * micro-batch is one row: the pairs are (1, padded row total), the longest
 * the padded cap's (the tokens the vocabulary adds to a row cost each
 * padding token as a one-token sample, docs/algorithm.md).
 * BRS_ERR_OUT_OF_RANGE when *count > capacity (call again with room; shapes
 * NULL with capacity 0 asks for the count only); BRS_ERR_CAP_INFEASIBLE when
 * max_shapes is below the shapes every step needs (the message names the
 * least that works); BRS_ERR_UNSUPPORTED with images, and in packed mode
 * without max_tokens (or length buckets) to bound the longest row;
 * other errors those of brs_plan_compute.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if count or sampler is NULL,
 * or shapes is NULL with capacity > 0.
 * Thread-safety: concurrently with other read-only calls on this sampler:
 * the first call chooses the vocabulary while the others wait for it.
 */
BRS_API brs_status brs_sampler_shape_vocabulary(uint64_t *shapes, size_t *count,
                                                const brs_sampler *sampler, size_t capacity);

/**
 * The detail message of the latest failed call on this sampler, read-only
 * calls included; "" if none failed since a call that changed the sampler
 * succeeded. Ownership: owned by the sampler, valid until the next call on it.
 * NULL: returns a static message saying the handle is NULL.
 * Thread-safety: concurrently with calls on this sampler that cannot fail;
 * a failing call rewrites the message.
 */
BRS_API const char *brs_sampler_last_error(const brs_sampler *sampler);

/* ------------------------------------------------------------------------ */
/* Plan: one optimizer step, all ranks; reusable across steps.               */
/* ------------------------------------------------------------------------ */

typedef struct brs_plan brs_plan;

/** Integer plan queries (brs_plan_get_int). */
typedef int32_t brs_plan_key;
#define BRS_PLAN_EPOCH 1
#define BRS_PLAN_STEP 2
/** Samples in this step (B, or fewer in a kept last step). */
#define BRS_PLAN_NUM_SAMPLES 3
#define BRS_PLAN_DP_SIZE 4
#define BRS_PLAN_GRAD_ACCUM 5
/** Sum over micro-batches of padded tokens (bs * longest; tokens when packed). */
#define BRS_PLAN_TOTAL_PADDED_TOKENS 6
/** Sum of the real (unpadded) tokens of the step. */
#define BRS_PLAN_TOTAL_REAL_TOKENS 7
/** Largest padded-token count of one micro-batch (the memory peak). */
#define BRS_PLAN_MAX_PADDED_TOKENS 8
/** Samples per megabatch of the length_grouped strategy in this epoch
 *  (mult x batch_size x grad_accum, at most N); 0 for the other strategies
 *  and a loaded plan (since 1.1). */
#define BRS_PLAN_MEGABATCH_SIZE 9
/** Sum over micro-batches of the image patches (encoder tokens); 0 without
 *  encoder loads (since 1.5). */
#define BRS_PLAN_TOTAL_ENCODER_TOKENS 10
/** Largest image-patch count of one micro-batch: the encoder's memory peak
 *  (since 1.5). */
#define BRS_PLAN_MAX_ENCODER_TOKENS 11
/** The plan's cp_size, C (1 without context parallelism; since 1.6): it has
 *  dp_size x C ranks (brs_plan_cp_micro_batch). */
#define BRS_PLAN_CP_SIZE 12
/** Largest padded-token count one rank holds in one micro-step: with
 *  cp_size > 1 its share of its micro-batch (at most max_tokens_per_rank),
 *  otherwise BRS_PLAN_MAX_PADDED_TOKENS (since 1.6). */
#define BRS_PLAN_MAX_RANK_TOKENS 13
/** Double plan queries (brs_plan_get_double), in cost units. */
/** Largest micro-batch cost: the exact minimum under the constraints (padded mode). */
#define BRS_PLAN_MAX_COST 20
/** A proven lower bound on the largest micro-batch cost. */
#define BRS_PLAN_LOWER_BOUND 21
/** Sum of all micro-batch costs. */
#define BRS_PLAN_TOTAL_COST 22
/** Sum over micro-steps of the largest cost among ranks (FSDP-style sync). */
#define BRS_PLAN_MICRO_SYNC_TIME 23
/** Largest per-rank sum of costs (DDP with no_sync during accumulation). */
#define BRS_PLAN_STEP_SYNC_TIME 24
/** A proven lower bound on both sync times: max(LOWER_BOUND, G * total_min / K). */
#define BRS_PLAN_TIME_LOWER_BOUND 25
/** The encoder's share of BRS_PLAN_TOTAL_COST (its images' costs); 0
 *  without encoder loads (since 1.5). */
#define BRS_PLAN_ENCODER_COST 26
/** Where a step's time goes (since 1.6; docs/algorithm.md, "Where the time
 *  goes"). The step time under the sampler's sync model: MICRO_SYNC_TIME
 *  for "micro_step", STEP_SYNC_TIME for "step". Every one of the R ranks
 *  (dp_size x cp_size) is held for it, so the step costs R x STEP_TIME of
 *  rank-time, split exactly (up to rounding to double) into the three keys
 *  below: USEFUL + PADDING + WAITING = R x STEP_TIME. */
#define BRS_PLAN_STEP_TIME 27
/** Rank-time of useful work: what the step's samples cost unpadded (each
 *  sample's own weight, its images' encoder cost) plus one intercept per
 *  micro-batch a rank runs. */
#define BRS_PLAN_USEFUL_TIME 28
/** Rank-time spent on padding: TOTAL_COST - USEFUL_TIME (with cp_size > 1
 *  also the sharding's communication). */
#define BRS_PLAN_PADDING_TIME 29
/** Rank-time spent waiting at the synchronisation: R x STEP_TIME -
 *  TOTAL_COST, i.e. the slowest rank's time minus each rank's, summed over
 *  ranks (and over micro-steps under "micro_step"). 0 on a perfectly
 *  balanced step. */
#define BRS_PLAN_WAITING_TIME 30

/**
 * Create an empty plan (its buffers grow as needed and are reused).
 * On failure *out is set to NULL.
 * Ownership: the caller owns *out and frees it with brs_plan_free.
 * NULL: BRS_ERR_NULL_POINTER if out is NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_plan_new(brs_plan **out);

/**
 * Free a plan and every index array it handed out.
 * Ownership: takes the handle. NULL: a no-op. Thread-safety: any thread,
 * once no other call on this handle is running.
 */
BRS_API void brs_plan_free(brs_plan *plan);

/**
 * Plan step `step` of epoch `epoch` for every rank: draw the step's samples
 * and form K = dp_size * grad_accum non-empty micro-batches, one per (rank,
 * micro-step), as BRS_OPT_STRATEGY says: balanced (the default) splits them
 * into micro-batches of minimal largest cost (then less total cost) under
 * max_tokens; random and length_grouped form the fixed-size baselines
 * described at BRS_STRATEGY_*, whatever max_tokens (the queries report the
 * peak they reach). Random access: needs no earlier step (length_grouped
 * builds its epoch order, O(N), once per epoch and keeps it in the plan).
 * Errors (message in brs_plan_last_error): those of brs_sampler_validate,
 * BRS_ERR_OUT_OF_RANGE for step >= steps per epoch, BRS_ERR_CAP_INFEASIBLE,
 * BRS_ERR_INVALID_LENGTH / BRS_ERR_SAMPLE_TOO_LONG when a borrowed lengths
 * array was changed after set_lengths to hold 0 or a length above
 * max_tokens in this step (the message names the index).
 * On error the plan holds no step (queries return BRS_ERR_STATE).
 * Ownership: the plan keeps no reference to the sampler.
 * NULL: BRS_ERR_NULL_POINTER if plan or sampler is NULL.
 * Thread-safety: one sampler may serve many threads at once, each with its
 * own plan; a plan is not used by two threads at once.
 */
BRS_API brs_status brs_plan_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch,
                                    uint64_t step);

/**
 * Plan one step whose samples exist only now (since 1.2): an RL batch of
 * rollouts, a window of a stream. lengths[0..n-1] are the step's samples in
 * their order; the plan is the one brs_plan_compute gives for the single
 * step of an epoch of exactly these lengths with shuffle off (same
 * objective, exactness, max_tokens, packed mode, sync model and strategy),
 * and each index in it (brs_plan_micro_batch) is a position into lengths.
 * From `config` only the configuration is read: dp_size, grad_accum, the
 * cost model, max_tokens, packed, sync, strategy; its lengths, batch_size,
 * seed, shuffle, drop_last and rank play no part, and it needs no lengths.
 * BRS_PLAN_EPOCH and BRS_PLAN_STEP of the plan are 0.
 * Errors (message in brs_plan_last_error): BRS_ERR_INVALID_ARGUMENT (n is
 * 0), BRS_ERR_TOO_FEW_SAMPLES (n < K = dp_size * grad_accum: every
 * micro-batch needs a sample), BRS_ERR_TOO_LARGE (n > BRS_MAX_STEP_SAMPLES
 * or K > BRS_MAX_MICRO_BATCHES), BRS_ERR_INVALID_LENGTH (a 0) and
 * BRS_ERR_SAMPLE_TOO_LONG (a length above max_tokens; both name the
 * position), BRS_ERR_CAP_INFEASIBLE (no K micro-batches within max_tokens;
 * the message names the micro-batches, and in padded mode the least
 * max_tokens, that would plan it). On error the plan holds no step.
 * Ownership: lengths is read during the call only; the plan keeps no
 * reference to it or to config.
 * NULL: BRS_ERR_NULL_POINTER if plan, config or lengths is NULL.
 * Thread-safety: as brs_plan_compute (config is only read).
 */
BRS_API brs_status brs_plan_compute_batch(brs_plan *plan, const brs_sampler *config,
                                          const uint32_t *lengths, size_t n);

/**
 * brs_plan_compute_batch for a batch whose samples carry images (since
 * 1.5): sample i's images are image_patches[image_offsets[i] ..
 * image_offsets[i+1]), as brs_sampler_set_encoder_loads takes them, priced
 * and capped with config's encoder options; the encoder loads of config
 * play no part. Errors: those of brs_plan_compute_batch and of
 * brs_sampler_set_encoder_loads; BRS_ERR_SAMPLE_TOO_LONG for a sample above
 * max_encoder_tokens. On error the plan holds no step.
 * Ownership: the arrays are read during the call only.
 * NULL: BRS_ERR_NULL_POINTER if any pointer is NULL.
 * Thread-safety: as brs_plan_compute.
 */
BRS_API brs_status brs_plan_compute_batch_images(brs_plan *plan, const brs_sampler *config,
                                                 const uint32_t *lengths,
                                                 const uint32_t *image_patches,
                                                 const uint64_t *image_offsets, size_t n);

/**
 * Load a plan made elsewhere (a peer sampler's micro-batches, e.g. upstream
 * transformers') so that every brs_plan_* query describes it with the
 * library's one cost model (since 1.1). indices holds all micro-batches
 * concatenated in slot order, rank-major (rank 0 micro-steps 0..G-1, then
 * rank 1, ...); counts[K] their sizes, K = dp_size * grad_accum of the
 * sampler; num_micro_batches must equal K. epoch and step are recorded as
 * given; BRS_PLAN_LOWER_BOUND and BRS_PLAN_TIME_LOWER_BOUND are the bounds
 * for those samples; brs_plan_micro_batch returns each micro-batch in the
 * order given. Errors: BRS_ERR_STATE (no lengths), BRS_ERR_INVALID_ARGUMENT
 * (num_micro_batches != K, a count of 0), BRS_ERR_OUT_OF_RANGE (an index
 * >= N), BRS_ERR_TOO_LARGE (more than BRS_MAX_STEP_SAMPLES samples),
 * BRS_ERR_INVALID_LENGTH (a borrowed length changed to 0). On error the
 * plan holds no step.
 * Ownership: indices and counts are copied; the plan keeps no reference to
 * them or to the sampler. NULL: BRS_ERR_NULL_POINTER if plan, sampler,
 * indices or counts is NULL. Thread-safety: as brs_plan_compute.
 */
BRS_API brs_status brs_plan_load(brs_plan *plan, const brs_sampler *sampler,
                                 const uint64_t *indices, const uint64_t *counts,
                                 size_t num_micro_batches, uint64_t epoch, uint64_t step);

/**
 * Read an integer property (BRS_PLAN_*) of the computed step into *out.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if out or plan is NULL.
 * Thread-safety: concurrently with other read-only calls on the plan (a
 * failure writes the plan's message; failures at once are serialised).
 */
BRS_API brs_status brs_plan_get_int(int64_t *out, const brs_plan *plan, brs_plan_key key);

/**
 * Read a double property (BRS_PLAN_*) of the computed step into *out.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if out or plan is NULL.
 * Thread-safety: concurrently with other read-only calls on the plan (a
 * failure writes the plan's message; failures at once are serialised).
 */
BRS_API brs_status brs_plan_get_double(double *out, const brs_plan *plan, brs_plan_key key);

/**
 * The dataset indices of the micro-batch of `rank` at micro-step `micro`
 * (0 <= rank < dp_size, 0 <= micro < grad_accum): *indices points at *count
 * (>= 1) indices: longest sample first for the balanced strategy, in read
 * order for random and length_grouped, as given for a loaded plan.
 * Ownership: the array belongs to the plan; valid until the next
 * brs_plan_compute or brs_plan_free on it. NULL: BRS_ERR_NULL_POINTER if
 * indices, count or plan is NULL. Thread-safety: as brs_plan_get_int.
 */
BRS_API brs_status brs_plan_micro_batch(const uint64_t **indices, size_t *count,
                                        const brs_plan *plan, int64_t rank, int64_t micro);

/**
 * The padded tokens (bs * longest; tokens when packed), the real tokens and
 * the cost of the micro-batch of `rank` at micro-step `micro`.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if any pointer is NULL.
 * Thread-safety: as brs_plan_get_int.
 */
BRS_API brs_status brs_plan_micro_batch_stats(uint64_t *padded_tokens, uint64_t *real_tokens,
                                              double *cost, const brs_plan *plan, int64_t rank,
                                              int64_t micro);

/**
 * The encoder side of the micro-batch of `rank` at micro-step `micro`
 * (since 1.5): its image patches (the encoder's tokens), its images and
 * their encoder cost (part of brs_plan_micro_batch_stats' cost); all 0
 * without encoder loads.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if any pointer is NULL.
 * Thread-safety: as brs_plan_get_int.
 */
BRS_API brs_status brs_plan_micro_batch_encoder(uint64_t *encoder_tokens, uint64_t *images,
                                                double *encoder_cost, const brs_plan *plan,
                                                int64_t rank, int64_t micro);

/**
 * The micro-steps every rank of the plan runs (since 1.6): grad_accum, with
 * or without context parallelism (a rank with nothing at a micro-step runs a
 * placeholder there).
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if count or plan is NULL.
 * Thread-safety: as brs_plan_get_int.
 */
BRS_API brs_status brs_plan_cp_micro_steps(uint64_t *count, const brs_plan *plan);

/**
 * The micro-batch that global rank `global_rank` (0 <= global_rank <
 * dp_size x cp_size, = dp index x cp_size + cp index) runs at micro-step
 * `micro` (since 1.6): *indices points at its *count dataset indices, the
 * same on every rank of its group, longest first; the group is the *degree
 * ranks *first_rank .. *first_rank + *degree - 1, *degree a power of two
 * that divides *first_rank and stays within one block of cp_size ranks. A
 * placeholder (the rank has nothing at this micro-step; a training loop runs
 * it with zero loss weight so that collectives stay in step) has *count 0,
 * *first_rank global_rank and *degree 1. Without context parallelism (cp_size
 * 1) this is brs_plan_micro_batch of that rank, at degree 1.
 * Ownership: the array belongs to the plan; valid until the next
 * brs_plan_compute or brs_plan_free on it. NULL: BRS_ERR_NULL_POINTER if any
 * pointer is NULL. Errors: BRS_ERR_OUT_OF_RANGE for a rank or micro-step
 * outside the plan, BRS_ERR_STATE when the plan holds no step.
 * Thread-safety: as brs_plan_get_int.
 */
BRS_API brs_status brs_plan_cp_micro_batch(const uint64_t **indices, size_t *count,
                                           uint64_t *first_rank, uint64_t *degree,
                                           const brs_plan *plan, uint64_t global_rank,
                                           uint64_t micro);

/**
 * What global rank `global_rank` holds at micro-step `micro` (since 1.6): its
 * padded tokens (its group's share per rank, the sum over the micro-batch's
 * sequences of ceil(L / degree), rounded as a packed row is; the same on every
 * rank of the group, at most max_tokens_per_rank), its real tokens (the sum
 * of its token ranges) and the cost of its micro-batch on each rank of the
 * group; all 0 for a placeholder.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if any pointer is NULL.
 * Errors: as brs_plan_cp_micro_batch. Thread-safety: as brs_plan_get_int.
 */
BRS_API brs_status brs_plan_cp_micro_batch_stats(uint64_t *padded_tokens, uint64_t *real_tokens,
                                                 double *cost, const brs_plan *plan,
                                                 uint64_t global_rank, uint64_t micro);

/**
 * The token ranges of its micro-batch's sequences that global rank
 * `global_rank` computes at micro-step `micro` (since 1.6), as triples:
 * ranges[3i] the dataset index, ranges[3i + 1] the first token, ranges[3i + 2]
 * one past the last, for i < capacity; *count the number of triples. A
 * sequence of length L on a group of degree c is cut into 2c chunks as even
 * as possible (the first L mod 2c one token longer); the group's i-th rank
 * gets chunks i and 2c - 1 - i (the causal-balanced head-tail split), as one
 * range where they touch; empty ranges are left out. Over the ranks of the
 * group the ranges cover each sequence's [0, L) exactly once, in the order
 * of brs_plan_cp_micro_batch's indices. BRS_ERR_OUT_OF_RANGE when *count >
 * capacity (call again with room: at most 2 x the micro-batch's count);
 * ranges NULL with capacity 0 asks for the count only and returns BRS_OK.
 * Other errors: as brs_plan_cp_micro_batch.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if count or plan is NULL, or
 * ranges is NULL with capacity > 0. Thread-safety: as brs_plan_get_int.
 */
BRS_API brs_status brs_plan_cp_token_ranges(uint64_t *ranges, size_t *count, const brs_plan *plan,
                                            uint64_t global_rank, uint64_t micro,
                                            size_t capacity);

/**
 * The detail message of the latest failed call on this plan, read-only
 * calls included; "" if none failed since the last successful compute or
 * load. Ownership: owned by the plan, valid until the next call on it.
 * NULL: returns a static message saying the handle is NULL.
 * Thread-safety: concurrently with calls on this plan that cannot fail;
 * a failing call rewrites the message.
 */
BRS_API const char *brs_plan_last_error(const brs_plan *plan);

/* ------------------------------------------------------------------------ */
/* Files: the readers of the two formats of docs/formats.md (since 1.5).     */
/* Every binding and the brs command read a lengths file and a cost-model   */
/* file through these, so that one set of rules accepts and refuses them.   */
/* Messages name the file as the caller names it, then the line or the key: */
/* "data.lengths line 3: '1.5' is not a positive integer: ...".             */
/* ------------------------------------------------------------------------ */

/** A lengths file: one sample per line, its token count, then optionally
 *  the encoder loads (patch counts) of its images, comma-separated. */
typedef struct brs_lengths_file brs_lengths_file;

/**
 * Create a lengths-file reader holding no file (since 1.5).
 * On failure *out is set to NULL.
 * Ownership: the caller owns *out and frees it with brs_lengths_file_free.
 * NULL: BRS_ERR_NULL_POINTER if out is NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_lengths_file_new(brs_lengths_file **out);

/**
 * Free a lengths-file reader and the arrays it handed out (since 1.5).
 * Ownership: takes the handle. NULL: a no-op. Thread-safety: any thread,
 * once no other call on this handle is running.
 */
BRS_API void brs_lengths_file_free(brs_lengths_file *file);

/**
 * Read a whole lengths file, bytes[0..size), named `name` in messages (a
 * path, "standard input"; non-printable bytes are escaped): the same as
 * brs_lengths_file_begin, one brs_lengths_file_feed, brs_lengths_file_finish
 * (since 1.5). Returns BRS_OK, or the status of the first problem met with
 * the message naming the file and the line: BRS_ERR_INVALID_ARGUMENT for a
 * file that breaks the format, BRS_ERR_TOO_LARGE past 2^28 lines,
 * BRS_ERR_NO_MEMORY. A refused file leaves the reader holding no file.
 * Ownership: bytes and name are read during the call only.
 * NULL: BRS_ERR_NULL_POINTER if file or name is NULL, or bytes is NULL with
 * size > 0. Thread-safety: not concurrently with any other call on this
 * reader.
 */
BRS_API brs_status brs_lengths_file_parse(brs_lengths_file *file, const char *bytes, size_t size,
                                          const char *name);

/**
 * Start reading a lengths file in pieces (since 1.5), named `name` in
 * messages: a file of any size is read chunk by chunk with memory bounded
 * by its values, and a wrong one (a binary, /dev/zero) stops at its first
 * line. Forgets the file read before: the arrays it handed out are freed.
 * Ownership: name is copied. NULL: BRS_ERR_NULL_POINTER if file or name is
 * NULL. Thread-safety: not concurrently with any other call on this reader.
 */
BRS_API brs_status brs_lengths_file_begin(brs_lengths_file *file, const char *name);

/**
 * Take the next bytes[0..size) of the file begun (since 1.5): chunks may
 * cut a line, a line end or a number anywhere. Returns BRS_OK while the
 * file reads well; after the first problem, its status (the errors of
 * brs_lengths_file_parse) on this and every later feed, so the caller may
 * stop feeding. BRS_ERR_STATE when no read was begun.
 * Ownership: bytes is read during the call only. NULL: BRS_ERR_NULL_POINTER
 * if file is NULL, or bytes is NULL with size > 0.
 * Thread-safety: not concurrently with any other call on this reader.
 */
BRS_API brs_status brs_lengths_file_feed(brs_lengths_file *file, const char *bytes, size_t size);

/**
 * End the file begun (since 1.5): its last line needs no line end; a file
 * without lines is refused. Returns BRS_OK, or the status of the first
 * problem (also one a feed met); BRS_ERR_STATE when no read was begun.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if file is NULL.
 * Thread-safety: not concurrently with any other call on this reader.
 */
BRS_API brs_status brs_lengths_file_finish(brs_lengths_file *file);

/**
 * The lengths of the file read (since 1.5): *lengths points at *count
 * (>= 1) values, lengths[i] the token count of line i + 1.
 * BRS_ERR_STATE when no file was read and accepted.
 * Ownership: the array belongs to the reader; valid until the next parse or
 * begin on it, or its free. NULL: BRS_ERR_NULL_POINTER if lengths, count or
 * file is NULL. Thread-safety: concurrently with other read-only calls on
 * this reader (a failure writes its message; failures at once are serialised).
 */
BRS_API brs_status brs_lengths_file_lengths(const uint32_t **lengths, size_t *count,
                                            const brs_lengths_file *file);

/**
 * The images of the file read (since 1.5): sample i's images have the
 * encoder loads patches[offsets[i] .. offsets[i + 1]), in the order the
 * line gives them; offsets has count + 1 entries (count from
 * brs_lengths_file_lengths), offsets[0] is 0 and offsets[count] the number
 * of images. A line without a second field, or with a lone 0, has none;
 * when no line has an image every offset is 0 (patches then points at no
 * value, never NULL). BRS_ERR_STATE when no file was read and accepted.
 * Ownership: the arrays belong to the reader, as brs_lengths_file_lengths.
 * NULL: BRS_ERR_NULL_POINTER if patches, offsets or file is NULL.
 * Thread-safety: as brs_lengths_file_lengths.
 */
BRS_API brs_status brs_lengths_file_images(const uint32_t **patches, const uint64_t **offsets,
                                           const brs_lengths_file *file);

/**
 * The detail message of the latest failed call on this reader ("" if none
 * failed since the latest begin or parse): for a refused file, the name
 * given, the line and what to write instead (since 1.5).
 * Ownership: owned by the reader, valid until the next call on it.
 * NULL: returns a static message saying the handle is NULL.
 * Thread-safety: concurrently with calls on this reader that cannot fail;
 * a failing call rewrites the message.
 */
BRS_API const char *brs_lengths_file_last_error(const brs_lengths_file *file);

/** The largest cost-model file, in bytes: a real one is a few kB, so a wrong
 *  path (a dataset, /dev/zero) is refused without being read whole. A caller
 *  reads at most one byte more and passes what it got (since 1.5). */
#define BRS_COST_MODEL_FILE_MAX_BYTES 16777216

/** A cost-model file: the JSON object brs.calibrate and CostModel.save write
 *  ("format": "brs-cost-model", "version": 1, alpha, intercept, ...). */
typedef struct brs_cost_model_file brs_cost_model_file;

/**
 * Create a cost-model-file reader holding no file (since 1.5).
 * On failure *out is set to NULL.
 * Ownership: the caller owns *out and frees it with brs_cost_model_file_free.
 * NULL: BRS_ERR_NULL_POINTER if out is NULL. Thread-safety: any thread.
 */
BRS_API brs_status brs_cost_model_file_new(brs_cost_model_file **out);

/**
 * Free a cost-model-file reader and the text it handed out (since 1.5).
 * Ownership: takes the handle. NULL: a no-op. Thread-safety: any thread,
 * once no other call on this handle is running.
 */
BRS_API void brs_cost_model_file_free(brs_cost_model_file *file);

/**
 * Read a cost-model file, bytes[0..size), named `name` in messages (since
 * 1.5): its JSON and every key of docs/formats.md, in that page's order.
 * Returns BRS_OK, or the status of the first problem with the message
 * "<name>: key \"alpha\" is ..." or "<name>: not a valid JSON cost-model
 * file at byte N: ...": BRS_ERR_INVALID_ARGUMENT for a file that breaks the
 * format, BRS_ERR_TOO_LARGE above BRS_COST_MODEL_FILE_MAX_BYTES,
 * BRS_ERR_NO_MEMORY. A refused file leaves the reader holding no file.
 * Ownership: bytes are copied (the values handed out point into the copy);
 * name is read during the call only. NULL: BRS_ERR_NULL_POINTER if file or
 * name is NULL, or bytes is NULL with size > 0.
 * Thread-safety: not concurrently with any other call on this reader.
 */
BRS_API brs_status brs_cost_model_file_parse(brs_cost_model_file *file, const char *bytes,
                                             size_t size, const char *name);

/**
 * Whether key `key` of the file read holds a value: *present is 1, or 0
 * when it is absent or null, which mean the same for every optional key
 * (alpha, intercept, format and version are always present) (since 1.5).
 * Keys: "format", "version", "alpha", "intercept", "max_tokens",
 * "seconds_per_unit", "first_shape_seconds", "r2", "worst_residual",
 * "source", "model", "device", "memory", "timing", "timings"; another name
 * is BRS_ERR_UNSUPPORTED. BRS_ERR_STATE when no file was read and accepted.
 * Ownership: key is read during the call only. NULL: BRS_ERR_NULL_POINTER if
 * present, file or key is NULL. Thread-safety: concurrently with other
 * read-only calls on this reader (a failure writes its message; failures at
 * once are serialised).
 */
BRS_API brs_status brs_cost_model_file_has(int32_t *present, const brs_cost_model_file *file,
                                           const char *key);

/**
 * The value of a number key of the file read, as checked (since 1.5):
 * "alpha", "intercept" (finite, >= 0, -0 read as 0), "seconds_per_unit"
 * (> 0), "first_shape_seconds" (>= 0), "r2", "worst_residual" (finite).
 * BRS_ERR_STATE when the key is absent or null (brs_cost_model_file_has
 * tells) or no file was read; BRS_ERR_UNSUPPORTED for another key.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if value, file or key is NULL.
 * Thread-safety: as brs_cost_model_file_has.
 */
BRS_API brs_status brs_cost_model_file_get_double(double *value, const brs_cost_model_file *file,
                                                  const char *key);

/**
 * The value of an integer key of the file read (since 1.5): "max_tokens"
 * (>= 1; absent or null means no cap) and "version" (1). Errors as
 * brs_cost_model_file_get_double.
 * Ownership: none. NULL: BRS_ERR_NULL_POINTER if value, file or key is NULL.
 * Thread-safety: as brs_cost_model_file_has.
 */
BRS_API brs_status brs_cost_model_file_get_int(int64_t *value, const brs_cost_model_file *file,
                                               const char *key);

/**
 * The JSON text of any key's value as the file writes it (since 1.5): a
 * string with its quotes and escapes ("source", "model", "device"), an
 * object ("memory", "timing"), an array ("timings"), a number's digits.
 * The library has checked it (RFC 8259, UTF-8, the limits of
 * docs/formats.md); what a record's object holds is the caller's to decode.
 * *text is not NUL-terminated: *length bytes. Errors as
 * brs_cost_model_file_get_double, for any key of brs_cost_model_file_has.
 * Ownership: the text belongs to the reader; valid until the next parse on
 * it or its free. NULL: BRS_ERR_NULL_POINTER if text, length, file or key is
 * NULL. Thread-safety: as brs_cost_model_file_has.
 */
BRS_API brs_status brs_cost_model_file_get_json(const char **text, size_t *length,
                                                const brs_cost_model_file *file,
                                                const char *key);

/**
 * The detail message of the latest failed call on this reader ("" if none
 * failed since the latest parse): for a refused file, the name given and
 * the key or the JSON problem (since 1.5).
 * Ownership: owned by the reader, valid until the next call on it.
 * NULL: returns a static message saying the handle is NULL.
 * Thread-safety: concurrently with calls on this reader that cannot fail;
 * a failing call rewrites the message.
 */
BRS_API const char *brs_cost_model_file_last_error(const brs_cost_model_file *file);

#ifdef __cplusplus
}
#endif

#endif /* BRS_H */
