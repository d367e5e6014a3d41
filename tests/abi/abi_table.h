/*
 * abi_table.h - every function of brs.h as data, for the libffi conformance test.
 *
 * One X-macro line per exported function:
 *     X(name, return type, arity, (argument types))
 * Types are tokens of a small vocabulary; each token T names its C type
 * (ABI_C_T) and its libffi type (ABI_FFI_T) side by side, so a table line
 * yields both the header's function-pointer type (checked at compile time
 * with _Generic) and the ffi_cif used to call the symbol from the .so.
 * One table per version node of libbrs.sym, lines in the order of brs.h.
 * Adding a function to the ABI means adding its line to the table of its
 * node (the test compares these tables with libbrs.sym).
 */
#ifndef BRS_ABI_TABLE_H
#define BRS_ABI_TABLE_H

#include <ffi.h>

#include "brs.h"

#define BRS_ABI_TABLE_1_0(X)                                                            \
    X(brs_version_number,          U32,    0, ())                                       \
    X(brs_version_string,          CSTR,   0, ())                                       \
    X(brs_strerror,                CSTR,   1, (STATUS))                                 \
    X(brs_option_bounds_int,       STATUS, 3, (I64_P, I64_P, OPTION))                   \
    X(brs_option_bounds_double,    STATUS, 3, (DOUBLE_P, DOUBLE_P, OPTION))             \
    X(brs_sampler_new,             STATUS, 1, (SAMPLER_PP))                             \
    X(brs_sampler_free,            VOID,   1, (SAMPLER_P))                              \
    X(brs_sampler_set_lengths,     STATUS, 4, (SAMPLER_P, U32_CP, SIZE, I32))           \
    X(brs_sampler_set_int,         STATUS, 3, (SAMPLER_P, OPTION, I64))                 \
    X(brs_sampler_set_double,      STATUS, 3, (SAMPLER_P, OPTION, DOUBLE))              \
    X(brs_sampler_get_int,         STATUS, 3, (I64_P, SAMPLER_CP, OPTION))              \
    X(brs_sampler_get_double,      STATUS, 3, (DOUBLE_P, SAMPLER_CP, OPTION))           \
    X(brs_sampler_validate,        STATUS, 1, (SAMPLER_P))                              \
    X(brs_sampler_steps_per_epoch, STATUS, 2, (U64_P, SAMPLER_P))                       \
    X(brs_sampler_fingerprint,     STATUS, 2, (U64_P, SAMPLER_CP))                      \
    X(brs_sampler_last_error,      CSTR,   1, (SAMPLER_CP))                             \
    X(brs_plan_new,                STATUS, 1, (PLAN_PP))                                \
    X(brs_plan_free,               VOID,   1, (PLAN_P))                                 \
    X(brs_plan_compute,            STATUS, 4, (PLAN_P, SAMPLER_CP, U64, U64))           \
    X(brs_plan_get_int,            STATUS, 3, (I64_P, PLAN_CP, PLAN_KEY))               \
    X(brs_plan_get_double,         STATUS, 3, (DOUBLE_P, PLAN_CP, PLAN_KEY))            \
    X(brs_plan_micro_batch,        STATUS, 5, (U64_CPP, SIZE_P, PLAN_CP, I64, I64))     \
    X(brs_plan_micro_batch_stats,  STATUS, 6,                                           \
      (U64_P, U64_P, DOUBLE_P, PLAN_CP, I64, I64))                                      \
    X(brs_plan_last_error,         CSTR,   1, (PLAN_CP))

/* LIBBRS_1.1: the option table queries and brs_plan_load. */
#define BRS_ABI_TABLE_1_1(X)                                                            \
    X(brs_option_count,            STATUS, 1, (SIZE_P))                                 \
    X(brs_option_key,              STATUS, 2, (OPTION_P, SIZE))                         \
    X(brs_option_find,             STATUS, 2, (OPTION_P, CSTR_IN))                      \
    X(brs_option_name,             STATUS, 2, (CSTR_P, OPTION))                         \
    X(brs_option_type,             STATUS, 2, (I32_P, OPTION))                          \
    X(brs_option_default_int,      STATUS, 2, (I64_P, OPTION))                          \
    X(brs_option_default_double,   STATUS, 2, (DOUBLE_P, OPTION))                       \
    X(brs_option_help,             STATUS, 2, (CSTR_P, OPTION))                         \
    X(brs_option_value_name,       STATUS, 3, (CSTR_P, OPTION, I64))                    \
    X(brs_plan_load,               STATUS, 7,                                           \
      (PLAN_P, SAMPLER_CP, U64_CP, U64_CP, SIZE, U64, U64))

