# A small JSON reader for the golden vectors (tests use the standard library
# only). Objects become Dict{String,Any}, arrays Vector{Any}, integers Int64,
# other numbers Float64 (correctly rounded, so "%.17g" text reads back exactly).

module TinyJSON

export parse_json

mutable struct Reader
    text::String
    pos::Int
end

function parse_json(text::AbstractString)
    r = Reader(String(text), 1)
    value = read_value(r)
    skip_space(r)
    r.pos <= ncodeunits(r.text) && fail(r, "trailing characters")
    return value
end

fail(r::Reader, what) = error("JSON: $what at byte $(r.pos)")

current_byte(r::Reader) = r.pos <= ncodeunits(r.text) ? codeunit(r.text, r.pos) : 0x00

function skip_space(r::Reader)
    while current_byte(r) in (UInt8(' '), UInt8('\t'), UInt8('\n'), UInt8('\r'))
        r.pos += 1
    end
end

function expect(r::Reader, c::Char)
    skip_space(r)
    current_byte(r) == UInt8(c) || fail(r, "expected '$c'")
    r.pos += 1
end

function read_value(r::Reader)
    skip_space(r)
    c = current_byte(r)
    c == UInt8('{') && return read_object(r)
    c == UInt8('[') && return read_array(r)
    c == UInt8('"') && return read_string(r)
    for (word, value) in (("true", true), ("false", false), ("null", nothing))
        if startswith(SubString(r.text, r.pos), word)
            r.pos += length(word)
            return value
        end
    end
    return read_number(r)
end

function read_object(r::Reader)
    expect(r, '{')
    object = Dict{String,Any}()
    skip_space(r)
    current_byte(r) == UInt8('}') && (r.pos += 1; return object)
    while true
        skip_space(r)
        key = read_string(r)
        expect(r, ':')
        object[key] = read_value(r)
        skip_space(r)
        current_byte(r) == UInt8('}') && (r.pos += 1; return object)
        expect(r, ',')
    end
end

function read_array(r::Reader)
    expect(r, '[')
    array = Any[]
    skip_space(r)
    current_byte(r) == UInt8(']') && (r.pos += 1; return array)
    while true
        push!(array, read_value(r))
        skip_space(r)
        current_byte(r) == UInt8(']') && (r.pos += 1; return array)
        expect(r, ',')
    end
end

const ESCAPES = Dict(UInt8('"') => '"', UInt8('\\') => '\\', UInt8('/') => '/',
                     UInt8('n') => '\n', UInt8('t') => '\t', UInt8('r') => '\r',
                     UInt8('b') => '\b', UInt8('f') => '\f')

function read_string(r::Reader)
    current_byte(r) == UInt8('"') || fail(r, "expected a string")
    r.pos += 1
    out = IOBuffer()
    while true
        c = current_byte(r)
        c == 0x00 && fail(r, "unterminated string")
        r.pos += 1
        c == UInt8('"') && return String(take!(out))
        if c == UInt8('\\')
            e = current_byte(r)
            r.pos += 1
            if e == UInt8('u')
                print(out, Char(parse(UInt16, r.text[r.pos:r.pos+3]; base=16)))
                r.pos += 4
            else
                haskey(ESCAPES, e) || fail(r, "bad escape")
                print(out, ESCAPES[e])
            end
        else
            write(out, c)
        end
    end
end

const NUMBER_BYTES = Set(codeunits("+-0123456789.eE"))

function read_number(r::Reader)
    start = r.pos
    while current_byte(r) in NUMBER_BYTES
        r.pos += 1
    end
    r.pos == start && fail(r, "unexpected character")
    text = r.text[start:r.pos-1]
    return occursin(r"[.eE]", text) ? parse(Float64, text) : parse(Int64, text)
end

end # module
