# The raw C API of brs.h: constants and one Julia function per C function,
# each a single ccall with the header's exact types (checked against brs.h by
# bindings/julia/check_ccalls.py). Handles are Ptr{Cvoid}; nothing here owns
# memory or raises: sampler.jl and errors.jl build the Julia API on top.

using Libdl

const BRS_MAJOR = 1  # the major version these bindings were written for

# Status codes (brs_status); values never change.
const BRS_OK = Int32(0)
const BRS_ERR_NULL_POINTER = Int32(-1)
const BRS_ERR_INVALID_ARGUMENT = Int32(-2)
const BRS_ERR_UNSUPPORTED = Int32(-3)
const BRS_ERR_OUT_OF_RANGE = Int32(-4)
const BRS_ERR_NO_MEMORY = Int32(-5)
const BRS_ERR_STATE = Int32(-6)
const BRS_ERR_INVALID_LENGTH = Int32(-7)
const BRS_ERR_TOO_FEW_SAMPLES = Int32(-8)
const BRS_ERR_SAMPLE_TOO_LONG = Int32(-9)
const BRS_ERR_CAP_INFEASIBLE = Int32(-10)
const BRS_ERR_TOO_LARGE = Int32(-11)

# Option keys (brs_option).
const BRS_OPT_BATCH_SIZE = Int32(1)
const BRS_OPT_GRAD_ACCUM = Int32(2)
const BRS_OPT_DP_SIZE = Int32(3)
const BRS_OPT_RANK = Int32(4)
const BRS_OPT_SEED = Int32(5)
const BRS_OPT_SHUFFLE = Int32(6)
const BRS_OPT_DROP_LAST = Int32(7)
const BRS_OPT_MAX_TOKENS = Int32(8)
const BRS_OPT_PACKED = Int32(9)
const BRS_OPT_ALPHA = Int32(10)
const BRS_OPT_INTERCEPT = Int32(11)
const BRS_OPT_STRATEGY = Int32(12)
const BRS_OPT_SYNC = Int32(13)
const BRS_OPT_PAD_TO_MULTIPLE_OF = Int32(14)  # since 1.4
const BRS_OPT_ENCODER_ALPHA = Int32(15)       # since 1.5: images' cost, and their cap
const BRS_OPT_ENCODER_INTERCEPT = Int32(16)
const BRS_OPT_MAX_ENCODER_TOKENS = Int32(17)
const BRS_OPT_ENCODER_WEIGHT = Int32(18)  # since 1.5
const BRS_OPT_MAX_SHAPES = Int32(19)      # since 1.6: the shape vocabulary
const BRS_OPT_CP_SIZE = Int32(20)         # since 1.6: context parallelism
const BRS_OPT_MAX_TOKENS_PER_RANK = Int32(21)
const BRS_OPT_CP_COMM_COST = Int32(22)
const BRS_OPT_CP_DEGREES = Int32(23)
const BRS_OPT_MAX_SHAPES_SEARCH = Int32(24)
const BRS_OPT_CP_LATENCY = Int32(25)

# Values of BRS_OPT_STRATEGY and BRS_OPT_SYNC (names: brs_option_value_name).
const BRS_STRATEGY_BALANCED = Int64(0)
const BRS_STRATEGY_RANDOM = Int64(1)
const BRS_STRATEGY_LENGTH_GROUPED = Int64(2)
const BRS_SYNC_MICRO_STEP = Int64(0)
const BRS_SYNC_STEP = Int64(1)

# Option types (brs_option_type).
const BRS_OPTION_INT = Int32(0)
const BRS_OPTION_DOUBLE = Int32(1)

# Option scopes (brs_option_scope, since 1.6): who shares an option's value.
const BRS_OPTION_SCOPE_RANK = Int32(0)
const BRS_OPTION_SCOPE_SPLIT = Int32(1)
const BRS_OPTION_SCOPE_RUN = Int32(2)

# The largest cost-model file, in bytes (since 1.5).
const BRS_COST_MODEL_FILE_MAX_BYTES = 16777216

