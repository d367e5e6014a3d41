# The Julia API: a Sampler owning a brs_sampler and a reusable brs_plan,
# iterating over this rank's micro-batches; plan(step) for every rank.
# Dataset indices are 1-based here (Julia's convention); libbrs's are 0-based.

# Options are read from the library's table (brs_option_*): names, types,
# value names and keywords are never listed here, so an option the library adds
# is a keyword of Sampler with no edit. An option whose keyword
# (brs_option_keyword) differs from its name takes both: per_device_batch_size,
# the Python package's (and transformers') name for the library's batch_size.
const OPTION_ALIASES_READ = Ref{Union{Nothing,Dict{Symbol,Symbol}}}(nothing)

# keyword => name, for each option whose keyword is not its name.
function option_aliases()
    aliases = OPTION_ALIASES_READ[]
    aliases === nothing || return aliases
    aliases = Dict{Symbol,Symbol}()
    count = Ref{Csize_t}(0)
    check(brs_option_count(count))
    for index in 0:Int(count[])-1
        key, name, keyword = Ref{Int32}(0), Ref{Ptr{UInt8}}(C_NULL), Ref{Ptr{UInt8}}(C_NULL)
        check(brs_option_key(key, index))
        check(brs_option_name(name, key[]))
        check(brs_option_keyword(keyword, key[]))
        c_string(keyword[]) == c_string(name[]) ||
            (aliases[Symbol(c_string(keyword[]))] = Symbol(c_string(name[])))
    end
    OPTION_ALIASES_READ[] = aliases
    return aliases
end

"""
    Sampler(lengths; options..., length_buckets=nothing, encoder_loads=nothing, epoch=0)

A batch-rebalancing sampler over a dataset whose sample `i` has `lengths[i]`
tokens. Iterating yields this rank's micro-batches (vectors of 1-based
dataset indices) for every step of the current epoch; `length(s)` is
steps × grad_accum, the same on every rank. Owns its C handles: `close(s)`
frees them (idempotent; the finalizer calls it too). Errors are `BrsError`s.

Every option of the library's table is a keyword, by its name (`option_names()`
lists them: batch_size, grad_accum, dp_size, rank, seed, shuffle, drop_last,
max_tokens, packed, alpha, intercept, strategy, sync, pad_to_multiple_of, ...):
an integer or a `Bool` for an integer option, a real for a double one, or the
name of one of its values (`sync=:step`, `strategy="random"`).
`per_device_batch_size` is another name for batch_size. An option not given,
or given as `nothing`, keeps the library's default (`getoption` reads it).

`pad_to_multiple_of` rounds a micro-batch's padded length up to a multiple
of it, as a collator's pad_to_multiple_of builds the tensor, and
`length_buckets` (strictly increasing token counts) then pads it to the
smallest bucket that holds it; the plan, its costs and `max_tokens` use that
length (in packed mode, of the micro-batch's one row). A sample above the
last bucket is refused. `bucket_ladder(s)` suggests buckets.

`encoder_loads` gives a vision-language dataset's images: entry `i` lists the
patch counts of sample `i`'s images (see `set_encoder_loads!`). Each image
costs `p + encoder_alpha * p^2 + encoder_intercept` beside the text, and
`max_encoder_tokens` caps a micro-batch's patches (`nothing`: no cap).
"""
mutable struct Sampler
    handle::Ptr{Cvoid}  # brs_sampler
    plan::Ptr{Cvoid}    # brs_plan, reused for every step
    epoch::UInt64
    rank::Int64
    grad_accum::Int64
    dp_size::Int64

    function Sampler(handle::Ptr{Cvoid})
        s = new(handle, C_NULL, 0, 0, 1, 1)
        return finalizer(close, s)
    end
end

