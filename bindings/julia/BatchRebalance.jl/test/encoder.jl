# Vision-language samples (encoder loads), included by runtests.jl: images
# change the split, every sample is planned once, each micro-batch's patches
# are its samples' images, the encoder cap holds, and bad loads are refused;
# a batch with images (plan_batch) plans every position once within the cap.

# Long texts without images alternating with short captions of large images:
# by text alone the captions form one cheap micro-batch holding every image.
function vlm_dataset(n)
    lengths = [isodd(i) ? 800 + (13 * (i - 1)) % 200 : 40 + (i - 1) % 7 for i in 1:n]
    images = [isodd(i) ? Int[] : fill(256 * (1 + (i - 1) % 3), 1 + (i - 1) % 2) for i in 1:n]
    return lengths, images
end

patches_in(images, indices) = sum(sum(images[i]; init=0) for i in indices)
images_in(images, indices) = sum(length(images[i]) for i in indices)

const VLM = (per_device_batch_size=2, grad_accum=2, dp_size=2, seed=5)

@testset "encoder loads" begin
    @testset "images change the split of a step" begin
        lengths, images = vlm_dataset(16)
        text_plan = plan(Sampler(lengths; VLM..., shuffle=false), 0)
        image_plan = plan(Sampler(lengths; VLM..., shuffle=false, encoder_loads=images), 0)
        @test [mb.indices for mb in text_plan.micro_batches] !=
              [mb.indices for mb in image_plan.micro_batches]
        text_peak = maximum(patches_in(images, mb.indices) for mb in text_plan.micro_batches)
        @test image_plan.max_encoder_tokens < text_peak
        @test text_plan.total_encoder_tokens == 0 && text_plan.encoder_cost == 0
        @test 0 < image_plan.encoder_cost < image_plan.total_cost
    end

    @testset "every sample once, each micro-batch with its samples' images" begin
        lengths, images = vlm_dataset(64)
        s = Sampler(lengths; VLM...)
        set_encoder_loads!(s, images)
        @test all(encoder_load(s, i) == (images = length(load), patches = sum(load; init=0))
                  for (i, load) in enumerate(images))
        for epoch in 0:1
            set_epoch!(s, epoch)
            seen = zeros(Int, length(lengths))
            for t in 0:steps_per_epoch(s)-1
                p = plan(s, t)
                for mb in p.micro_batches
                    @test mb.encoder_tokens == patches_in(images, mb.indices)
                    @test mb.images == images_in(images, mb.indices)
                    @test 0 <= mb.encoder_cost <= mb.cost
                    seen[mb.indices] .+= 1
                end
                @test p.total_encoder_tokens == sum(mb.encoder_tokens for mb in p.micro_batches)
                @test p.max_encoder_tokens == maximum(mb.encoder_tokens for mb in p.micro_batches)
                @test p.encoder_cost ≈ sum(mb.encoder_cost for mb in p.micro_batches)
            end
            @test all(==(1), seen)
        end
        # the keyword sets the same loads
        @test fingerprint(Sampler(lengths; VLM..., encoder_loads=images)) == fingerprint(s)
        @test fingerprint(s) != fingerprint(Sampler(lengths; VLM...))
    end

    @testset "max_encoder_tokens caps every micro-batch" begin
        lengths, images = vlm_dataset(64)
        uncapped = Sampler(lengths; VLM..., encoder_loads=images)
        @test any(plan(uncapped, t).max_encoder_tokens > 1536 for t in 0:steps_per_epoch(uncapped)-1)
        s = Sampler(lengths; VLM..., encoder_loads=images, max_encoder_tokens=1536)
        @test getoption(s, :max_encoder_tokens) == 1536
        for t in 0:steps_per_epoch(s)-1
            @test all(mb.encoder_tokens <= 1536 for mb in plan(s, t).micro_batches)
        end
    end

    @testset "bad loads are refused" begin
        lengths, images = vlm_dataset(16)
        s = Sampler(lengths; VLM..., encoder_loads=images)
        loaded = encoder_load(s, 2)
        @test loaded.images > 0
        # an image of 0 patches: refused by the library, the loads kept
        zero = copy(images)
        zero[4] = [64, 0]
        e = thrown(() -> set_encoder_loads!(s, zero))
        @test e isa BrsError && e.code == BR.BRS_ERR_INVALID_ARGUMENT
        @test encoder_load(s, 2) == loaded
        @test thrown(() -> set_encoder_loads!(s, [[-1]])) isa ArgumentError
        # not one entry per sample: refused on validation, the loads cleared
        e = thrown(() -> set_encoder_loads!(s, images[1:15]))
        @test e isa BrsError && e.code == BR.BRS_ERR_INVALID_ARGUMENT
        @test encoder_load(s, 2) == (images = 0, patches = 0)
        # a sample whose patches alone exceed the cap
        e = thrown(() -> Sampler(lengths; VLM..., encoder_loads=images, max_encoder_tokens=300))
        @test e isa BrsError && e.code == BR.BRS_ERR_SAMPLE_TOO_LONG
        @test occursin("max_encoder_tokens", e.message)
        set_encoder_loads!(s, images)
        set_encoder_loads!(s, nothing)
        @test encoder_load(s, 2) == (images = 0, patches = 0)
    end

    @testset "a batch with images: every position once, within the encoder cap" begin
        lengths, images = vlm_dataset(16)
        # the configuration's own lengths and loads play no part
        uncapped = Sampler([1]; VLM..., drop_last=false)
        @test plan_batch(uncapped, lengths; encoder_loads=images).max_encoder_tokens > 2048
        s = Sampler([1]; VLM..., drop_last=false, max_encoder_tokens=2048)
        epoch = collect(s)
        p = plan_batch(s, lengths; encoder_loads=images)
        @test sort(vcat((mb.indices for mb in p.micro_batches)...)) == 1:16
        for mb in p.micro_batches
            @test mb.encoder_tokens == patches_in(images, mb.indices) <= 2048
            @test mb.images == images_in(images, mb.indices)
        end
        @test p.total_encoder_tokens == sum(sum, images)
        @test collect(s) == epoch  # the sampler's own plan is untouched
        no_images = plan_batch(s, lengths; encoder_loads=fill(Int[], 16))
        @test [mb.indices for mb in no_images.micro_batches] ==
              [mb.indices for mb in plan_batch(s, lengths).micro_batches]
        zero = copy(images)
        zero[4] = [64, 0]
        e = thrown(() -> plan_batch(s, lengths; encoder_loads=zero))
        @test e isa BrsError && e.code == BR.BRS_ERR_INVALID_ARGUMENT
        @test thrown(() -> plan_batch(s, lengths; encoder_loads=images[1:15])) isa ArgumentError
    end
end
