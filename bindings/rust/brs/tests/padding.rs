//! pad_to_multiple_of and length buckets through the safe crate: every
//! micro-batch is priced at the length its collator pads it to, the epoch's
//! shapes are the shapes its plans run, the default ladder, and the errors.

mod common;

use brs::{ErrorCode, Sampler, SamplerBuilder};
use common::synthetic_lengths;
use std::collections::BTreeSet;

fn builder() -> SamplerBuilder {
    Sampler::builder()
        .per_device_batch_size(4)
        .grad_accum(2)
        .dp_size(3)
        .seed(11)
}

/// The padded length of a micro-batch whose longest sample is `longest`:
/// rounded up to the multiple, then to the first bucket that holds it.
fn padded_length(longest: u64, multiple: u64, buckets: &[u32]) -> u64 {
    let rounded = longest.div_ceil(multiple) * multiple;
    if buckets.is_empty() {
        return rounded;
    }
    buckets
        .iter()
        .map(|&b| u64::from(b))
        .find(|&b| b >= rounded)
        .expect("a bucket holds every sample")
}

/// Every micro-batch of the first steps: padded tokens == count * its
/// longest sample rounded as the collator pads it.
fn assert_padded_as_built(sampler: &Sampler<'_>, lengths: &[u32], multiple: u64, buckets: &[u32]) {
    for step in 0..4 {
        let plan = sampler.plan_at(1, step).unwrap();
        for rank in 0..plan.dp_size() {
            for micro in 0..plan.grad_accum() {
                let batch = plan.micro_batch(rank, micro).unwrap();
                let longest = batch
                    .iter()
                    .map(|&i| u64::from(lengths[i as usize]))
                    .max()
                    .unwrap();
                let padded = padded_length(longest, multiple, buckets);
                let stats = plan.micro_batch_stats(rank, micro).unwrap();
                assert_eq!(
                    stats.padded_tokens,
                    batch.len() as u64 * padded,
                    "step {step}, rank {rank}, micro {micro}: longest {longest}"
                );
            }
        }
    }
}

#[test]
fn pad_to_multiple_of_rounds_every_micro_batch() {
    let lengths = synthetic_lengths(600, 21);
    for multiple in [1, 8, 64] {
        let sampler = builder()
            .pad_to_multiple_of(multiple)
            .build(&lengths)
            .unwrap();
        assert_eq!(sampler.pad_to_multiple_of(), multiple);
        assert_padded_as_built(&sampler, &lengths, multiple, &[]);
    }
    let plain = builder().build(&lengths).unwrap();
    assert_eq!(plain.pad_to_multiple_of(), 1);
    let padded = builder().pad_to_multiple_of(64).build(&lengths).unwrap();
    assert_ne!(padded.fingerprint().unwrap(), plain.fingerprint().unwrap());
}

#[test]
fn length_buckets_pad_every_micro_batch_and_read_back() {
    let lengths = synthetic_lengths(600, 22);
    let buckets = [64, 128, 256, 512, 1024, 2048];
    for multiple in [1, 16] {
        let sampler = builder()
            .pad_to_multiple_of(multiple)
            .length_buckets(&buckets)
            .build(&lengths)
            .unwrap();
        assert_eq!(sampler.length_buckets(), buckets);
        assert_padded_as_built(&sampler, &lengths, multiple, &buckets);
    }
    let mut sampler = builder().build(&lengths).unwrap();
    assert!(sampler.length_buckets().is_empty());
    let plain = sampler.fingerprint().unwrap();
    sampler.set_length_buckets(&buckets).unwrap();
    assert_eq!(sampler.length_buckets(), buckets);
    assert_ne!(sampler.fingerprint().unwrap(), plain);
    assert_padded_as_built(&sampler, &lengths, 1, &buckets);
    sampler.set_length_buckets(&[]).unwrap();
    assert!(sampler.length_buckets().is_empty());
    assert_eq!(sampler.fingerprint().unwrap(), plain);
}

/// The sorted distinct (size, padded length) of the rank's micro-batches,
/// walked from the plan of every step of the epoch.
fn walked_shapes(sampler: &Sampler<'_>, epoch: u64, packed: bool) -> Vec<(u64, u64)> {
    let mut shapes = BTreeSet::new();
    for step in 0..sampler.steps_per_epoch().unwrap() {
        let plan = sampler.plan_at(epoch, step).unwrap();
        for micro in 0..plan.grad_accum() {
            let size = plan.micro_batch(sampler.rank(), micro).unwrap().len() as u64;
            let padded = plan
                .micro_batch_stats(sampler.rank(), micro)
                .unwrap()
                .padded_tokens;
            shapes.insert((size, if packed { padded } else { padded / size }));
        }
    }
    shapes.into_iter().collect()
}

