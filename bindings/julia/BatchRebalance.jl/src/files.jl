# The readers of the two file formats of docs/formats.md, libbrs's own (the
# brs command and every binding share them): a lengths file (each sample's
# token count and its images' encoder loads) and a cost-model file. Julia
# reads the bytes; the library accepts or refuses them and words the message.

const CHUNK_SIZE = 1 << 16  # bytes handed to the lengths reader at a time

"""
    read_lengths_file(path) -> (lengths = Vector{UInt32}, images = Vector{Vector{UInt32}})

The lengths file at `path` (`"-"`: standard input), read in chunks: `lengths[i]`
is the token count of line `i`, `images[i]` the encoder loads (patch counts) of
that sample's images, empty when it has none. Throws `BrsError` naming the file
and the line when the file breaks the format.
"""
function read_lengths_file(path::AbstractString)
    path == "-" && return read_lengths_file(stdin, "standard input")
    stream = try
        open(path, "r")
    catch e
        throw(BrsError(BRS_ERR_INVALID_ARGUMENT, "cannot open lengths file '$path': $(sprint(showerror, e))"))
    end
    try
        return read_lengths_file(stream, path)
    finally
        close(stream)
    end
end

"""
    read_lengths_file(io::IO, name) -> (lengths, images)

The same for a stream, named `name` in messages.
"""
function read_lengths_file(io::IO, name::AbstractString)
    with_lengths_reader() do file
        check(brs_lengths_file_begin(file, name), () -> lengths_file_error(file))
        chunk = Vector{UInt8}(undef, CHUNK_SIZE)
        while !eof(io)
            got = readbytes!(io, chunk, CHUNK_SIZE)
            # on a problem, stop feeding: finish reports it
            brs_lengths_file_feed(file, chunk, got) == BRS_OK || break
        end
        check(brs_lengths_file_finish(file), () -> lengths_file_error(file))
        return lengths_file_values(file)
    end
end

"""
    parse_lengths_file(bytes::Vector{UInt8}, name) -> (lengths, images)

A whole lengths file held in memory, named `name` in messages.
"""
function parse_lengths_file(bytes::Vector{UInt8}, name::AbstractString)
    with_lengths_reader() do file
        check(brs_lengths_file_parse(file, bytes, name), () -> lengths_file_error(file))
        return lengths_file_values(file)
    end
end

lengths_file_error(file::Ptr{Cvoid}) = c_string(brs_lengths_file_last_error(file))

"""Call `f` with a new lengths reader, freed afterwards."""
function with_lengths_reader(f::Function)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(brs_lengths_file_new(out))
    try
        return f(out[])
    finally
        brs_lengths_file_free(out[])
    end
end

"""Copies of the lengths and each sample's images the reader holds."""
function lengths_file_values(file::Ptr{Cvoid})
    pointer, count = Ref{Ptr{UInt32}}(C_NULL), Ref{Csize_t}(0)
    check(brs_lengths_file_lengths(pointer, count, file), () -> lengths_file_error(file))
    n = Int(count[])
    lengths = copy(unsafe_wrap(Array, pointer[], n))
    patches, offsets = Ref{Ptr{UInt32}}(C_NULL), Ref{Ptr{UInt64}}(C_NULL)
    check(brs_lengths_file_images(patches, offsets, file), () -> lengths_file_error(file))
    bounds = unsafe_wrap(Array, offsets[], n + 1)
    loads = unsafe_wrap(Array, patches[], Int(bounds[end]))
    images = [loads[Int(bounds[i])+1:Int(bounds[i+1])] for i in 1:n]
    return (lengths = lengths, images = images)
end

"""
    read_cost_model_file(path) -> NamedTuple

The cost-model file at `path` (the JSON that calibration writes), checked by
libbrs: `alpha`, `intercept` (Float64), `max_tokens` (Int64, or `nothing`: no
cap), `seconds_per_unit` and `first_shape_seconds` (Float64, or `nothing` when
absent or null). Throws `BrsError` naming the file and the key.
"""
function read_cost_model_file(path::AbstractString)
    bytes = try
        open(io -> read(io, BRS_COST_MODEL_FILE_MAX_BYTES + 1), path, "r")
    catch e
        throw(BrsError(BRS_ERR_INVALID_ARGUMENT, "$path: cannot read it: $(sprint(showerror, e))"))
    end
    return parse_cost_model_file(bytes, path)
end

"""
    parse_cost_model_file(bytes::Vector{UInt8}, name) -> NamedTuple

The same for a file's bytes held in memory, named `name` in messages.
"""
function parse_cost_model_file(bytes::Vector{UInt8}, name::AbstractString)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(brs_cost_model_file_new(out))
    file = out[]
    try
        check(brs_cost_model_file_parse(file, bytes, name), () -> cost_model_file_error(file))
        max_tokens = cost_model_value(file, "max_tokens", Int64)
        return (alpha = cost_model_value(file, "alpha", Float64),
                intercept = cost_model_value(file, "intercept", Float64),
                max_tokens = max_tokens,
                seconds_per_unit = cost_model_value(file, "seconds_per_unit", Float64),
                first_shape_seconds = cost_model_value(file, "first_shape_seconds", Float64))
    finally
        brs_cost_model_file_free(file)
    end
end

cost_model_file_error(file::Ptr{Cvoid}) = c_string(brs_cost_model_file_last_error(file))

"""A number key's value as libbrs checked it, or `nothing` when absent or null."""
function cost_model_value(file::Ptr{Cvoid}, key::AbstractString, ::Type{T}) where {T}
    present = Ref{Int32}(0)
    check(brs_cost_model_file_has(present, file, key), () -> cost_model_file_error(file))
    present[] == 0 && return nothing
    value = Ref{T}(zero(T))
    status = T === Int64 ? brs_cost_model_file_get_int(value, file, key) :
             brs_cost_model_file_get_double(value, file, key)
    check(status, () -> cost_model_file_error(file))
    return value[]
end