const BRS_LENGTHS_COPY = Int32(0)
const BRS_LENGTHS_BORROW = Int32(1)

# The most image patches of one sample (brs_sampler_set_encoder_loads, since 1.5).
const BRS_MAX_SAMPLE_PATCHES = UInt64(4294967295)

# Plan queries (brs_plan_key).
const BRS_PLAN_EPOCH = Int32(1)
const BRS_PLAN_STEP = Int32(2)
const BRS_PLAN_NUM_SAMPLES = Int32(3)
const BRS_PLAN_DP_SIZE = Int32(4)
const BRS_PLAN_GRAD_ACCUM = Int32(5)
const BRS_PLAN_TOTAL_PADDED_TOKENS = Int32(6)
const BRS_PLAN_TOTAL_REAL_TOKENS = Int32(7)
const BRS_PLAN_MAX_PADDED_TOKENS = Int32(8)
const BRS_PLAN_MEGABATCH_SIZE = Int32(9)
const BRS_PLAN_TOTAL_ENCODER_TOKENS = Int32(10)  # since 1.5
const BRS_PLAN_MAX_ENCODER_TOKENS = Int32(11)    # since 1.5
const BRS_PLAN_MAX_COST = Int32(20)
const BRS_PLAN_LOWER_BOUND = Int32(21)
const BRS_PLAN_TOTAL_COST = Int32(22)
const BRS_PLAN_MICRO_SYNC_TIME = Int32(23)
const BRS_PLAN_STEP_SYNC_TIME = Int32(24)
const BRS_PLAN_TIME_LOWER_BOUND = Int32(25)
const BRS_PLAN_ENCODER_COST = Int32(26)  # since 1.5
# since 1.6: the step time of the sync model and the ranks' time in it (brs.h)
const BRS_PLAN_STEP_TIME = Int32(27)
const BRS_PLAN_USEFUL_TIME = Int32(28)
const BRS_PLAN_PADDING_TIME = Int32(29)
const BRS_PLAN_WAITING_TIME = Int32(30)

const LIBRARY_PATH = Ref{String}("")

"""
    libbrs() -> String

The path of the libbrs shared library: `ENV["BRS_LIBRARY"]` when set, else
what `Libdl.find_library` finds; resolved once. Used as the library of every
ccall (a non-constant library specification, evaluated when first needed).
"""
function libbrs()
    if isempty(LIBRARY_PATH[])
        LIBRARY_PATH[] = locate_library()
    end
    return LIBRARY_PATH[]
end

function locate_library()
    path = get(ENV, "BRS_LIBRARY", "")
    if !isempty(path)
        isfile(path) || error("BRS_LIBRARY=$path: no such file (give the path of libbrs.so.1)")
        return path
    end
    found = Libdl.find_library(["libbrs", "libbrs.so.1"])
    isempty(found) && error("libbrs not found: tried ENV[\"BRS_LIBRARY\"] (unset) and " *
                            "Libdl.find_library(\"libbrs\"); set BRS_LIBRARY to the path of libbrs.so.1")
    return found
end

# --- versions, status names, option bounds --------------------------------

brs_version_number() = ccall((:brs_version_number, libbrs()), UInt32, ())

brs_version_string() = ccall((:brs_version_string, libbrs()), Ptr{UInt8}, ())

brs_strerror(status::Int32) = ccall((:brs_strerror, libbrs()), Ptr{UInt8}, (Int32,), status)

brs_option_bounds_int(lower::Ref{Int64}, upper::Ref{Int64}, key::Int32) =
    ccall((:brs_option_bounds_int, libbrs()), Int32, (Ref{Int64}, Ref{Int64}, Int32),
          lower, upper, key)

brs_option_bounds_double(lower::Ref{Float64}, upper::Ref{Float64}, key::Int32) =
    ccall((:brs_option_bounds_double, libbrs()), Int32, (Ref{Cdouble}, Ref{Cdouble}, Int32),
          lower, upper, key)

# --- the option table (LIBBRS_1.1) -----------------------------------------