#[test]
fn shapes_are_the_shapes_the_plans_run_on_this_rank() {
    let lengths = synthetic_lengths(900, 23);
    let ladder = builder().build(&lengths).unwrap().bucket_ladder(0).unwrap();
    let variants = [
        builder().rank(2),
        builder().rank(1).pad_to_multiple_of(64),
        builder()
            .rank(0)
            .pad_to_multiple_of(8)
            .length_buckets(&ladder),
        builder()
            .rank(1)
            .packed(true)
            .max_tokens(Some(8192))
            .pad_to_multiple_of(128),
    ];
    for (variant, b) in variants.into_iter().enumerate() {
        let sampler = b.build(&lengths).unwrap();
        let shapes = sampler.shapes(2).unwrap();
        assert!(!shapes.is_empty(), "variant {variant}");
        assert_eq!(
            shapes,
            walked_shapes(&sampler, 2, sampler.packed()),
            "variant {variant}"
        );
        if variant == 2 {
            assert!(shapes
                .iter()
                .all(|&(_, length)| ladder.contains(&(length as u32))));
        }
    }
}

#[test]
fn the_default_ladder_holds_every_sample_and_rounds_to_the_multiple() {
    let lengths = synthetic_lengths(500, 24);
    let longest = *lengths.iter().max().unwrap();
    let sampler = builder().build(&lengths).unwrap();
    let ladder = sampler.bucket_ladder(0).unwrap();
    assert!(ladder.windows(2).all(|w| w[0] < w[1]), "{ladder:?}");
    assert!(*ladder.last().unwrap() >= longest);
    // four per doubling by default: no bucket more than 25% above the one below
    for w in ladder.windows(2) {
        assert!(4 * u64::from(w[1]) <= 5 * (u64::from(w[0]) + 1), "{w:?}");
    }
    let coarse = sampler.bucket_ladder(1).unwrap();
    assert!(coarse.len() < ladder.len());
    let rounded = builder()
        .pad_to_multiple_of(64)
        .build(&lengths)
        .unwrap()
        .bucket_ladder(4)
        .unwrap();
    assert!(rounded.iter().all(|b| b % 64 == 0), "{rounded:?}");
    // a ladder of the sampler's own lengths always builds
    builder().length_buckets(&ladder).build(&lengths).unwrap();
}

#[test]
fn a_sample_above_the_last_bucket_is_refused_naming_it() {
    let mut lengths = synthetic_lengths(200, 25);
    lengths[17] = 300;
    let error = builder()
        .length_buckets(&[64, 128, 256])
        .build(&lengths)
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::SampleTooLong, "{error}");
    assert!(
        error.message().contains("last length bucket 256"),
        "{error}"
    );

    // set on a built sampler: refused the same way, the buckets kept
    let mut sampler = builder()
        .length_buckets(&[512, 4096])
        .build(&lengths)
        .unwrap();
    let error = sampler.set_length_buckets(&[64, 128, 256]).unwrap_err();
    assert_eq!(error.code(), ErrorCode::SampleTooLong, "{error}");
    assert!(error.message().contains("256"), "{error}");
    assert_eq!(sampler.length_buckets(), [512, 4096]);
    sampler.plan(0).unwrap();
}

#[test]
fn bad_buckets_and_options_are_refused_with_their_codes() {
    let lengths = synthetic_lengths(200, 26);
    let mut sampler = builder().build(&lengths).unwrap();
    let error = sampler.set_length_buckets(&[0, 64]).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument, "{error}");
    assert!(error.message().contains("buckets[0] is 0"), "{error}");
    let error = sampler.set_length_buckets(&[4096, 4096]).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument, "{error}");
    assert!(error.message().contains("strictly increasing"), "{error}");
    assert!(sampler.length_buckets().is_empty());
    let error = builder()
        .length_buckets(&[2048, 1024])
        .build(&lengths)
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument, "{error}");
    let error = sampler.bucket_ladder(65).unwrap_err();
    assert_eq!(error.code(), ErrorCode::OutOfRange, "{error}");
    for multiple in [0, 65537] {
        let error = builder()
            .pad_to_multiple_of(multiple)
            .build(&lengths)
            .unwrap_err();
        assert_eq!(error.code(), ErrorCode::OutOfRange, "{error}");
    }
    // a cap the padded length of the longest sample breaks
    let mut long: Vec<u32> = lengths.iter().map(|&l| l.min(900)).collect();
    long[0] = 1000;
    let error = builder()
        .max_tokens(Some(1010))
        .pad_to_multiple_of(64)
        .build(&long)
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::SampleTooLong, "{error}");
    assert!(error.message().contains("1024"), "{error}");
}
