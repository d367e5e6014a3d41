"""
    BatchRebalance

Julia bindings of libbrs, the batch-rebalancing planner for distributed
training: every data-parallel rank gets micro-batches of equal cost, planned
exactly from (lengths, configuration, seed, epoch, step).

    using BatchRebalance
    s = Sampler(lengths; per_device_batch_size=8, grad_accum=2, dp_size=4, rank=0, seed=1)
    for batch in s          # this rank's micro-batches, 1-based dataset indices
        ...
    end
    set_epoch!(s, 1)
    p = plan(s, 0)          # every rank's micro-batches of step 0 with their costs
    close(s)

    f = read_lengths_file("data.lengths")   # lengths and each sample's image loads
    m = read_cost_model_file("cost.json")  # alpha, intercept, max_tokens, ...

The library is `ENV["BRS_LIBRARY"]` (a path) or the `libbrs` found by
`Libdl.find_library`.
"""
module BatchRebalance

export Sampler, BrsError, MicroBatch, StepPlan
export plan, set_epoch!, steps_per_epoch, fingerprint, getoption, option_bounds, check_epoch
export plan_batch
export option_names
export stream_fingerprint
export length_buckets, set_length_buckets!, bucket_ladder, shapes, shape_vocabulary
export set_encoder_loads!, encoder_load
export library_version, library_version_number
export read_lengths_file, parse_lengths_file, read_cost_model_file, parse_cost_model_file

include("libbrs.jl")
include("errors.jl")
include("sampler.jl")
include("encoder.jl")
include("files.jl")

function __init__()
    check_major_version()
end

end # module