function Sampler(lengths::AbstractVector{<:Integer};
                 length_buckets::Union{Nothing,AbstractVector{<:Integer}}=nothing,
                 encoder_loads::Union{Nothing,AbstractVector}=nothing, epoch::Integer=0,
                 options...)
    s = Sampler(new_handle(brs_sampler_new))
    try
        s.plan = new_handle(brs_plan_new)
        set_lengths!(s, lengths)
        for (name, value) in table_options(options)
            setoption!(s, name, value)
        end
        length_buckets === nothing || set_buckets!(s, length_buckets)
        encoder_loads === nothing || set_loads!(s, encoder_loads)
        # as the library holds them, given or not: iteration and plan() read them
        s.rank, s.grad_accum, s.dp_size = getoption.(Ref(s), (:rank, :grad_accum, :dp_size))
        set_epoch!(s, epoch)
        check(brs_sampler_validate(s.handle), () -> sampler_error(s))
    catch
        close(s)
        rethrow()
    end
    return s
end

# The keyword options by the library's names, without those given as `nothing`.
function table_options(options)
    given = Dict{Symbol,Any}()
    for (keyword, value) in options
        name = get(option_aliases(), keyword, keyword)
        haskey(given, name) &&
            throw(ArgumentError("option $name is given twice (as :$name and its alias)"))
        given[name] = value
    end
    return filter(option -> option.second !== nothing, given)
end

function new_handle(create::Function)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(create(out))
    return out[]
end

sampler_error(s::Sampler) = c_string(brs_sampler_last_error(s.handle))
plan_error(s::Sampler) = c_string(brs_plan_last_error(s.plan))

"""
    close(s::Sampler)

Free the C handles now rather than at garbage collection. Calling it again
does nothing; any other call on a closed sampler throws a `BrsError`.
"""
function Base.close(s::Sampler)
    plan, handle = s.plan, s.handle
    s.plan = C_NULL
    s.handle = C_NULL
    plan == C_NULL || brs_plan_free(plan)
    handle == C_NULL || brs_sampler_free(handle)
    return nothing
end

Base.isopen(s::Sampler) = s.handle != C_NULL

function Base.show(io::IO, s::Sampler)
    isopen(s) || return print(io, "Sampler(closed)")
    print(io, "Sampler(dp_size=", s.dp_size, ", grad_accum=", s.grad_accum, ", rank=", s.rank,
          ", epoch=", Int(s.epoch), ")")
end

# --- configuration ------------------------------------------------------------

function to_lengths(lengths::AbstractVector{<:Integer})
    out = Vector{UInt32}(undef, length(lengths))
    for (i, x) in enumerate(lengths)
        0 <= x <= typemax(UInt32) ||
            throw(ArgumentError("lengths[$i] = $x is not a token count (0 .. $(typemax(UInt32)))"))
        out[i] = UInt32(x)
    end
    return out
end

# libbrs copies the lengths (BRS_LENGTHS_COPY): nothing to keep alive here.
function set_lengths!(s::Sampler, lengths::AbstractVector{<:Integer})
    values = to_lengths(lengths)
    GC.@preserve s values begin
        check(brs_sampler_set_lengths(s.handle, values, length(values), BRS_LENGTHS_COPY),
              () -> sampler_error(s))
    end
end

"""
    option_names() -> Vector{Symbol}

The options of the loaded library, in its table's order: the keywords of
`Sampler` and the names `getoption` and `option_bounds` take.
"""
function option_names()
    count = Ref{Csize_t}(0)
    check(brs_option_count(count))
    return [option_name_at(index) for index in 0:Int(count[])-1]
end

function option_name_at(index::Integer)
    key, name = Ref{Int32}(0), Ref{Ptr{UInt8}}(C_NULL)
    check(brs_option_key(key, index))
    check(brs_option_name(name, key[]))
    return Symbol(c_string(name[]))
end