brs_option_count(count::Ref{Csize_t}) =
    ccall((:brs_option_count, libbrs()), Int32, (Ref{Csize_t},), count)

brs_option_key(key::Ref{Int32}, index::Integer) =
    ccall((:brs_option_key, libbrs()), Int32, (Ref{Int32}, Csize_t), key, index)

brs_option_find(key::Ref{Int32}, name::AbstractString) =
    ccall((:brs_option_find, libbrs()), Int32, (Ref{Int32}, Cstring), key, name)

brs_option_name(name::Ref{Ptr{UInt8}}, key::Int32) =
    ccall((:brs_option_name, libbrs()), Int32, (Ref{Ptr{UInt8}}, Int32), name, key)

brs_option_type(type::Ref{Int32}, key::Int32) =
    ccall((:brs_option_type, libbrs()), Int32, (Ref{Int32}, Int32), type, key)

brs_option_default_int(value::Ref{Int64}, key::Int32) =
    ccall((:brs_option_default_int, libbrs()), Int32, (Ref{Int64}, Int32), value, key)

brs_option_default_double(value::Ref{Float64}, key::Int32) =
    ccall((:brs_option_default_double, libbrs()), Int32, (Ref{Cdouble}, Int32), value, key)

brs_option_help(text::Ref{Ptr{UInt8}}, key::Int32) =
    ccall((:brs_option_help, libbrs()), Int32, (Ref{Ptr{UInt8}}, Int32), text, key)

brs_option_value_name(name::Ref{Ptr{UInt8}}, key::Int32, value::Int64) =
    ccall((:brs_option_value_name, libbrs()), Int32, (Ref{Ptr{UInt8}}, Int32, Int64),
          name, key, value)

# LIBBRS_1.6: a value by its name, the keyword bindings use, who shares the value.
brs_option_value_find(value::Ref{Int64}, key::Int32, name::AbstractString) =
    ccall((:brs_option_value_find, libbrs()), Int32, (Ref{Int64}, Int32, Cstring),
          value, key, name)

brs_option_keyword(keyword::Ref{Ptr{UInt8}}, key::Int32) =
    ccall((:brs_option_keyword, libbrs()), Int32, (Ref{Ptr{UInt8}}, Int32), keyword, key)

brs_option_scope(scope::Ref{Int32}, key::Int32) =
    ccall((:brs_option_scope, libbrs()), Int32, (Ref{Int32}, Int32), scope, key)

# --- sampler ----------------------------------------------------------------

brs_sampler_new(out::Ref{Ptr{Cvoid}}) =
    ccall((:brs_sampler_new, libbrs()), Int32, (Ref{Ptr{Cvoid}},), out)

brs_sampler_free(sampler::Ptr{Cvoid}) =
    ccall((:brs_sampler_free, libbrs()), Cvoid, (Ptr{Cvoid},), sampler)

brs_sampler_set_lengths(sampler::Ptr{Cvoid}, lengths::Vector{UInt32}, n::Integer, mode::Int32) =
    ccall((:brs_sampler_set_lengths, libbrs()), Int32, (Ptr{Cvoid}, Ptr{UInt32}, Csize_t, Int32),
          sampler, lengths, n, mode)

brs_sampler_set_int(sampler::Ptr{Cvoid}, key::Int32, value::Int64) =
    ccall((:brs_sampler_set_int, libbrs()), Int32, (Ptr{Cvoid}, Int32, Int64), sampler, key, value)

brs_sampler_set_double(sampler::Ptr{Cvoid}, key::Int32, value::Float64) =
    ccall((:brs_sampler_set_double, libbrs()), Int32, (Ptr{Cvoid}, Int32, Cdouble),
          sampler, key, value)

brs_sampler_get_int(out::Ref{Int64}, sampler::Ptr{Cvoid}, key::Int32) =
    ccall((:brs_sampler_get_int, libbrs()), Int32, (Ref{Int64}, Ptr{Cvoid}, Int32), out, sampler, key)

brs_sampler_get_double(out::Ref{Float64}, sampler::Ptr{Cvoid}, key::Int32) =
    ccall((:brs_sampler_get_double, libbrs()), Int32, (Ref{Cdouble}, Ptr{Cvoid}, Int32),
          out, sampler, key)

