//! Vision-language samples (encoder loads): images change the split, every
//! sample is still planned once, each micro-batch's patches are its
//! samples' images, the encoder cap holds, and bad loads are refused.

use brs::{ErrorCode, MicroBatchEncoder, MicroBatchStats, Plan, Sampler, SamplerBuilder};

fn builder() -> SamplerBuilder {
    Sampler::builder()
        .per_device_batch_size(2)
        .grad_accum(2)
        .dp_size(2)
        .seed(5)
}

/// Long texts without images alternating with short captions of large
/// images: by text alone the captions form one cheap micro-batch, which
/// would hold every image of the step.
fn dataset(n: usize) -> (Vec<u32>, Vec<Vec<u32>>) {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                (800 + (i as u32 * 13) % 200, vec![])
            } else {
                let images = vec![256 * (1 + i as u32 % 3); 1 + i % 2];
                (40 + i as u32 % 7, images)
            }
        })
        .unzip()
}

fn patches_of(images: &[Vec<u32>], batch: &[u64]) -> (u64, u64) {
    batch.iter().fold((0, 0), |(count, sum), &i| {
        let sample = &images[i as usize];
        (
            count + sample.len() as u64,
            sum + sample.iter().map(|&p| u64::from(p)).sum::<u64>(),
        )
    })
}

/// Every (rank, micro) slot of a plan: its indices, encoder side and stats.
fn slots(plan: &Plan) -> Vec<(Vec<u64>, MicroBatchEncoder, MicroBatchStats)> {
    let mut slots = Vec::new();
    for rank in 0..plan.dp_size() {
        for micro in 0..plan.grad_accum() {
            slots.push((
                plan.micro_batch(rank, micro).unwrap().to_vec(),
                plan.micro_batch_encoder(rank, micro).unwrap(),
                plan.micro_batch_stats(rank, micro).unwrap(),
            ));
        }
    }
    slots
}

#[test]
fn images_change_the_split_of_a_step() {
    let (lengths, images) = dataset(16);
    let text_only = builder().shuffle(false).build(&lengths).unwrap();
    let mut with_images = builder().shuffle(false).build(&lengths).unwrap();
    with_images.set_encoder_loads(&images).unwrap();

    let text_plan = text_only.plan(0).unwrap();
    let image_plan = with_images.plan(0).unwrap();
    assert_ne!(text_plan.micro_batches(), image_plan.micro_batches());
    // The text split keeps the captions, so their images, together.
    let text_peak = slots(&text_plan)
        .iter()
        .map(|(batch, _, _)| patches_of(&images, batch).1)
        .max()
        .unwrap();
    let stats = image_plan.stats();
    assert!(
        stats.max_encoder_tokens < text_peak,
        "{stats:?} vs {text_peak}"
    );
    assert_eq!(text_plan.stats().total_encoder_tokens, 0);
    assert_eq!(text_plan.stats().encoder_cost, 0.0);
    assert!(stats.encoder_cost > 0.0 && stats.encoder_cost < stats.total_cost);
}

#[test]
fn every_sample_is_planned_once_and_each_micro_batch_has_its_samples_images() {
    let (lengths, images) = dataset(64);
    let mut sampler = builder().build(&lengths).unwrap();
    sampler.set_encoder_loads(&images).unwrap();
    for (i, sample) in images.iter().enumerate() {
        let expected = patches_of(&images, &[i as u64]);
        assert_eq!(
            sampler.encoder_load(i as u64).unwrap(),
            expected,
            "{sample:?}"
        );
    }
    for epoch in 0..2 {
        let mut seen = vec![0; lengths.len()];
        for step in 0..sampler.steps_per_epoch().unwrap() {
            let plan = sampler.plan_at(epoch, step).unwrap();
            let (mut total, mut peak, mut cost) = (0, 0, 0.0);
            for (batch, encoder, stats) in slots(&plan) {
                let (count, sum) = patches_of(&images, &batch);
                assert_eq!((encoder.images, encoder.encoder_tokens), (count, sum));
                // The images' cost is a part of the micro-batch's cost.
                assert!(encoder.encoder_cost <= stats.cost, "{encoder:?} {stats:?}");
                assert_eq!(encoder.encoder_cost > 0.0, count > 0);
                cost += encoder.encoder_cost;
                total += sum;
                peak = peak.max(sum);
                batch.iter().for_each(|&i| seen[i as usize] += 1);
            }
            let stats = plan.stats();
            assert_eq!(
                (stats.total_encoder_tokens, stats.max_encoder_tokens),
                (total, peak)
            );
            assert!((stats.encoder_cost - cost).abs() <= 1e-6 * cost.max(1.0));
        }
        assert!(seen.iter().all(|&c| c == 1), "epoch {epoch}: {seen:?}");
    }
}