# (key, C type of its setter) of the option `name` (or its alias).
function option_key(name::Symbol)
    key, kind = Ref{Int32}(0), Ref{Int32}(0)
    if brs_option_find(key, String(get(option_aliases(), name, name))) != BRS_OK
        throw(ArgumentError("unknown option :$name; known: $(join(option_names(), ", "))"))
    end
    check(brs_option_type(kind, key[]))
    return key[], kind[] == BRS_OPTION_DOUBLE ? Float64 : Int64
end

function setoption!(s::Sampler, name::Symbol, value)
    key, kind = option_key(name)
    native = native_value(name, key, kind, value)
    GC.@preserve s begin
        status = kind === Int64 ? brs_sampler_set_int(s.handle, key, native) :
                 brs_sampler_set_double(s.handle, key, native)
        check(status, () -> sampler_error(s))
    end
end

# A value in its option's C type: an integer (a Bool is 1 or 0) or one of the
# option's value names for an integer option, a real for a double one. The
# library checks the bounds, so that its message is the one raised.
native_value(name::Symbol, key::Int32, ::Type{Float64}, value::Real) = Float64(value)

function native_value(name::Symbol, key::Int32, ::Type{Int64}, value::Integer)
    typemin(Int64) <= value <= typemax(Int64) ||
        throw(ArgumentError("$name = $value does not fit Int64"))
    return Int64(value)
end

native_value(name::Symbol, key::Int32, ::Type{Int64}, value::Union{Symbol,AbstractString}) =
    value_number(name, key, String(value))

function native_value(name::Symbol, key::Int32, kind::Type, value)
    wanted = kind === Int64 ? "an integer, a Bool or a value's name" : "a real number"
    throw(ArgumentError("$name takes $wanted; got $(repr(value))"))
end

# The number of the value named `text` (sync "step" is 1), found by the
# library (brs_option_value_find).
function value_number(name::Symbol, key::Int32, text::String)
    found = Ref{Int64}(0)
    status = occursin('\0', text) ? BRS_ERR_INVALID_ARGUMENT :
             brs_option_value_find(found, key, text)
    status == BRS_OK && return found[]
    status == BRS_ERR_INVALID_ARGUMENT ||
        throw(ArgumentError("$name takes an integer; got \"$text\""))
    lower, upper = Ref{Int64}(0), Ref{Int64}(0)
    check(brs_option_bounds_int(lower, upper, key))
    names = String[]
    for value in lower[]:upper[]
        out = Ref{Ptr{UInt8}}(C_NULL)
        brs_option_value_name(out, key, value) == BRS_OK || break
        push!(names, c_string(out[]))
    end
    throw(ArgumentError("$name = \"$text\" is none of its values: $(join(names, ", "))"))
end

"""
    getoption(s, name::Symbol) -> Int64 or Float64

The value of an option as the library holds it (alpha and intercept as
resolved to 1e-6), e.g. `getoption(s, :seed)`; any name of `option_names()`.
"""
function getoption(s::Sampler, name::Symbol)
    key, kind = option_key(name)
    GC.@preserve s begin
        if kind === Int64
            out = Ref{Int64}(0)
            check(brs_sampler_get_int(out, s.handle, key), () -> sampler_error(s))
        else
            out = Ref{Float64}(0.0)
            check(brs_sampler_get_double(out, s.handle, key), () -> sampler_error(s))
        end
        return out[]
    end
end

"""
    option_bounds(name::Symbol) -> (lower, upper)

The values the library accepts for an option.
"""
function option_bounds(name::Symbol)
    key, kind = option_key(name)
    if kind === Int64
        lower, upper = Ref{Int64}(0), Ref{Int64}(0)
        check(brs_option_bounds_int(lower, upper, key))
    else
        lower, upper = Ref{Float64}(0.0), Ref{Float64}(0.0)
        check(brs_option_bounds_double(lower, upper, key))
    end
    return (lower[], upper[])
end