#define BRS_ABI_TABLE_1_2(X)                                                            \
    X(brs_sampler_check_epoch,     STATUS, 4, (U64_P, U64_P, SAMPLER_CP, U64))           \
    X(brs_plan_compute_batch,      STATUS, 4, (PLAN_P, SAMPLER_CP, U32_CP, SIZE))

#define BRS_ABI_TABLE_1_3(X)                                                            \
    X(brs_sampler_stream_fingerprint, STATUS, 2, (U64_P, SAMPLER_CP))

/* LIBBRS_1.4: length buckets, the default ladder and the epoch's shapes. */
#define BRS_ABI_TABLE_1_4(X)                                                            \
    X(brs_sampler_set_length_buckets, STATUS, 3, (SAMPLER_P, U32_CP, SIZE))             \
    X(brs_sampler_get_length_buckets, STATUS, 3, (U32_CPP, SIZE_P, SAMPLER_CP))         \
    X(brs_sampler_bucket_ladder,   STATUS, 5, (U32_P, SIZE_P, SAMPLER_CP, U32, SIZE))   \
    X(brs_sampler_shapes,          STATUS, 5, (U64_P, SIZE_P, SAMPLER_CP, U64, SIZE))

/* LIBBRS_1.5: the encoder loads of vision-language samples; the readers of the lengths
 * file and the cost-model file. */
#define BRS_ABI_TABLE_1_5(X)                                                            \
    X(brs_sampler_set_encoder_loads, STATUS, 4, (SAMPLER_P, U32_CP, U64_CP, SIZE))      \
    X(brs_sampler_encoder_load,    STATUS, 4, (U64_P, U64_P, SAMPLER_CP, U64))          \
    X(brs_plan_micro_batch_encoder, STATUS, 6,                                          \
      (U64_P, U64_P, DOUBLE_P, PLAN_CP, I64, I64))                                      \
    X(brs_plan_compute_batch_images, STATUS, 6,                                         \
      (PLAN_P, SAMPLER_CP, U32_CP, U32_CP, U64_CP, SIZE))                               \
    X(brs_lengths_file_new,        STATUS, 1, (LENGTHS_FILE_PP))                        \
    X(brs_lengths_file_free,       VOID,   1, (LENGTHS_FILE_P))                         \
    X(brs_lengths_file_parse,      STATUS, 4, (LENGTHS_FILE_P, CSTR_IN, SIZE, CSTR_IN)) \
    X(brs_lengths_file_begin,      STATUS, 2, (LENGTHS_FILE_P, CSTR_IN))                \
    X(brs_lengths_file_feed,       STATUS, 3, (LENGTHS_FILE_P, CSTR_IN, SIZE))          \
    X(brs_lengths_file_finish,     STATUS, 1, (LENGTHS_FILE_P))                         \
    X(brs_lengths_file_lengths,    STATUS, 3, (U32_CPP, SIZE_P, LENGTHS_FILE_CP))       \
    X(brs_lengths_file_images,     STATUS, 3, (U32_CPP, U64_CPP, LENGTHS_FILE_CP))      \
    X(brs_lengths_file_last_error, CSTR,   1, (LENGTHS_FILE_CP))                        \
    X(brs_cost_model_file_new,     STATUS, 1, (COST_MODEL_FILE_PP))                     \
    X(brs_cost_model_file_free,    VOID,   1, (COST_MODEL_FILE_P))                      \
    X(brs_cost_model_file_parse,   STATUS, 4,                                           \
      (COST_MODEL_FILE_P, CSTR_IN, SIZE, CSTR_IN))                                      \
    X(brs_cost_model_file_has,     STATUS, 3, (I32_P, COST_MODEL_FILE_CP, CSTR_IN))     \
    X(brs_cost_model_file_get_double, STATUS, 3,                                        \
      (DOUBLE_P, COST_MODEL_FILE_CP, CSTR_IN))                                          \
    X(brs_cost_model_file_get_int, STATUS, 3, (I64_P, COST_MODEL_FILE_CP, CSTR_IN))     \
    X(brs_cost_model_file_get_json, STATUS, 4,                                          \
      (CSTR_P, SIZE_P, COST_MODEL_FILE_CP, CSTR_IN))                                    \
    X(brs_cost_model_file_last_error, CSTR, 1, (COST_MODEL_FILE_CP))

/* LIBBRS_1.6: the option table's value names, keywords and scopes; the shape vocabulary;
 * context parallelism's plan queries. */