brs_sampler_validate(sampler::Ptr{Cvoid}) =
    ccall((:brs_sampler_validate, libbrs()), Int32, (Ptr{Cvoid},), sampler)

brs_sampler_steps_per_epoch(out::Ref{UInt64}, sampler::Ptr{Cvoid}) =
    ccall((:brs_sampler_steps_per_epoch, libbrs()), Int32, (Ref{UInt64}, Ptr{Cvoid}), out, sampler)

brs_sampler_fingerprint(out::Ref{UInt64}, sampler::Ptr{Cvoid}) =
    ccall((:brs_sampler_fingerprint, libbrs()), Int32, (Ref{UInt64}, Ptr{Cvoid}), out, sampler)

# LIBBRS_1.2
brs_sampler_check_epoch(min_max_tokens::Ref{UInt64}, micro_batches::Ref{UInt64},
                        sampler::Ptr{Cvoid}, epoch::UInt64) =
    ccall((:brs_sampler_check_epoch, libbrs()), Int32,
          (Ref{UInt64}, Ref{UInt64}, Ptr{Cvoid}, UInt64), min_max_tokens, micro_batches, sampler,
          epoch)

# LIBBRS_1.3
brs_sampler_stream_fingerprint(out::Ref{UInt64}, sampler::Ptr{Cvoid}) =
    ccall((:brs_sampler_stream_fingerprint, libbrs()), Int32, (Ref{UInt64}, Ptr{Cvoid}), out,
          sampler)

# LIBBRS_1.4: length buckets, the default ladder, the epoch's shapes. An
# output array may be C_NULL with capacity 0 (a count-only call).
brs_sampler_set_length_buckets(sampler::Ptr{Cvoid}, buckets::Vector{UInt32}, n::Integer) =
    ccall((:brs_sampler_set_length_buckets, libbrs()), Int32, (Ptr{Cvoid}, Ptr{UInt32}, Csize_t),
          sampler, buckets, n)

brs_sampler_get_length_buckets(buckets::Ref{Ptr{UInt32}}, count::Ref{Csize_t},
                               sampler::Ptr{Cvoid}) =
    ccall((:brs_sampler_get_length_buckets, libbrs()), Int32,
          (Ref{Ptr{UInt32}}, Ref{Csize_t}, Ptr{Cvoid}), buckets, count, sampler)

brs_sampler_bucket_ladder(buckets::Union{Vector{UInt32},Ptr{Cvoid}}, count::Ref{Csize_t},
                          sampler::Ptr{Cvoid}, steps_per_doubling::UInt32, capacity::Integer) =
    ccall((:brs_sampler_bucket_ladder, libbrs()), Int32,
          (Ptr{UInt32}, Ref{Csize_t}, Ptr{Cvoid}, UInt32, Csize_t), buckets, count, sampler,
          steps_per_doubling, capacity)

brs_sampler_shapes(shapes::Union{Vector{UInt64},Ptr{Cvoid}}, count::Ref{Csize_t},
                   sampler::Ptr{Cvoid}, epoch::UInt64, capacity::Integer) =
    ccall((:brs_sampler_shapes, libbrs()), Int32,
          (Ptr{UInt64}, Ref{Csize_t}, Ptr{Cvoid}, UInt64, Csize_t), shapes, count, sampler, epoch,
          capacity)

# LIBBRS_1.6: the run's shape vocabulary (max_shapes > 0).
brs_sampler_shape_vocabulary(shapes::Union{Vector{UInt64},Ptr{Cvoid}}, count::Ref{Csize_t},
                             sampler::Ptr{Cvoid}, capacity::Integer) =
    ccall((:brs_sampler_shape_vocabulary, libbrs()), Int32,
          (Ptr{UInt64}, Ref{Csize_t}, Ptr{Cvoid}, Csize_t), shapes, count, sampler, capacity)