"""
    set_epoch!(s, epoch)

Select the epoch that iteration and `plan` draw from (each epoch is a new
seeded shuffle). Returns `s`.
"""
function set_epoch!(s::Sampler, epoch::Integer)
    epoch >= 0 || throw(ArgumentError("epoch must be >= 0, got $epoch"))
    s.epoch = UInt64(epoch)
    return s
end

"""The number of optimizer steps in one epoch (the same on every rank)."""
function steps_per_epoch(s::Sampler)
    out = Ref{UInt64}(0)
    GC.@preserve s check(brs_sampler_steps_per_epoch(out, s.handle), () -> sampler_error(s))
    return Int(out[])
end

"""A 64-bit hash of the lengths and every option but the rank: ranks of one job agree on it."""
function fingerprint(s::Sampler)
    out = Ref{UInt64}(0)
    GC.@preserve s check(brs_sampler_fingerprint(out, s.handle), () -> sampler_error(s))
    return out[]
end

"""
The fingerprint without dp_size, per_device_batch_size, grad_accum and sync: equal for samplers
that draw the same samples in the same order however each step is split among ranks and
micro-steps (a resume on another number of ranks compares it, and the global batch).
"""
function stream_fingerprint(s::Sampler)
    out = Ref{UInt64}(0)
    GC.@preserve s check(brs_sampler_stream_fingerprint(out, s.handle), () -> sampler_error(s))
    return out[]
end

"""
    check_epoch(s, epoch = s.epoch) -> (min_max_tokens, micro_batches)

Whether max_tokens lets every step of `epoch` be planned, decided in one pass
before any step is planned: the least max_tokens that plans the epoch and the
most micro-batches a step needs. Throws a `BrsError` naming that max_tokens
when the configured one cannot plan the epoch (and in packed mode, whose cap
only planning a step settles).
"""
function check_epoch(s::Sampler, epoch::Integer = s.epoch)
    epoch >= 0 || throw(ArgumentError("epoch must be >= 0, got $epoch"))
    cap, needed = Ref{UInt64}(0), Ref{UInt64}(0)
    GC.@preserve s check(brs_sampler_check_epoch(cap, needed, s.handle, UInt64(epoch)),
                         () -> sampler_error(s))
    return (min_max_tokens = Int(cap[]), micro_batches = Int(needed[]))
end

# --- length buckets and shapes ---------------------------------------------------

# libbrs copies the buckets: nothing to keep alive here.
function set_buckets!(s::Sampler, buckets::AbstractVector{<:Integer})
    values = to_lengths(buckets)
    GC.@preserve s values begin
        check(brs_sampler_set_length_buckets(s.handle, values, length(values)),
              () -> sampler_error(s))
    end
end

"""
    length_buckets(s) -> Vector{Int}

The padded lengths a micro-batch may take, increasing; empty when none are set.
"""
function length_buckets(s::Sampler)
    buckets, count = Ref{Ptr{UInt32}}(C_NULL), Ref{Csize_t}(0)
    GC.@preserve s begin
        check(brs_sampler_get_length_buckets(buckets, count, s.handle), () -> sampler_error(s))
        # the sampler's own array, valid until the buckets are set again: copy it
        return [Int(unsafe_load(buckets[], i)) for i in 1:Int(count[])]
    end
end

"""
    set_length_buckets!(s, buckets) -> s

Set the padded lengths a micro-batch may take (strictly increasing, each at
least 1; empty clears them) and validate the sampler with them. On an error
(a 0 or an order that is not increasing, or a sample above the last bucket,
which the message names) the sampler keeps the buckets it had.
"""
function set_length_buckets!(s::Sampler, buckets::AbstractVector{<:Integer})
    previous = length_buckets(s)
    set_buckets!(s, buckets)
    try
        GC.@preserve s check(brs_sampler_validate(s.handle), () -> sampler_error(s))
    catch
        set_buckets!(s, previous)
        rethrow()
    end
    return s
end