#define BRS_ABI_TABLE_1_6(X)                                                            \
    X(brs_option_value_find,       STATUS, 3, (I64_P, OPTION, CSTR_IN))                 \
    X(brs_option_keyword,          STATUS, 2, (CSTR_P, OPTION))                         \
    X(brs_option_scope,            STATUS, 2, (I32_P, OPTION))                          \
    X(brs_sampler_shape_vocabulary, STATUS, 4, (U64_P, SIZE_P, SAMPLER_CP, SIZE))       \
    X(brs_plan_cp_micro_steps,     STATUS, 2, (U64_P, PLAN_CP))                         \
    X(brs_plan_cp_micro_batch,     STATUS, 7,                                           \
      (U64_CPP, SIZE_P, U64_P, U64_P, PLAN_CP, U64, U64))                               \
    X(brs_plan_cp_micro_batch_stats, STATUS, 6,                                         \
      (U64_P, U64_P, DOUBLE_P, PLAN_CP, U64, U64))                                      \
    X(brs_plan_cp_token_ranges,    STATUS, 6, (U64_P, SIZE_P, PLAN_CP, U64, U64, SIZE))

/* Every function, node by node. */
#define BRS_ABI_TABLE(X)                                                                \
    BRS_ABI_TABLE_1_0(X) BRS_ABI_TABLE_1_1(X) BRS_ABI_TABLE_1_2(X) BRS_ABI_TABLE_1_3(X) \
    BRS_ABI_TABLE_1_4(X) BRS_ABI_TABLE_1_5(X) BRS_ABI_TABLE_1_6(X)

/*
 * The type vocabulary. ABI_PTR_T is 1 for pointer types: the NULL-handle
 * pass of the test puts NULL there. Scalars: ABI_PTR_T is 0.
 */
#define ABI_C_VOID void
#define ABI_FFI_VOID ffi_type_void
#define ABI_PTR_VOID 0
#define ABI_C_U32 uint32_t
#define ABI_FFI_U32 ffi_type_uint32
#define ABI_PTR_U32 0
#define ABI_C_I32 int32_t
#define ABI_FFI_I32 ffi_type_sint32
#define ABI_PTR_I32 0
#define ABI_C_STATUS brs_status
#define ABI_FFI_STATUS ffi_type_sint32
#define ABI_PTR_STATUS 0
#define ABI_C_OPTION brs_option
#define ABI_FFI_OPTION ffi_type_sint32
#define ABI_PTR_OPTION 0
#define ABI_C_PLAN_KEY brs_plan_key
#define ABI_FFI_PLAN_KEY ffi_type_sint32
#define ABI_PTR_PLAN_KEY 0
#define ABI_C_I64 int64_t
#define ABI_FFI_I64 ffi_type_sint64
#define ABI_PTR_I64 0
#define ABI_C_U64 uint64_t
#define ABI_FFI_U64 ffi_type_uint64
#define ABI_PTR_U64 0
#define ABI_C_SIZE size_t
#define ABI_FFI_SIZE ABI_FFI_SIZE_T
#define ABI_PTR_SIZE 0
#define ABI_C_DOUBLE double
#define ABI_FFI_DOUBLE ffi_type_double
#define ABI_PTR_DOUBLE 0
#define ABI_C_CSTR const char *
#define ABI_FFI_CSTR ffi_type_pointer
#define ABI_PTR_CSTR 1
#define ABI_C_SAMPLER_PP brs_sampler **
#define ABI_FFI_SAMPLER_PP ffi_type_pointer
#define ABI_PTR_SAMPLER_PP 1
#define ABI_C_SAMPLER_P brs_sampler *
#define ABI_FFI_SAMPLER_P ffi_type_pointer
#define ABI_PTR_SAMPLER_P 1
#define ABI_C_SAMPLER_CP const brs_sampler *
#define ABI_FFI_SAMPLER_CP ffi_type_pointer
#define ABI_PTR_SAMPLER_CP 1
#define ABI_C_PLAN_PP brs_plan **
#define ABI_FFI_PLAN_PP ffi_type_pointer
#define ABI_PTR_PLAN_PP 1
#define ABI_C_PLAN_P brs_plan *
#define ABI_FFI_PLAN_P ffi_type_pointer
#define ABI_PTR_PLAN_P 1
#define ABI_C_PLAN_CP const brs_plan *
#define ABI_FFI_PLAN_CP ffi_type_pointer
#define ABI_PTR_PLAN_CP 1
#define ABI_C_LENGTHS_FILE_PP brs_lengths_file **
#define ABI_FFI_LENGTHS_FILE_PP ffi_type_pointer
#define ABI_PTR_LENGTHS_FILE_PP 1
#define ABI_C_LENGTHS_FILE_P brs_lengths_file *
#define ABI_FFI_LENGTHS_FILE_P ffi_type_pointer
#define ABI_PTR_LENGTHS_FILE_P 1
#define ABI_C_LENGTHS_FILE_CP const brs_lengths_file *
#define ABI_FFI_LENGTHS_FILE_CP ffi_type_pointer
#define ABI_PTR_LENGTHS_FILE_CP 1
#define ABI_C_COST_MODEL_FILE_PP brs_cost_model_file **
#define ABI_FFI_COST_MODEL_FILE_PP ffi_type_pointer
#define ABI_PTR_COST_MODEL_FILE_PP 1
#define ABI_C_COST_MODEL_FILE_P brs_cost_model_file *
#define ABI_FFI_COST_MODEL_FILE_P ffi_type_pointer
#define ABI_PTR_COST_MODEL_FILE_P 1
#define ABI_C_COST_MODEL_FILE_CP const brs_cost_model_file *
#define ABI_FFI_COST_MODEL_FILE_CP ffi_type_pointer
#define ABI_PTR_COST_MODEL_FILE_CP 1
#define ABI_C_U32_CP const uint32_t *
#define ABI_FFI_U32_CP ffi_type_pointer
#define ABI_PTR_U32_CP 1
#define ABI_C_U32_P uint32_t *
#define ABI_FFI_U32_P ffi_type_pointer
#define ABI_PTR_U32_P 1
#define ABI_C_U32_CPP const uint32_t **
#define ABI_FFI_U32_CPP ffi_type_pointer
#define ABI_PTR_U32_CPP 1
#define ABI_C_I64_P int64_t *
#define ABI_FFI_I64_P ffi_type_pointer
#define ABI_PTR_I64_P 1
#define ABI_C_U64_P uint64_t *
#define ABI_FFI_U64_P ffi_type_pointer
#define ABI_PTR_U64_P 1
#define ABI_C_DOUBLE_P double *
#define ABI_FFI_DOUBLE_P ffi_type_pointer
#define ABI_PTR_DOUBLE_P 1
#define ABI_C_SIZE_P size_t *
#define ABI_FFI_SIZE_P ffi_type_pointer
#define ABI_PTR_SIZE_P 1
#define ABI_C_OPTION_P brs_option *
#define ABI_FFI_OPTION_P ffi_type_pointer
#define ABI_PTR_OPTION_P 1
#define ABI_C_I32_P int32_t *
#define ABI_FFI_I32_P ffi_type_pointer
#define ABI_PTR_I32_P 1
#define ABI_C_CSTR_P const char **
#define ABI_FFI_CSTR_P ffi_type_pointer
#define ABI_PTR_CSTR_P 1
#define ABI_C_CSTR_IN const char *
#define ABI_FFI_CSTR_IN ffi_type_pointer
#define ABI_PTR_CSTR_IN 1
#define ABI_C_U64_CP const uint64_t *
#define ABI_FFI_U64_CP ffi_type_pointer
#define ABI_PTR_U64_CP 1
#define ABI_C_U64_CPP const uint64_t **
#define ABI_FFI_U64_CPP ffi_type_pointer
#define ABI_PTR_U64_CPP 1