#[test]
fn max_encoder_tokens_caps_every_micro_batch() {
    let (lengths, images) = dataset(64);
    let cap = 1536;
    // Without the cap some step puts more patches than that in a micro-batch.
    let mut uncapped = builder().build(&lengths).unwrap();
    uncapped.set_encoder_loads(&images).unwrap();
    let peaks: Vec<u64> = (0..uncapped.steps_per_epoch().unwrap())
        .map(|step| uncapped.plan(step).unwrap().stats().max_encoder_tokens)
        .collect();
    assert!(peaks.iter().any(|&peak| peak > cap), "{peaks:?}");
    let mut sampler = builder()
        .option("max_encoder_tokens", cap)
        .build(&lengths)
        .unwrap();
    sampler.set_encoder_loads(&images).unwrap();
    assert_eq!(sampler.max_encoder_tokens(), Some(cap));
    for step in 0..sampler.steps_per_epoch().unwrap() {
        let plan = sampler.plan(step).unwrap();
        for (batch, encoder, _) in slots(&plan) {
            assert!(encoder.encoder_tokens <= cap, "{batch:?}: {encoder:?}");
        }
        assert!(plan.stats().max_encoder_tokens <= cap);
    }
}

#[test]
fn bad_loads_are_refused() {
    let (lengths, images) = dataset(16);
    let mut sampler = builder().build(&lengths).unwrap();
    sampler.set_encoder_loads(&images).unwrap();
    let loaded = sampler.encoder_load(1).unwrap();
    assert_ne!(loaded, (0, 0));

    // An image of 0 patches: refused by the library, the loads kept.
    let mut zero = images.clone();
    zero[3] = vec![64, 0];
    let error = sampler.set_encoder_loads(&zero).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    assert!(error.to_string().contains("is 0"), "{error}");
    assert_eq!(sampler.encoder_load(1).unwrap(), loaded);

    // Not one entry per sample: refused on validation, the loads cleared.
    let error = sampler.set_encoder_loads(&images[..15]).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    assert_eq!(sampler.encoder_load(1).unwrap(), (0, 0));
    sampler.plan(0).unwrap();

    // A sample whose patches alone exceed the cap.
    let mut capped = builder()
        .option("max_encoder_tokens", 300)
        .build(&lengths)
        .unwrap();
    let error = capped.set_encoder_loads(&images).unwrap_err();
    assert_eq!(error.code(), ErrorCode::SampleTooLong);
    assert!(error.to_string().contains("max_encoder_tokens"), "{error}");

    sampler.set_encoder_loads(&images).unwrap();
    sampler.clear_encoder_loads();
    assert_eq!(sampler.encoder_load(1).unwrap(), (0, 0));
}

#[test]
fn a_batch_with_images_plans_every_position_once_within_the_encoder_cap() {
    let (lengths, images) = dataset(16);
    let cap = 2048;
    // Without the cap some micro-batch holds more patches than that.
    let uncapped = builder().drop_last(false).build(&[1]).unwrap();
    let plan = uncapped.plan_batch_with_images(&lengths, &images).unwrap();
    assert!(plan.stats().max_encoder_tokens > cap, "{:?}", plan.stats());
    // The configuration's own lengths and loads play no part.
    let config = builder()
        .drop_last(false)
        .option("max_encoder_tokens", cap)
        .build(&[1])
        .unwrap();
    let plan = config.plan_batch_with_images(&lengths, &images).unwrap();
    let mut seen = vec![0; lengths.len()];
    for (batch, encoder, _) in slots(&plan) {
        let (count, sum) = patches_of(&images, &batch);
        assert_eq!((encoder.images, encoder.encoder_tokens), (count, sum));
        assert!(sum <= cap, "{batch:?}: {encoder:?}");
        batch.iter().for_each(|&i| seen[i as usize] += 1);
    }
    assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
    let total: u64 = images.iter().flatten().map(|&p| u64::from(p)).sum();
    assert_eq!(plan.stats().total_encoder_tokens, total);

    // An image of 0 patches, and not one list per length, are refused.
    let mut zero = images.clone();
    zero[3] = vec![64, 0];
    let error = config.plan_batch_with_images(&lengths, &zero).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    assert!(error.to_string().contains("is 0"), "{error}");
    let error = config
        .plan_batch_with_images(&lengths, &images[..15])
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
}
