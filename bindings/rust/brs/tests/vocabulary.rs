//! max_shapes and the shape vocabulary through the safe crate: none without
//! it; with it, at most max_shapes sorted pairs that hold every micro-batch
//! of every rank in every epoch; packed rows (1, total) need max_tokens. Named option values
//! are found by the library.

mod common;

use brs::{ErrorCode, Sampler, SamplerBuilder, Value};
use common::synthetic_lengths;
use std::collections::BTreeSet;

fn builder() -> SamplerBuilder {
    Sampler::builder()
        .per_device_batch_size(4)
        .grad_accum(2)
        .dp_size(3)
        .seed(5)
}

/// The distinct (size, padded length) of the rank's micro-batches in `epoch`.
fn walked_shapes(sampler: &Sampler<'_>, epoch: u64) -> BTreeSet<(u64, u64)> {
    let mut shapes = BTreeSet::new();
    for step in 0..sampler.steps_per_epoch().unwrap() {
        let plan = sampler.plan_at(epoch, step).unwrap();
        for micro in 0..plan.grad_accum() {
            let size = plan.micro_batch(sampler.rank(), micro).unwrap().len() as u64;
            let padded = plan
                .micro_batch_stats(sampler.rank(), micro)
                .unwrap()
                .padded_tokens;
            shapes.insert((size, padded / size));
        }
    }
    shapes
}

#[test]
fn no_vocabulary_without_max_shapes() {
    let lengths = synthetic_lengths(600, 31);
    let sampler = builder().build(&lengths).unwrap();
    assert_eq!(sampler.option("max_shapes").unwrap(), Value::Int(0));
    assert!(sampler.shape_vocabulary().unwrap().is_empty());
}

#[test]
fn every_rank_and_epoch_runs_shapes_of_the_vocabulary() {
    let lengths = synthetic_lengths(600, 31);
    let most = 8u64;
    let mut first: Option<Vec<(u64, u64)>> = None;
    for rank in 0..3 {
        let sampler = builder()
            .rank(rank)
            .option("max_shapes", most)
            .build(&lengths)
            .unwrap();
        let vocabulary = sampler.shape_vocabulary().unwrap();
        assert!(
            !vocabulary.is_empty() && vocabulary.len() as u64 <= most,
            "{vocabulary:?}"
        );
        assert!(vocabulary.windows(2).all(|w| w[0] < w[1]), "{vocabulary:?}");
        // the same on every rank
        match &first {
            Some(other) => assert_eq!(&vocabulary, other, "rank {rank}"),
            None => first = Some(vocabulary.clone()),
        }
        for epoch in 0..2 {
            for shape in walked_shapes(&sampler, epoch) {
                assert!(
                    vocabulary.contains(&shape),
                    "rank {rank} epoch {epoch}: {shape:?}"
                );
            }
        }
    }
}

#[test]
fn packed_rows_need_a_cap_and_run_at_vocabulary_rows() {
    let lengths = synthetic_lengths(600, 31);
    let uncapped = builder()
        .packed(true)
        .option("max_shapes", 8u64)
        .build(&lengths);
    let error = match uncapped {
        Ok(sampler) => sampler.shape_vocabulary().unwrap_err(),
        Err(error) => error,
    };
    assert_eq!(error.code(), ErrorCode::Unsupported, "{error}");
    assert!(error.to_string().contains("max_tokens"), "{error}");

    let sampler = builder()
        .packed(true)
        .max_tokens(Some(16384))
        .option("max_shapes", 8u64)
        .build(&lengths)
        .unwrap();
    let vocabulary = sampler.shape_vocabulary().unwrap();
    assert!(!vocabulary.is_empty() && vocabulary.len() <= 8, "{vocabulary:?}");
    assert!(vocabulary.iter().all(|&(size, _)| size == 1), "{vocabulary:?}");
    assert_eq!(vocabulary.last().unwrap().1, 16384);
    for step in 0..sampler.steps_per_epoch().unwrap() {
        let plan = sampler.plan_at(0, step).unwrap();
        for micro in 0..plan.grad_accum() {
            let padded = plan.micro_batch_stats(sampler.rank(), micro).unwrap().padded_tokens;
            assert!(vocabulary.contains(&(1, padded)), "step {step}: row of {padded}");
        }
    }
}

#[test]
fn named_values_are_the_librarys() {
    let lengths = synthetic_lengths(200, 32);
    let sampler = builder()
        .option("strategy", "length_grouped")
        .option("sync", "step")
        .build(&lengths)
        .unwrap();
    assert_eq!(sampler.option("strategy").unwrap(), Value::Int(2));
    assert_eq!(sampler.option("sync").unwrap(), Value::Int(1));
    for bad in ["Random", "", "random\0"] {
        let error = builder()
            .option("strategy", bad)
            .build(&lengths)
            .unwrap_err();
        assert_eq!(error.code(), ErrorCode::OutOfRange, "{bad:?}: {error}");
    }
    let error = builder()
        .option("seed", "random")
        .build(&lengths)
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument, "{error}");
}