/* size_t has no ffi_type of its own: pick the unsigned type of its width. */
#if SIZE_MAX == UINT64_MAX
#define ABI_FFI_SIZE_T ffi_type_uint64
#elif SIZE_MAX == UINT32_MAX
#define ABI_FFI_SIZE_T ffi_type_uint32
#else
#error "unsupported size_t width"
#endif

/*
 * ABI_MAP(n, M, E, (a, b, ...)) expands to "M(a), M(b), ..." for the n
 * arguments of a table line, or to E when n is 0 (e.g. "void" in a
 * parameter list). ABI_CALL expands the unparenthesised list before the
 * ABI_MAP_n macro counts its arguments.
 */
#define ABI_MAP(n, M, E, args) ABI_CALL(ABI_MAP_##n, M, E, ABI_UNPAREN args)
#define ABI_CALL(f, ...) f(__VA_ARGS__)
#define ABI_UNPAREN(...) __VA_ARGS__
#define ABI_MAP_0(M, E, unused) E
#define ABI_MAP_1(M, E, a) M(a)
#define ABI_MAP_2(M, E, a, b) M(a), M(b)
#define ABI_MAP_3(M, E, a, b, c) M(a), M(b), M(c)
#define ABI_MAP_4(M, E, a, b, c, d) M(a), M(b), M(c), M(d)
#define ABI_MAP_5(M, E, a, b, c, d, e) M(a), M(b), M(c), M(d), M(e)
#define ABI_MAP_6(M, E, a, b, c, d, e, f) M(a), M(b), M(c), M(d), M(e), M(f)
#define ABI_MAP_7(M, E, a, b, c, d, e, f, g) M(a), M(b), M(c), M(d), M(e), M(f), M(g)

/* The C type, the address of the ffi_type, and the pointer flag of a token. */
#define ABI_CTYPE(T) ABI_C_##T
#define ABI_FFI(T) &ABI_FFI_##T
#define ABI_IS_PTR(T) ABI_PTR_##T

/* The header's function-pointer type of a table line. */
#define ABI_FN_TYPE(ret, n, args) ABI_C_##ret (*)(ABI_MAP(n, ABI_CTYPE, void, args))

#endif /* BRS_ABI_TABLE_H */