"""
    bucket_ladder(s, steps_per_doubling = 0) -> Vector{Int}

The library's default ladder of length buckets for the sampler's lengths:
`steps_per_doubling` evenly spaced lengths per doubling (0: the library's
default, 4, a bucket at most 25% above any length it holds), from the power
of two at or below the shortest sample to the first rung at or above the
longest, each rounded up to pad_to_multiple_of. Not set: pass it to
`set_length_buckets!` or the constructor's `length_buckets`.
"""
function bucket_ladder(s::Sampler, steps_per_doubling::Integer = 0)
    0 <= steps_per_doubling <= typemax(UInt32) ||
        throw(ArgumentError("steps_per_doubling must be >= 0, got $steps_per_doubling"))
    steps = UInt32(steps_per_doubling)
    count = Ref{Csize_t}(0)
    GC.@preserve s begin
        check(brs_sampler_bucket_ladder(C_NULL, count, s.handle, steps, 0), () -> sampler_error(s))
        ladder = Vector{UInt32}(undef, Int(count[]))
        check(brs_sampler_bucket_ladder(ladder, count, s.handle, steps, length(ladder)),
              () -> sampler_error(s))
        return Int.(ladder[1:Int(count[])])
    end
end

"""
    shapes(s, epoch = s.epoch) -> Vector{Tuple{Int,Int}}

The distinct shapes this rank runs in `epoch`, (batch size, padded length)
sorted by size, then length, found by planning every step before training so
that they can be warmed or captured once. The padded length is the
micro-batch's as its collator pads it (pad_to_multiple_of, length buckets);
in packed mode the padded total of its one row.
"""
function shapes(s::Sampler, epoch::Integer = s.epoch)
    epoch >= 0 || throw(ArgumentError("epoch must be >= 0, got $epoch"))
    count = Ref{Csize_t}(0)
    GC.@preserve s begin
        check(brs_sampler_shapes(C_NULL, count, s.handle, UInt64(epoch), 0),
              () -> sampler_error(s))
        flat = Vector{UInt64}(undef, 2 * Int(count[]))
        check(brs_sampler_shapes(flat, count, s.handle, UInt64(epoch), length(flat) ÷ 2),
              () -> sampler_error(s))
        return [(Int(flat[2i-1]), Int(flat[2i])) for i in 1:Int(count[])]
    end
end

"""
    shape_vocabulary(s) -> Vector{Tuple{Int,Int}}

The run's shape vocabulary when `max_shapes` > 0: at most max_shapes pairs
(batch size, padded length) that every micro-batch of every rank in every
epoch has, sorted by size, then length; chosen once from the lengths and the
configuration, so that they can be warmed before step 0. Empty when
max_shapes is 0. In packed mode the pairs are (1, padded row total). A
`BrsError` with images, in packed mode without max_tokens, or when max_shapes
is below the shapes every step needs (its message names the least that works).
"""
function shape_vocabulary(s::Sampler)
    count = Ref{Csize_t}(0)
    GC.@preserve s begin
        check(brs_sampler_shape_vocabulary(C_NULL, count, s.handle, 0), () -> sampler_error(s))
        flat = Vector{UInt64}(undef, 2 * Int(count[]))
        check(brs_sampler_shape_vocabulary(flat, count, s.handle, length(flat) ÷ 2),
              () -> sampler_error(s))
        return [(Int(flat[2i-1]), Int(flat[2i])) for i in 1:Int(count[])]
    end
end

# --- plans --------------------------------------------------------------------

"""
One micro-batch of a step: 1-based dataset indices, longest sample first;
`encoder_tokens` (image patches), `images` and `encoder_cost` (part of
`cost`) are 0 without encoder loads.
"""
struct MicroBatch
    rank::Int
    micro::Int
    indices::Vector{Int}
    padded_tokens::Int
    real_tokens::Int
    cost::Float64
    encoder_tokens::Int
    images::Int
    encoder_cost::Float64
end