# LIBBRS_1.5: encoder loads, sample i's image patch counts being
# image_patches[offsets[i] .. offsets[i+1]) (0-based); n = 0 with C_NULLs clears them.
brs_sampler_set_encoder_loads(sampler::Ptr{Cvoid}, image_patches::Union{Vector{UInt32},Ptr{Cvoid}},
                              image_offsets::Union{Vector{UInt64},Ptr{Cvoid}}, n::Integer) =
    ccall((:brs_sampler_set_encoder_loads, libbrs()), Int32,
          (Ptr{Cvoid}, Ptr{UInt32}, Ptr{UInt64}, Csize_t), sampler, image_patches, image_offsets, n)

brs_sampler_encoder_load(images::Ref{UInt64}, patches::Ref{UInt64}, sampler::Ptr{Cvoid},
                         index::UInt64) =
    ccall((:brs_sampler_encoder_load, libbrs()), Int32,
          (Ref{UInt64}, Ref{UInt64}, Ptr{Cvoid}, UInt64), images, patches, sampler, index)

brs_sampler_last_error(sampler::Ptr{Cvoid}) =
    ccall((:brs_sampler_last_error, libbrs()), Ptr{UInt8}, (Ptr{Cvoid},), sampler)

# --- plan -------------------------------------------------------------------

brs_plan_new(out::Ref{Ptr{Cvoid}}) = ccall((:brs_plan_new, libbrs()), Int32, (Ref{Ptr{Cvoid}},), out)

brs_plan_free(plan::Ptr{Cvoid}) = ccall((:brs_plan_free, libbrs()), Cvoid, (Ptr{Cvoid},), plan)

brs_plan_compute(plan::Ptr{Cvoid}, sampler::Ptr{Cvoid}, epoch::UInt64, step::UInt64) =
    ccall((:brs_plan_compute, libbrs()), Int32, (Ptr{Cvoid}, Ptr{Cvoid}, UInt64, UInt64),
          plan, sampler, epoch, step)

# LIBBRS_1.2
brs_plan_compute_batch(plan::Ptr{Cvoid}, config::Ptr{Cvoid}, lengths::Vector{UInt32}) =
    ccall((:brs_plan_compute_batch, libbrs()), Int32, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{UInt32}, Csize_t),
          plan, config, lengths, length(lengths))

# LIBBRS_1.5
brs_plan_compute_batch_images(plan::Ptr{Cvoid}, config::Ptr{Cvoid}, lengths::Vector{UInt32},
                              image_patches::Vector{UInt32}, image_offsets::Vector{UInt64}) =
    ccall((:brs_plan_compute_batch_images, libbrs()), Int32,
          (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{UInt32}, Ptr{UInt32}, Ptr{UInt64}, Csize_t),
          plan, config, lengths, image_patches, image_offsets, length(lengths))

brs_plan_load(plan::Ptr{Cvoid}, sampler::Ptr{Cvoid}, indices::Vector{UInt64},
              counts::Vector{UInt64}, num_micro_batches::Integer, epoch::UInt64, step::UInt64) =
    ccall((:brs_plan_load, libbrs()), Int32,
          (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{UInt64}, Ptr{UInt64}, Csize_t, UInt64, UInt64),
          plan, sampler, indices, counts, num_micro_batches, epoch, step)

brs_plan_get_int(out::Ref{Int64}, plan::Ptr{Cvoid}, key::Int32) =
    ccall((:brs_plan_get_int, libbrs()), Int32, (Ref{Int64}, Ptr{Cvoid}, Int32), out, plan, key)

brs_plan_get_double(out::Ref{Float64}, plan::Ptr{Cvoid}, key::Int32) =
    ccall((:brs_plan_get_double, libbrs()), Int32, (Ref{Cdouble}, Ptr{Cvoid}, Int32), out, plan, key)

brs_plan_micro_batch(indices::Ref{Ptr{UInt64}}, count::Ref{Csize_t}, plan::Ptr{Cvoid},
                     rank::Int64, micro::Int64) =
    ccall((:brs_plan_micro_batch, libbrs()), Int32,
          (Ref{Ptr{UInt64}}, Ref{Csize_t}, Ptr{Cvoid}, Int64, Int64),
          indices, count, plan, rank, micro)

