# Tests of BatchRebalance.jl against the built libbrs (ENV["BRS_LIBRARY"]).
#     BRS_LIBRARY=build/libbrs/libbrs.so.1 julia --project=bindings/julia/BatchRebalance.jl \
#         bindings/julia/BatchRebalance.jl/test/runtests.jl
# Only the standard library: the golden vectors are read with test/json.jl.

using Test
using BatchRebalance
const BR = BatchRebalance

include("json.jl")
using .TinyJSON

const VECTORS_DIR = get(ENV, "BRS_VECTORS_DIR",
                        joinpath(@__DIR__, "..", "..", "..", "..", "tests", "vectors"))

# Skewed lengths from a fixed LCG: the same on every machine and Julia version.
function synthetic_lengths(n::Integer; seed::Integer=1)
    x = UInt64(seed)
    lengths = Int[]
    for i in 1:n
        x = x * 0x5851f42d4c957f2d + 0x14057b7ef767814f
        push!(lengths, 1 + Int((x >> 33) % (i % 7 == 0 ? 900 : 120)))
    end
    return lengths
end

"""The exception `f()` throws (the test fails if it throws nothing)."""
function thrown(f)
    try
        f()
    catch e
        return e
    end
    error("expected an exception")
end

all_ranks(lengths; dp_size, kw...) =
    [collect(Sampler(lengths; dp_size=dp_size, rank=r, kw...)) for r in 0:dp_size-1]

function sampler_for(vector)
    o = vector["options"]
    return Sampler(Int.(vector["lengths"]); per_device_batch_size=o["batch_size"],
                   grad_accum=o["grad_accum"], dp_size=o["dp_size"], seed=o["seed"],
                   shuffle=o["shuffle"] == 1, drop_last=o["drop_last"] == 1,
                   alpha=Float64(o["alpha"]), intercept=Float64(o["intercept"]),
                   max_tokens=o["max_tokens"] == 0 ? nothing : o["max_tokens"],
                   packed=o["packed"] == 1,
                   # only in the options when set
                   pad_to_multiple_of=get(o, "pad_to_multiple_of", 1),
                   length_buckets=haskey(o, "length_buckets") ? Int.(o["length_buckets"]) : nothing,
                   # only in the vectors of shapes/ (sync by its value's name, when set)
                   max_shapes=get(o, "max_shapes", nothing), sync=get(o, "sync", nothing))
end

function check_vector(vector)
    s = sampler_for(vector)
    @test string(fingerprint(s); base=16, pad=16) == vector["fingerprint"]
    @test steps_per_epoch(s) == vector["steps_per_epoch"]
    if haskey(vector, "vocabulary")  # the vectors of shapes/
        @test shape_vocabulary(s) == [(Int(p[1]), Int(p[2])) for p in vector["vocabulary"]]
    end
    for expected in vector["plans"]
        set_epoch!(s, expected["epoch"])
        p = plan(s, expected["step"])
        @test p.max_cost == expected["max_cost"]
        @test p.lower_bound == expected["lower_bound"]
        for (r, ranks) in enumerate(expected["micro_batches"]), (m, want) in enumerate(ranks)
            got = p.micro_batches[r, m]
            @test got.indices .- 1 == want["indices"]  # the vectors are 0-based
            @test (got.padded_tokens, got.real_tokens, got.cost) ==
                  (want["padded_tokens"], want["real_tokens"], want["cost"])
        end
    end
    close(s)
end

const CONFIG = (per_device_batch_size=4, grad_accum=2, dp_size=3, seed=7)