"""
Every rank's micro-batches of one step (`micro_batches[rank + 1, micro + 1]`)
and the step's totals, as `brs_plan_get_int` / `brs_plan_get_double` report.
"""
struct StepPlan
    epoch::Int
    step::Int
    num_samples::Int
    total_padded_tokens::Int
    total_real_tokens::Int
    max_padded_tokens::Int
    max_cost::Float64
    lower_bound::Float64
    total_cost::Float64
    micro_sync_time::Float64
    step_sync_time::Float64
    time_lower_bound::Float64
    total_encoder_tokens::Int  # image patches of the step, 0 without encoder loads
    max_encoder_tokens::Int    # of its largest micro-batch: the encoder's memory peak
    encoder_cost::Float64      # the images' share of total_cost
    step_time::Float64         # of the sync model; the ranks' time, ranks x step_time, is
    useful_time::Float64       # useful (the samples unpadded) + padding + waiting (at the sync)
    padding_time::Float64
    waiting_time::Float64
    micro_batches::Matrix{MicroBatch}
end

function compute!(s::Sampler, epoch::UInt64, step::Integer)
    step >= 0 || throw(ArgumentError("step must be >= 0, got $step"))
    GC.@preserve s check(brs_plan_compute(s.plan, s.handle, epoch, UInt64(step)),
                         () -> plan_error(s))
end

function plan_int(s::Sampler, key::Int32)
    out = Ref{Int64}(0)
    GC.@preserve s check(brs_plan_get_int(out, s.plan, key), () -> plan_error(s))
    return Int(out[])
end

function plan_double(s::Sampler, key::Int32)
    out = Ref{Float64}(0.0)
    GC.@preserve s check(brs_plan_get_double(out, s.plan, key), () -> plan_error(s))
    return out[]
end

# The indices belong to the plan until its next compute: copy them out.
function micro_batch_indices(s::Sampler, rank::Integer, micro::Integer)
    indices, count = Ref{Ptr{UInt64}}(C_NULL), Ref{Csize_t}(0)
    GC.@preserve s begin
        check(brs_plan_micro_batch(indices, count, s.plan, Int64(rank), Int64(micro)),
              () -> plan_error(s))
        return [Int(unsafe_load(indices[], i)) + 1 for i in 1:Int(count[])]
    end
end

function micro_batch(s::Sampler, rank::Integer, micro::Integer)
    padded, real, cost = Ref{UInt64}(0), Ref{UInt64}(0), Ref{Float64}(0.0)
    GC.@preserve s check(brs_plan_micro_batch_stats(padded, real, cost, s.plan, Int64(rank),
                                                    Int64(micro)), () -> plan_error(s))
    return MicroBatch(rank, micro, micro_batch_indices(s, rank, micro), Int(padded[]),
                      Int(real[]), cost[], micro_batch_encoder(s, rank, micro)...)
end

"""
    plan(s, step) -> StepPlan

Plan step `step` (0-based) of the current epoch for every rank. Random
access: no earlier step is needed.
"""
function plan(s::Sampler, step::Integer)
    compute!(s, s.epoch, step)
    return step_plan(s)
end