brs_plan_micro_batch_stats(padded::Ref{UInt64}, real::Ref{UInt64}, cost::Ref{Float64},
                           plan::Ptr{Cvoid}, rank::Int64, micro::Int64) =
    ccall((:brs_plan_micro_batch_stats, libbrs()), Int32,
          (Ref{UInt64}, Ref{UInt64}, Ref{Cdouble}, Ptr{Cvoid}, Int64, Int64),
          padded, real, cost, plan, rank, micro)

# LIBBRS_1.6: context parallelism, by global rank (dp index x cp_size + cp index)
brs_plan_cp_micro_steps(count::Ref{UInt64}, plan::Ptr{Cvoid}) =
    ccall((:brs_plan_cp_micro_steps, libbrs()), Int32, (Ref{UInt64}, Ptr{Cvoid}), count, plan)
brs_plan_cp_micro_batch(indices::Ref{Ptr{UInt64}}, count::Ref{Csize_t}, first_rank::Ref{UInt64},
                        degree::Ref{UInt64}, plan::Ptr{Cvoid}, global_rank::Integer,
                        micro::Integer) =
    ccall((:brs_plan_cp_micro_batch, libbrs()), Int32,
          (Ref{Ptr{UInt64}}, Ref{Csize_t}, Ref{UInt64}, Ref{UInt64}, Ptr{Cvoid}, UInt64, UInt64),
          indices, count, first_rank, degree, plan, global_rank, micro)
brs_plan_cp_micro_batch_stats(padded::Ref{UInt64}, real::Ref{UInt64}, cost::Ref{Float64},
                              plan::Ptr{Cvoid}, global_rank::Integer, micro::Integer) =
    ccall((:brs_plan_cp_micro_batch_stats, libbrs()), Int32,
          (Ref{UInt64}, Ref{UInt64}, Ref{Cdouble}, Ptr{Cvoid}, UInt64, UInt64),
          padded, real, cost, plan, global_rank, micro)
brs_plan_cp_token_ranges(ranges::Union{Vector{UInt64},Ptr{Cvoid}}, count::Ref{Csize_t},
                         plan::Ptr{Cvoid}, global_rank::Integer, micro::Integer,
                         capacity::Integer) =
    ccall((:brs_plan_cp_token_ranges, libbrs()), Int32,
          (Ptr{UInt64}, Ref{Csize_t}, Ptr{Cvoid}, UInt64, UInt64, Csize_t),
          ranges, count, plan, global_rank, micro, capacity)

# LIBBRS_1.5
brs_plan_micro_batch_encoder(encoder_tokens::Ref{UInt64}, images::Ref{UInt64},
                             encoder_cost::Ref{Float64}, plan::Ptr{Cvoid}, rank::Int64,
                             micro::Int64) =
    ccall((:brs_plan_micro_batch_encoder, libbrs()), Int32,
          (Ref{UInt64}, Ref{UInt64}, Ref{Cdouble}, Ptr{Cvoid}, Int64, Int64),
          encoder_tokens, images, encoder_cost, plan, rank, micro)

brs_plan_last_error(plan::Ptr{Cvoid}) =
    ccall((:brs_plan_last_error, libbrs()), Ptr{UInt8}, (Ptr{Cvoid},), plan)

# --- the file readers of docs/formats.md (LIBBRS_1.5) ------------------------
# Bytes are passed as Ptr{UInt8} with their size, so a NUL byte is data (and
# refused by the reader) rather than the end of a string.

brs_lengths_file_new(out::Ref{Ptr{Cvoid}}) =
    ccall((:brs_lengths_file_new, libbrs()), Int32, (Ref{Ptr{Cvoid}},), out)

brs_lengths_file_free(file::Ptr{Cvoid}) =
    ccall((:brs_lengths_file_free, libbrs()), Cvoid, (Ptr{Cvoid},), file)

