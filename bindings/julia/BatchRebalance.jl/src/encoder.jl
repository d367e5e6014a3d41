# Vision-language samples: each sample's images as patch counts (the vision
# encoder's tokens), laid out flat for brs_sampler_set_encoder_loads. The
# library prices them (encoder_alpha, encoder_intercept) and caps a
# micro-batch's patches (max_encoder_tokens); docs/algorithm.md, "Two parts".

# An entry is a vector of patch counts, or one count (one image; 0 for none).
images_of(entry::Integer) = entry == 0 ? Int[] : [entry]
images_of(entry::AbstractVector{<:Integer}) = entry

function flat_images(images::AbstractVector)
    patches, offsets = UInt32[], UInt64[0]
    for (i, entry) in enumerate(images)
        for p in images_of(entry)
            # 0 is left to the library, which names the image in its error
            0 <= p <= typemax(UInt32) ||
                throw(ArgumentError("encoder_loads[$i]: $p is not a patch count (1 .. $(typemax(UInt32)))"))
            push!(patches, UInt32(p))
        end
        push!(offsets, UInt64(length(patches)))
    end
    return patches, offsets
end

# libbrs copies the loads: nothing to keep alive here.
function set_loads!(s::Sampler, images::AbstractVector)
    patches, offsets = flat_images(images)
    GC.@preserve s patches offsets begin
        check(brs_sampler_set_encoder_loads(s.handle, patches, offsets, length(images)),
              () -> sampler_error(s))
    end
end

clear_loads!(s::Sampler) =
    GC.@preserve s check(brs_sampler_set_encoder_loads(s.handle, C_NULL, C_NULL, 0),
                         () -> sampler_error(s))

"""
    set_encoder_loads!(s, images) -> s

Give every sample its images: `images[i]` lists the patch counts of sample
`i`'s images (a vector, one integer for one image, `0` or `[]` for none).
A micro-batch then costs its text plus its images and its patches are capped
by `max_encoder_tokens`; steps whose samples have no image plan as before.
`nothing` or an empty vector clears them. An image of 0 patches throws and
keeps the loads the sampler had; then the sampler is validated, and when
that fails (not one entry per sample, a sample above `max_encoder_tokens`)
it is left without loads, planning text only.
"""
function set_encoder_loads!(s::Sampler, images::Union{Nothing,AbstractVector})
    if images === nothing || isempty(images)
        clear_loads!(s)
        return s
    end
    set_loads!(s, images)
    try
        GC.@preserve s check(brs_sampler_validate(s.handle), () -> sampler_error(s))
    catch
        # the library cannot hand the previous loads back: none always validates
        clear_loads!(s)
        rethrow()
    end
    return s
end

"""
    encoder_load(s, i) -> (images, patches)

Sample `i`'s (1-based) image count and patches summed; both 0 without loads.
"""
function encoder_load(s::Sampler, i::Integer)
    i >= 1 || throw(ArgumentError("sample index must be >= 1, got $i"))
    images, patches = Ref{UInt64}(0), Ref{UInt64}(0)
    GC.@preserve s check(brs_sampler_encoder_load(images, patches, s.handle, UInt64(i - 1)),
                         () -> sampler_error(s))
    return (images = Int(images[]), patches = Int(patches[]))
end

# The encoder side of one micro-batch of the plan handle's step.
function micro_batch_encoder(s::Sampler, rank::Integer, micro::Integer)
    tokens, images, cost = Ref{UInt64}(0), Ref{UInt64}(0), Ref{Float64}(0.0)
    GC.@preserve s check(brs_plan_micro_batch_encoder(tokens, images, cost, s.plan, Int64(rank),
                                                      Int64(micro)), () -> plan_error(s))
    return Int(tokens[]), Int(images[]), cost[]
end