"""
    plan_batch(s, lengths; encoder_loads=nothing) -> StepPlan

Plan one step of `lengths` alone (an RL batch, a window of a stream) with
the sampler's configuration (dp_size, grad_accum, cost model, caps, packed,
sync, strategy); its own lengths, batch size, seed and epoch play no part.
The indices are 1-based positions into `lengths`; `epoch` and `step` are 0.
`encoder_loads` gives the samples' images, one entry per length as
`set_encoder_loads!` takes them, priced and capped with the sampler's
encoder options (its own loads play no part).
"""
function plan_batch(s::Sampler, lengths::AbstractVector{<:Integer};
                    encoder_loads::Union{Nothing,AbstractVector}=nothing)
    values = to_lengths(lengths)
    encoder_loads === nothing || length(encoder_loads) == length(values) ||
        throw(ArgumentError("encoder_loads has $(length(encoder_loads)) entries for " *
                            "$(length(values)) lengths: give one per sample, [] for none"))
    # A plan handle of its own: the sampler's keeps the step iteration reads.
    held, s.plan = s.plan, new_handle(brs_plan_new)
    try
        patches, offsets = encoder_loads === nothing ? (UInt32[], UInt64[]) :
                           flat_images(encoder_loads)
        GC.@preserve s values patches offsets begin
            # a batch without any image plans as text alone (and has no patch array)
            status = isempty(patches) ? brs_plan_compute_batch(s.plan, s.handle, values) :
                     brs_plan_compute_batch_images(s.plan, s.handle, values, patches, offsets)
            check(status, () -> plan_error(s))
        end
        return step_plan(s)
    finally
        brs_plan_free(s.plan)
        s.plan = held
    end
end

# The StepPlan of the step the plan handle holds.
function step_plan(s::Sampler)
    batches = [micro_batch(s, r, m) for r in 0:s.dp_size-1, m in 0:s.grad_accum-1]
    return StepPlan(plan_int(s, BRS_PLAN_EPOCH), plan_int(s, BRS_PLAN_STEP),
                    plan_int(s, BRS_PLAN_NUM_SAMPLES), plan_int(s, BRS_PLAN_TOTAL_PADDED_TOKENS),
                    plan_int(s, BRS_PLAN_TOTAL_REAL_TOKENS), plan_int(s, BRS_PLAN_MAX_PADDED_TOKENS),
                    plan_double(s, BRS_PLAN_MAX_COST), plan_double(s, BRS_PLAN_LOWER_BOUND),
                    plan_double(s, BRS_PLAN_TOTAL_COST), plan_double(s, BRS_PLAN_MICRO_SYNC_TIME),
                    plan_double(s, BRS_PLAN_STEP_SYNC_TIME), plan_double(s, BRS_PLAN_TIME_LOWER_BOUND),
                    plan_int(s, BRS_PLAN_TOTAL_ENCODER_TOKENS), plan_int(s, BRS_PLAN_MAX_ENCODER_TOKENS),
                    plan_double(s, BRS_PLAN_ENCODER_COST), plan_double(s, BRS_PLAN_STEP_TIME),
                    plan_double(s, BRS_PLAN_USEFUL_TIME), plan_double(s, BRS_PLAN_PADDING_TIME),
                    plan_double(s, BRS_PLAN_WAITING_TIME), batches)
end

# --- iteration over this rank's micro-batches -----------------------------------

Base.IteratorSize(::Type{Sampler}) = Base.HasLength()
Base.eltype(::Type{Sampler}) = Vector{Int}
Base.length(s::Sampler) = steps_per_epoch(s) * s.grad_accum

# The state is (epoch, position): the epoch is fixed when iteration starts,
# and the plan handle is recomputed whenever it holds another step (e.g.
# after a plan() call in the loop body).
Base.iterate(s::Sampler) = iterate(s, (s.epoch, 0))

function Base.iterate(s::Sampler, state::Tuple{UInt64,Int})
    epoch, position = state
    position >= length(s) && return nothing
    step, micro = divrem(position, s.grad_accum)
    holds_step(s, epoch, step) || compute!(s, epoch, step)
    return micro_batch_indices(s, s.rank, micro), (epoch, position + 1)
end

function holds_step(s::Sampler, epoch::UInt64, step::Int)
    got_epoch, got_step = Ref{Int64}(-1), Ref{Int64}(-1)
    GC.@preserve s begin
        brs_plan_get_int(got_epoch, s.plan, BRS_PLAN_EPOCH) == BRS_OK || return false
        brs_plan_get_int(got_step, s.plan, BRS_PLAN_STEP) == BRS_OK || return false
    end
    return got_epoch[] == Int64(epoch) && got_step[] == step
end