brs_lengths_file_parse(file::Ptr{Cvoid}, bytes::Vector{UInt8}, name::AbstractString) =
    ccall((:brs_lengths_file_parse, libbrs()), Int32, (Ptr{Cvoid}, Ptr{UInt8}, Csize_t, Cstring),
          file, bytes, length(bytes), name)

brs_lengths_file_begin(file::Ptr{Cvoid}, name::AbstractString) =
    ccall((:brs_lengths_file_begin, libbrs()), Int32, (Ptr{Cvoid}, Cstring), file, name)

brs_lengths_file_feed(file::Ptr{Cvoid}, bytes::Vector{UInt8}, size::Integer) =
    ccall((:brs_lengths_file_feed, libbrs()), Int32, (Ptr{Cvoid}, Ptr{UInt8}, Csize_t),
          file, bytes, size)

brs_lengths_file_finish(file::Ptr{Cvoid}) =
    ccall((:brs_lengths_file_finish, libbrs()), Int32, (Ptr{Cvoid},), file)

brs_lengths_file_lengths(lengths::Ref{Ptr{UInt32}}, count::Ref{Csize_t}, file::Ptr{Cvoid}) =
    ccall((:brs_lengths_file_lengths, libbrs()), Int32,
          (Ref{Ptr{UInt32}}, Ref{Csize_t}, Ptr{Cvoid}), lengths, count, file)

brs_lengths_file_images(patches::Ref{Ptr{UInt32}}, offsets::Ref{Ptr{UInt64}}, file::Ptr{Cvoid}) =
    ccall((:brs_lengths_file_images, libbrs()), Int32,
          (Ref{Ptr{UInt32}}, Ref{Ptr{UInt64}}, Ptr{Cvoid}), patches, offsets, file)

brs_lengths_file_last_error(file::Ptr{Cvoid}) =
    ccall((:brs_lengths_file_last_error, libbrs()), Ptr{UInt8}, (Ptr{Cvoid},), file)

brs_cost_model_file_new(out::Ref{Ptr{Cvoid}}) =
    ccall((:brs_cost_model_file_new, libbrs()), Int32, (Ref{Ptr{Cvoid}},), out)

brs_cost_model_file_free(file::Ptr{Cvoid}) =
    ccall((:brs_cost_model_file_free, libbrs()), Cvoid, (Ptr{Cvoid},), file)

brs_cost_model_file_parse(file::Ptr{Cvoid}, bytes::Vector{UInt8}, name::AbstractString) =
    ccall((:brs_cost_model_file_parse, libbrs()), Int32,
          (Ptr{Cvoid}, Ptr{UInt8}, Csize_t, Cstring), file, bytes, length(bytes), name)

brs_cost_model_file_has(present::Ref{Int32}, file::Ptr{Cvoid}, key::AbstractString) =
    ccall((:brs_cost_model_file_has, libbrs()), Int32, (Ref{Int32}, Ptr{Cvoid}, Cstring),
          present, file, key)

brs_cost_model_file_get_double(value::Ref{Float64}, file::Ptr{Cvoid}, key::AbstractString) =
    ccall((:brs_cost_model_file_get_double, libbrs()), Int32, (Ref{Cdouble}, Ptr{Cvoid}, Cstring),
          value, file, key)

brs_cost_model_file_get_int(value::Ref{Int64}, file::Ptr{Cvoid}, key::AbstractString) =
    ccall((:brs_cost_model_file_get_int, libbrs()), Int32, (Ref{Int64}, Ptr{Cvoid}, Cstring),
          value, file, key)

brs_cost_model_file_get_json(text::Ref{Ptr{UInt8}}, length::Ref{Csize_t}, file::Ptr{Cvoid},
                             key::AbstractString) =
    ccall((:brs_cost_model_file_get_json, libbrs()), Int32,
          (Ref{Ptr{UInt8}}, Ref{Csize_t}, Ptr{Cvoid}, Cstring), text, length, file, key)

brs_cost_model_file_last_error(file::Ptr{Cvoid}) =
    ccall((:brs_cost_model_file_last_error, libbrs()), Ptr{UInt8}, (Ptr{Cvoid},), file)
