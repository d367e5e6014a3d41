# Every option of the library's table is a keyword of Sampler, by its name.
# The table is walked with the raw brs_option_* calls, so an option the
# library adds is set and read back here with no edit. Included by
# runtests.jl (thrown and synthetic_lengths come from there).

"""One option of the C table: its name, key, type, default and bounds."""
struct OptionRow
    name::Symbol
    key::Int32
    is_double::Bool
    default::Real
    lower::Real
    upper::Real
end

function ok(status)
    status == BR.BRS_OK || error("a brs_option_* call failed with status $status")
end

function option_row(index::Integer)
    key, kind, name = Ref{Int32}(0), Ref{Int32}(0), Ref{Ptr{UInt8}}(C_NULL)
    ok(BR.brs_option_key(key, index))
    ok(BR.brs_option_name(name, key[]))
    ok(BR.brs_option_type(kind, key[]))
    is_double = kind[] == BR.BRS_OPTION_DOUBLE
    T = is_double ? Float64 : Int64
    default, lower, upper = Ref{T}(0), Ref{T}(0), Ref{T}(0)
    if is_double
        ok(BR.brs_option_default_double(default, key[]))
        ok(BR.brs_option_bounds_double(lower, upper, key[]))
    else
        ok(BR.brs_option_default_int(default, key[]))
        ok(BR.brs_option_bounds_int(lower, upper, key[]))
    end
    return OptionRow(Symbol(BR.c_string(name[])), key[], is_double, default[], lower[], upper[])
end

function library_options()
    count = Ref{Csize_t}(0)
    ok(BR.brs_option_count(count))
    return [option_row(index) for index in 0:Int(count[])-1]
end

# A value within the bounds other than the default: the next one up. An
# integer of 0 .. typemax(Int64) (a count without bound: a cap whose 0 means
# none, the seed) takes 2^20 instead, since a cap of 1 token is one that no
# sample meets.
function other_value(row::OptionRow)
    if row.is_double
        return row.default + 0.5 <= row.upper ? row.default + 0.5 : row.lower
    end
    (row.lower, row.upper) == (0, typemax(Int64)) && return 2^20
    return row.default < row.upper ? row.default + 1 : row.lower
end

# The value the library holds, read by key.
function stored(s::Sampler, row::OptionRow)
    out = row.is_double ? Ref{Float64}(0.0) : Ref{Int64}(0)
    getter = row.is_double ? BR.brs_sampler_get_double : BR.brs_sampler_get_int
    ok(getter(out, s.handle, row.key))
    return out[]
end

@testset "every option of the table, by its name" begin
    rows = library_options()
    @test length(rows) >= 14
    @test option_names() == [row.name for row in rows]

    chosen = Dict{Symbol,Any}(row.name => other_value(row) for row in rows)
    @test all(chosen[row.name] != row.default for row in rows)
    s = Sampler(synthetic_lengths(400); chosen...)
    for row in rows
        @test isapprox(stored(s, row), chosen[row.name]; atol=1e-6)
        @test getoption(s, row.name) == stored(s, row)
    end
    close(s)

    s = Sampler(synthetic_lengths(64))  # nothing given: the library's defaults
    @test all(stored(s, row) == row.default for row in rows)
    close(s)

    s = Sampler(synthetic_lengths(64); sync=:step, strategy="length_grouped", shuffle=false,
                max_tokens=nothing)
    @test getoption(s, :sync) == BR.BRS_SYNC_STEP
    @test getoption(s, :strategy) == BR.BRS_STRATEGY_LENGTH_GROUPED
    @test getoption(s, :shuffle) == 0 && getoption(s, :max_tokens) == 0
    @test getoption(s, :per_device_batch_size) == getoption(s, :batch_size)
    close(s)

    @test thrown(() -> Sampler(synthetic_lengths(64); no_such_option=1)) isa ArgumentError
    @test thrown(() -> Sampler(synthetic_lengths(64); sync=:never)) isa ArgumentError
    @test thrown(() -> Sampler(synthetic_lengths(64); seed=0.5)) isa ArgumentError
    @test thrown(() -> Sampler(synthetic_lengths(64); alpha="high")) isa ArgumentError
    @test thrown(() -> Sampler(synthetic_lengths(64); batch_size=2,
                               per_device_batch_size=2)) isa ArgumentError
    e = thrown(() -> Sampler(synthetic_lengths(64); sync=2))
    @test e isa BrsError && e.code == BR.BRS_ERR_OUT_OF_RANGE
end