@testset "BatchRebalance.jl" begin
    lengths = synthetic_lengths(100)

    @testset "library version" begin
        @test occursin(r"^\d+\.\d+\.\d+$", library_version())
        @test library_version_number() ÷ 10000 == 1
        major, minor, patch = parse.(Int, split(library_version(), "."))
        @test library_version_number() == major * 10000 + minor * 100 + patch
    end

    @testset "coverage with drop_last" begin
        per_rank = all_ranks(lengths; CONFIG...)
        steps = 100 ÷ 24
        @test all(length(batches) == steps * 2 for batches in per_rank)
        @test all(!isempty(b) for batches in per_rank for b in batches)
        seen = reduce(vcat, reduce(vcat, per_rank))
        @test length(seen) == steps * 24
        @test allunique(seen)
        @test all(1 .<= seen .<= 100)
    end

    @testset "coverage with the last step kept and topped up" begin
        per_rank = all_ranks(lengths; CONFIG..., drop_last=false)
        @test all(length(batches) == 5 * 2 for batches in per_rank)
        seen = reduce(vcat, reduce(vcat, per_rank))
        # 96 samples in 4 full steps, then the 4 left topped up to K = 6.
        @test sort(unique(seen)) == 1:100
        @test length(seen) == 96 + 6
    end

    @testset "one sample, eight micro-batches" begin
        s = Sampler([17]; per_device_batch_size=1, grad_accum=4, dp_size=2, drop_last=false)
        @test length(s) == 4
        @test collect(s) == [[1], [1], [1], [1]]
        close(s)
    end

    @testset "plan(step) agrees with iteration and with the lengths" begin
        s = Sampler(lengths; CONFIG..., rank=1)
        p = plan(s, 2)
        @test (p.epoch, p.step, p.num_samples) == (0, 2, 24)
        @test size(p.micro_batches) == (3, 2)
        for mb in p.micro_batches
            @test !isempty(mb.indices)
            @test mb.padded_tokens == length(mb.indices) * maximum(lengths[mb.indices])
            @test mb.real_tokens == sum(lengths[mb.indices])
            @test mb.cost > 0
        end
        @test p.max_cost == maximum(mb.cost for mb in p.micro_batches)
        @test p.lower_bound <= p.max_cost
        @test p.total_padded_tokens == sum(mb.padded_tokens for mb in p.micro_batches)
        @test p.max_padded_tokens == maximum(mb.padded_tokens for mb in p.micro_batches)
        @test p.time_lower_bound <= min(p.micro_sync_time, p.step_sync_time)
        batches = collect(s)
        @test batches[5:6] == [p.micro_batches[2, 1].indices, p.micro_batches[2, 2].indices]
    end

    @testset "determinism, seeds and epochs" begin
        a, b = Sampler(lengths; CONFIG...), Sampler(lengths; CONFIG...)
        @test collect(a) == collect(b)
        @test fingerprint(a) == fingerprint(b)
        other_seed = Sampler(lengths; CONFIG..., seed=8)
        @test collect(other_seed) != collect(a)
        @test fingerprint(other_seed) != fingerprint(a)
        @test fingerprint(Sampler(lengths; CONFIG..., rank=2)) == fingerprint(a)
        # the same global batch of 24 split otherwise: one stream
        regrouped = Sampler(lengths; CONFIG..., per_device_batch_size=2, grad_accum=4)
        @test stream_fingerprint(regrouped) == stream_fingerprint(a)
        @test fingerprint(regrouped) != fingerprint(a)
        @test stream_fingerprint(other_seed) != stream_fingerprint(a)
        epoch0 = collect(a)
        set_epoch!(a, 1)
        @test collect(a) != epoch0
        set_epoch!(a, 0)
        @test collect(a) == epoch0
    end

    @testset "a step's samples do not depend on the rank layout" begin
        step_samples(s, t) = sort(reduce(vcat, [mb.indices for mb in plan(s, t).micro_batches]))
        wide = Sampler(lengths; per_device_batch_size=4, grad_accum=2, dp_size=3, seed=3)
        deep = Sampler(lengths; per_device_batch_size=4, grad_accum=3, dp_size=2, seed=3)
        @test all(step_samples(wide, t) == step_samples(deep, t) for t in 0:3)
    end

    @testset "options" begin
        s = Sampler(lengths; CONFIG..., alpha=0.002, intercept=5)
        @test getoption(s, :seed) == 7
        @test getoption(s, :dp_size) == 3
        @test getoption(s, :alpha) == 0.002
        @test getoption(s, :intercept) == 5.0
        lower, upper = option_bounds(:batch_size)
        @test 1 <= lower <= 4 <= upper
        @test option_bounds(:alpha) == (0.0, 1000.0)
        @test thrown(() -> getoption(s, :no_such_option)) isa ArgumentError
        @test thrown(() -> option_bounds(:no_such_option)) isa ArgumentError
    end

    @testset "errors" begin
        e = thrown(() -> Sampler([5, 0, 3]; per_device_batch_size=1))
        @test e isa BrsError && e.code == BR.BRS_ERR_INVALID_LENGTH && !isempty(e.message)
        e = thrown(() -> Sampler(fill(10, 5); per_device_batch_size=8))
        @test e isa BrsError && e.code == BR.BRS_ERR_TOO_FEW_SAMPLES
        e = thrown(() -> Sampler(lengths; CONFIG..., rank=3))
        @test e isa BrsError && e.code == BR.BRS_ERR_OUT_OF_RANGE
        e = thrown(() -> Sampler(lengths; CONFIG..., max_tokens=10))
        @test e isa BrsError && e.code == BR.BRS_ERR_SAMPLE_TOO_LONG
        e = thrown(() -> Sampler(lengths; per_device_batch_size=0))
        @test e isa BrsError && e.code == BR.BRS_ERR_OUT_OF_RANGE
        @test thrown(() -> Sampler([3, -1])) isa ArgumentError
        s = Sampler(lengths; CONFIG...)
        e = thrown(() -> plan(s, steps_per_epoch(s)))
        @test e isa BrsError && e.code == BR.BRS_ERR_OUT_OF_RANGE
        @test occursin(BR.status_name(e.code), sprint(showerror, e))
    end

    @testset "the epoch check names a max_tokens that plans the epoch" begin
        found = check_epoch(Sampler(lengths; CONFIG...))
        @test found.micro_batches == 1  # no cap: one micro-batch would do
        s = Sampler(lengths; CONFIG..., max_tokens=found.min_max_tokens)
        @test check_epoch(s).micro_batches <= 6
        @test all(t -> plan(s, t) isa StepPlan, 0:steps_per_epoch(s)-1)
        s = Sampler(lengths; CONFIG...)  # no cap: every epoch checks out
        set_epoch!(s, 1)
        @test check_epoch(s).min_max_tokens == check_epoch(s, 1).min_max_tokens
    end

    @testset "pad_to_multiple_of, length buckets and shapes" begin
        # padded tokens of every micro-batch: its size x its longest sample
        # rounded up to the multiple, then to the first bucket that holds it
        function padded_length(longest, multiple, buckets)
            rounded = cld(longest, multiple) * multiple
            return isempty(buckets) ? rounded : buckets[findfirst(>=(rounded), buckets)]
        end
        function padded_as_built(s, multiple, buckets)
            for t in 0:2, mb in plan(s, t).micro_batches
                longest = maximum(lengths[i] for i in mb.indices)
                expected = length(mb.indices) * padded_length(longest, multiple, buckets)
                mb.padded_tokens == expected || return false
            end
            return true
        end
        padded = Sampler(lengths; CONFIG..., pad_to_multiple_of=64)
        @test getoption(padded, :pad_to_multiple_of) == 64
        @test padded_as_built(padded, 64, Int[])
        @test fingerprint(padded) != fingerprint(Sampler(lengths; CONFIG...))
        ladder = bucket_ladder(padded)
        @test issorted(ladder) && allunique(ladder) && all(b -> b % 64 == 0, ladder)
        @test last(ladder) >= maximum(lengths)
        @test length(bucket_ladder(padded, 1)) < length(ladder)
        s = Sampler(lengths; CONFIG..., pad_to_multiple_of=8, length_buckets=ladder)
        @test length_buckets(s) == ladder
        @test padded_as_built(s, 8, ladder)
        # the shapes are those the plans of every step run on this rank
        walked = Set{Tuple{Int,Int}}()
        for t in 0:steps_per_epoch(s)-1, m in 1:CONFIG.grad_accum
            mb = plan(s, t).micro_batches[1, m]
            push!(walked, (length(mb.indices), mb.padded_tokens ÷ length(mb.indices)))
        end
        @test shapes(s) == sort!(collect(walked))
        @test all(shape -> shape[2] in ladder, shapes(s))
        set_epoch!(s, 1)
        @test shapes(s) == shapes(s, 1)
        # a sample above the last bucket is refused, naming the bucket
        e = thrown(() -> Sampler(lengths; CONFIG..., length_buckets=[64, 128, 256]))
        @test e isa BrsError && e.code == BR.BRS_ERR_SAMPLE_TOO_LONG
        @test occursin("last length bucket 256", e.message)
        e = thrown(() -> set_length_buckets!(s, [64, 128, 256]))
        @test e isa BrsError && e.code == BR.BRS_ERR_SAMPLE_TOO_LONG
        @test length_buckets(s) == ladder  # kept
        e = thrown(() -> set_length_buckets!(s, [2048, 1024]))
        @test e isa BrsError && e.code == BR.BRS_ERR_INVALID_ARGUMENT
        set_length_buckets!(s, Int[])
        @test isempty(length_buckets(s))
        e = thrown(() -> bucket_ladder(s, 65))
        @test e isa BrsError && e.code == BR.BRS_ERR_OUT_OF_RANGE
        e = thrown(() -> Sampler(lengths; CONFIG..., pad_to_multiple_of=0))
        @test e isa BrsError && e.code == BR.BRS_ERR_OUT_OF_RANGE
    end

    @testset "max_shapes and the shape vocabulary" begin
        @test isempty(shape_vocabulary(Sampler(lengths; CONFIG...)))
        vocabularies = map(0:CONFIG.dp_size-1) do rank
            s = Sampler(lengths; CONFIG..., rank=rank, max_shapes=8)
            @test getoption(s, :max_shapes) == 8
            vocabulary = shape_vocabulary(s)
            @test 1 <= length(vocabulary) <= 8
            @test issorted(vocabulary) && allunique(vocabulary)
            # every micro-batch of this rank, in two epochs, has a shape of it
            for epoch in 0:1
                set_epoch!(s, epoch)
                for t in 0:steps_per_epoch(s)-1, m in 1:CONFIG.grad_accum
                    mb = plan(s, t).micro_batches[rank+1, m]
                    n = length(mb.indices)
                    @test (n, mb.padded_tokens ÷ n) in vocabulary
                end
            end
            vocabulary
        end
        @test all(==(first(vocabularies)), vocabularies)  # the same on every rank
        e = thrown(() -> shape_vocabulary(Sampler(lengths; CONFIG..., packed=true,
                                                   max_tokens=4096, max_shapes=8)))
        @test e isa BrsError && e.code == BR.BRS_ERR_UNSUPPORTED
        # value names are the library's
        @test getoption(Sampler(lengths; CONFIG..., strategy="length_grouped"), :strategy) ==
              BR.BRS_STRATEGY_LENGTH_GROUPED
        @test thrown(() -> Sampler(lengths; CONFIG..., sync="Step")) isa ArgumentError
        @test thrown(() -> Sampler(lengths; CONFIG..., seed="step")) isa ArgumentError
    end

    @testset "close is idempotent" begin
        s = Sampler(lengths; CONFIG...)
        @test isopen(s)
        close(s)
        close(s)
        @test !isopen(s)
        e = thrown(() -> length(s))
        @test e isa BrsError && e.code == BR.BRS_ERR_NULL_POINTER
        @test sprint(show, s) == "Sampler(closed)"
    end

    include("encoder.jl")
    include("options.jl")

    # The format vectors (tests/vectors/formats): the same files and phrases the
    # brs command, Python and Rust read, through libbrs's one reader.
    formats_dir = joinpath(VECTORS_DIR, "formats")
    manifest = isfile(joinpath(formats_dir, "manifest.json")) ?
               parse_json(read(joinpath(formats_dir, "manifest.json"), String)) : nothing
    refused_as_said(case, e) =
        e isa BrsError && all(phrase -> occursin(phrase, e.message), case["error"])
    if manifest !== nothing
        @testset "lengths vector $(case["file"])" for case in manifest["lengths"]
            path = joinpath(formats_dir, case["file"])
            if case["accept"]
                read_whole = parse_lengths_file(read(path), path)
                read_streamed = read_lengths_file(path)
                @test read_whole == read_streamed
                @test read_streamed.lengths == case["values"]
                want = haskey(case, "images") ? [Vector{Int}(i) for i in case["images"]] :
                       [Int[] for _ in case["values"]]
                @test read_streamed.images == want
            else
                @test refused_as_said(case, thrown(() -> read_lengths_file(path)))
            end
        end
        @testset "cost-model vector $(case["file"])" for case in manifest["cost_model"]
            path = joinpath(formats_dir, case["file"])
            if case["accept"]
                m = read_cost_model_file(path)
                @test (m.alpha, m.intercept, m.max_tokens) ==
                      (case["alpha"], case["intercept"], case["max_tokens"])
            else
                @test refused_as_said(case, thrown(() -> read_cost_model_file(path)))
            end
        end
    else
        @info "no format vectors in $formats_dir"
    end

    vector_files = isdir(VECTORS_DIR) ?
                   filter(f -> endswith(f, ".json"), readdir(VECTORS_DIR; join=true)) : String[]
    @testset "golden vector $(basename(path))" for path in vector_files
        check_vector(parse_json(read(path, String)))
    end
    isempty(vector_files) && @info "no golden vectors in $VECTORS_DIR"

    # The vectors of tests/vectors/shapes: max_shapes (and sync), with the shape vocabulary.
    shapes_dir = joinpath(VECTORS_DIR, "shapes")
    shape_files = isdir(shapes_dir) ?
                  filter(f -> endswith(f, ".json"), readdir(shapes_dir; join=true)) : String[]
    @testset "shape vector $(basename(path))" for path in shape_files
        vector = parse_json(read(path, String))
        @test haskey(vector["options"], "max_shapes") && haskey(vector, "vocabulary")
        check_vector(vector)
    end
    isempty(shape_files) && @info "no shape vectors in $shapes_dir"
end
