//! The semantics every binding exposes (docs/design.md section 2), through the
//! safe crate: coverage, equal counts, determinism, random access, elastic
//! steps, the cap, and the plan's statistics.

mod common;

use brs::{ErrorCode, Sampler, SamplerBuilder};
use common::{data_lengths, occurrences, run_all_ranks, synthetic_lengths};
use std::collections::BTreeSet;

fn builder(p: u64, grad_accum: u64, dp_size: u64, drop_last: bool) -> SamplerBuilder {
    Sampler::builder()
        .per_device_batch_size(p)
        .grad_accum(grad_accum)
        .dp_size(dp_size)
        .seed(17)
        .drop_last(drop_last)
}

#[test]
fn drop_last_covers_every_kept_index_once_and_drops_only_the_tail() {
    let lengths = data_lengths("gsm8k_train", 1000);
    for (p, ga, dp) in [(4, 2, 3), (8, 1, 4), (3, 3, 2), (1, 1, 1)] {
        let b = (p * ga * dp) as usize;
        let batches = run_all_ranks(&builder(p, ga, dp, true), &lengths, 0);
        let seen = occurrences(&batches, lengths.len());
        assert!(
            seen.iter().all(|&c| c <= 1),
            "an index repeats (P={p} GA={ga} DP={dp})"
        );
        let kept = seen.iter().filter(|&&c| c == 1).count();
        assert_eq!(kept, lengths.len() / b * b, "P={p} GA={ga} DP={dp}");
    }
}

#[test]
fn keeping_the_last_step_covers_everything_and_repeats_only_the_top_up() {
    let lengths = synthetic_lengths(203, 5);
    for (p, ga, dp) in [(4, 2, 3), (50, 1, 2), (7, 1, 1), (10, 2, 5), (4, 4, 4)] {
        let (b, k) = ((p * ga * dp) as usize, (ga * dp) as usize);
        let batches = run_all_ranks(&builder(p, ga, dp, false), &lengths, 2);
        let seen = occurrences(&batches, lengths.len());
        assert!(
            seen.iter().all(|&c| c >= 1),
            "an index is missing (P={p} GA={ga} DP={dp})"
        );
        let remainder = lengths.len() % b;
        let top_up = if remainder == 0 {
            0
        } else {
            k.saturating_sub(remainder)
        };
        let total: usize = seen.iter().sum();
        assert_eq!(total, lengths.len() + top_up, "P={p} GA={ga} DP={dp}");
    }
}

#[test]
fn a_single_sample_fills_every_micro_batch_when_the_last_step_is_kept() {
    let batches = run_all_ranks(&builder(1, 4, 2, false), &[123], 0);
    assert_eq!(batches.len(), 2);
    for rank in &batches {
        assert_eq!(rank, &vec![vec![0u64]; 4]);
    }
}

#[test]
fn every_rank_gets_the_same_number_of_non_empty_micro_batches() {
    let lengths = data_lengths("jargon", 500);
    let b = builder(5, 3, 4, false);
    let expected = b
        .build(&lengths)
        .unwrap()
        .micro_batches_per_epoch()
        .unwrap();
    let steps = b.build(&lengths).unwrap().steps_per_epoch().unwrap();
    assert_eq!(steps, 500u64.div_ceil(60));
    assert_eq!(expected, steps * 3);
    for rank_batches in run_all_ranks(&b, &lengths, 1) {
        assert_eq!(rank_batches.len() as u64, expected);
        assert!(rank_batches.iter().all(|batch| !batch.is_empty()));
    }
}

#[test]
fn the_iterator_reports_its_exact_length_and_resumes_with_skip() {
    let lengths = synthetic_lengths(400, 9);
    let sampler = builder(4, 2, 2, true).rank(1).build(&lengths).unwrap();
    let all: Vec<Vec<u64>> = sampler
        .micro_batches()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut iter = sampler.micro_batches().unwrap();
    assert_eq!(iter.len(), all.len());
    iter.next();
    assert_eq!(iter.len(), all.len() - 1);
    let resumed: Vec<Vec<u64>> = sampler
        .micro_batches()
        .unwrap()
        .skip(13)
        .map(Result::unwrap)
        .collect();
    assert_eq!(resumed, all[13..]);
    let mut jumped = sampler.micro_batches().unwrap();
    assert_eq!(jumped.nth(7).unwrap().unwrap(), all[7]);
    assert_eq!(jumped.position(), 8);
    assert!(sampler.micro_batches().unwrap().nth(all.len()).is_none());
}

#[test]
fn each_rank_iterates_its_own_slots_of_the_plan() {
    let lengths = data_lengths("fortunes", 300);
    let b = builder(4, 3, 2, true);
    let by_rank = run_all_ranks(&b, &lengths, 4);
    let mut sampler = b.build(&lengths).unwrap();
    sampler.set_epoch(4);
    for step in 0..sampler.steps_per_epoch().unwrap() {
        let plan = sampler.plan(step).unwrap();
        for (rank, batches) in by_rank.iter().enumerate() {
            for micro in 0..3 {
                let position = (step * 3 + micro) as usize;
                let slot = plan.micro_batch(rank as u64, micro).unwrap();
                assert_eq!(
                    batches[position], slot,
                    "step {step} rank {rank} micro {micro}"
                );
            }
        }
    }
}

#[test]
fn the_same_inputs_give_the_same_plans_and_fingerprint() {
    let lengths = synthetic_lengths(500, 1);
    let b = builder(6, 2, 2, false).alpha(0.002).intercept(10.0);
    assert_eq!(
        run_all_ranks(&b, &lengths, 3),
        run_all_ranks(&b, &lengths, 3)
    );
    let (one, two) = (b.build(&lengths).unwrap(), b.build(&lengths).unwrap());
    assert_eq!(one.fingerprint().unwrap(), two.fingerprint().unwrap());
    let (a, c) = (one.plan_at(3, 2).unwrap(), two.plan_at(3, 2).unwrap());
    assert_eq!(a.micro_batches(), c.micro_batches());
    assert_eq!(a.stats(), c.stats());
}

#[test]
fn the_fingerprint_ignores_the_rank_and_follows_everything_else() {
    let lengths = synthetic_lengths(300, 2);
    let base = builder(4, 2, 4, true);
    let fingerprint =
        |b: SamplerBuilder, lengths: &[u32]| b.build(lengths).unwrap().fingerprint().unwrap();
    let reference = fingerprint(base.clone(), &lengths);
    assert_eq!(fingerprint(base.clone().rank(3), &lengths), reference);
    assert_ne!(fingerprint(base.clone().seed(18), &lengths), reference);
    assert_ne!(fingerprint(base.clone().grad_accum(1), &lengths), reference);
    assert_ne!(
        fingerprint(base.clone().max_tokens(Some(1 << 20)), &lengths),
        reference
    );
    let mut changed = lengths.clone();
    changed[100] += 1;
    assert_ne!(fingerprint(base, &changed), reference);
}

#[test]
fn the_stream_fingerprint_ignores_the_split_and_follows_the_stream() {
    let lengths = synthetic_lengths(300, 2);
    let base = builder(4, 2, 4, true);
    let stream = |b: SamplerBuilder, lengths: &[u32]| {
        b.build(lengths).unwrap().stream_fingerprint().unwrap()
    };
    let reference = stream(base.clone(), &lengths);
    // the same global batch of 32, split otherwise
    assert_eq!(stream(builder(8, 4, 1, true), &lengths), reference);
    assert_eq!(stream(base.clone().rank(3), &lengths), reference);
    assert_ne!(stream(base.clone().seed(18), &lengths), reference);
    assert_ne!(stream(base.clone().shuffle(false), &lengths), reference);
    assert_ne!(stream(builder(4, 2, 4, false), &lengths), reference);
    let mut changed = lengths.clone();
    changed[100] += 1;
    assert_ne!(stream(base, &changed), reference);
}

#[test]
fn seeds_and_epochs_draw_different_orders_and_the_key_is_not_their_sum() {
    let lengths = synthetic_lengths(256, 3);
    let order = |seed: u64, epoch: u64| {
        let b = builder(8, 1, 1, true).seed(seed);
        run_all_ranks(&b, &lengths, epoch)
    };
    assert_ne!(order(0, 0), order(0, 1));
    assert_ne!(order(0, 0), order(1, 0));
    assert_ne!(
        order(0, 1),
        order(1, 0),
        "(seed 0, epoch 1) must not equal (seed 1, epoch 0)"
    );
}

#[test]
fn without_shuffle_steps_take_the_samples_in_index_order() {
    let lengths = synthetic_lengths(64, 4);
    let sampler = builder(4, 2, 2, true)
        .shuffle(false)
        .build(&lengths)
        .unwrap();
    for step in 0..4u64 {
        let plan = sampler.plan(step).unwrap();
        let drawn: BTreeSet<u64> = plan
            .micro_batches()
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        assert_eq!(drawn, (step * 16..step * 16 + 16).collect());
    }
}

#[test]
fn a_step_draws_the_same_samples_whatever_the_split_into_ranks() {
    let lengths = data_lengths("manpages", 480);
    let samples = |b: SamplerBuilder| -> Vec<BTreeSet<u64>> {
        let sampler = b.seed(99).build(&lengths).unwrap();
        (0..sampler.steps_per_epoch().unwrap())
            .map(|step| {
                sampler
                    .plan_at(1, step)
                    .unwrap()
                    .micro_batches()
                    .into_iter()
                    .flatten()
                    .flatten()
                    .collect()
            })
            .collect()
    };
    let by_dp = samples(builder(6, 1, 8, true));
    assert_eq!(by_dp.len(), 10);
    assert_eq!(samples(builder(6, 4, 2, true)), by_dp);
    assert_eq!(samples(builder(12, 2, 2, true)), by_dp);
}

#[test]
fn borrowed_lengths_plan_like_copied_ones() {
    let lengths = synthetic_lengths(200, 6);
    let b = builder(5, 2, 2, false).rank(1);
    let copied = b.build(&lengths).unwrap();
    let borrowed = b.build_borrowed(&lengths).unwrap();
    assert_eq!(
        copied.fingerprint().unwrap(),
        borrowed.fingerprint().unwrap()
    );
    let from = |s: &Sampler<'_>| {
        s.micro_batches()
            .unwrap()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
    };
    assert_eq!(from(&copied), from(&borrowed));
}

#[test]
fn the_builder_options_reach_the_library() {
    let lengths = synthetic_lengths(100, 7);
    let sampler = Sampler::builder()
        .per_device_batch_size(3)
        .grad_accum(2)
        .dp_size(4)
        .rank(2)
        .seed(5)
        .shuffle(false)
        .drop_last(false)
        .alpha(0.0123456789)
        .intercept(7.5)
        .max_tokens(Some(1 << 16))
        .packed(true)
        .build(&lengths)
        .unwrap();
    assert_eq!(
        (sampler.per_device_batch_size(), sampler.grad_accum()),
        (3, 2)
    );
    assert_eq!(
        (sampler.dp_size(), sampler.rank(), sampler.seed()),
        (4, 2, 5)
    );
    assert!(!sampler.shuffle() && !sampler.drop_last() && sampler.packed());
    assert_eq!(sampler.max_tokens(), Some(1 << 16));
    assert_eq!(sampler.alpha(), 0.012346, "alpha is resolved to 1e-6");
    assert_eq!(sampler.intercept(), 7.5);
    let defaults = Sampler::builder().build(&lengths).unwrap();
    assert_eq!(
        (defaults.per_device_batch_size(), defaults.dp_size()),
        (8, 1)
    );
    assert_eq!(defaults.max_tokens(), None);
    assert!(defaults.shuffle() && defaults.drop_last() && !defaults.packed());
}

#[test]
fn set_epoch_moves_the_iterator_and_the_plans_to_that_epoch() {
    let lengths = synthetic_lengths(120, 8);
    let mut sampler = builder(4, 1, 3, true).build(&lengths).unwrap();
    assert_eq!(sampler.epoch(), 0);
    sampler.set_epoch(5);
    assert_eq!(sampler.epoch(), 5);
    assert_eq!(sampler.plan(1).unwrap().epoch(), 5);
    assert_eq!(
        sampler.plan(1).unwrap().micro_batches(),
        sampler.plan_at(5, 1).unwrap().micro_batches()
    );
    let first = sampler.micro_batches().unwrap().next().unwrap().unwrap();
    assert_eq!(
        first,
        sampler.plan_at(5, 0).unwrap().micro_batch(0, 0).unwrap()
    );
}

#[test]
fn the_statistics_describe_the_micro_batches() {
    let lengths = data_lengths("gsm8k_train", 700);
    let b = builder(5, 2, 3, true).alpha(0.01).intercept(3.0);
    let plan = b.build(&lengths).unwrap().plan_at(2, 4).unwrap();
    let stats = plan.stats();
    assert_eq!((stats.epoch, stats.step, stats.num_samples), (2, 4, 30));
    assert_eq!((stats.dp_size, stats.grad_accum), (3, 2));
    let (mut padded, mut real, mut peak, mut max_cost) = (0, 0, 0, 0f64);
    for rank in 0..3 {
        for micro in 0..2 {
            let batch = plan.micro_batch(rank, micro).unwrap();
            let batch_lengths: Vec<u64> =
                batch.iter().map(|&i| lengths[i as usize] as u64).collect();
            let longest = *batch_lengths.iter().max().unwrap();
            assert_eq!(batch_lengths[0], longest, "longest sample first");
            let one = plan.micro_batch_stats(rank, micro).unwrap();
            assert_eq!(one.padded_tokens, longest * batch.len() as u64);
            assert_eq!(one.real_tokens, batch_lengths.iter().sum::<u64>());
            padded += one.padded_tokens;
            real += one.real_tokens;
            peak = peak.max(one.padded_tokens);
            max_cost = max_cost.max(one.cost);
        }
    }
    assert_eq!(
        (stats.total_padded_tokens, stats.total_real_tokens),
        (padded, real)
    );
    assert_eq!((stats.max_padded_tokens, stats.max_cost), (peak, max_cost));
    assert!(stats.lower_bound <= stats.max_cost);
    assert!(stats.time_lower_bound <= stats.micro_sync_time.min(stats.step_sync_time));
}

#[test]
fn a_feasible_cap_bounds_every_micro_batch() {
    let lengths = data_lengths("fortunes", 480);
    let longest = *lengths.iter().max().unwrap() as u64;
    let cap = longest * 3;
    let b = builder(6, 2, 2, true).max_tokens(Some(cap));
    let sampler = b.build(&lengths).unwrap();
    let mut planned = 0;
    for step in 0..sampler.steps_per_epoch().unwrap() {
        match sampler.plan(step) {
            Ok(plan) => {
                planned += 1;
                assert!(plan.stats().max_padded_tokens <= cap, "step {step}");
            }
            // A step whose samples need more than K micro-batches under the cap.
            Err(error) => assert_eq!(error.code(), ErrorCode::CapInfeasible, "{error}"),
        }
    }
    assert!(planned > 0, "no step met the cap of {cap}");
}

#[test]
fn a_sampler_and_its_plans_can_move_to_another_thread() {
    fn assert_send<T: Send>(_: &T) {}
    let lengths = synthetic_lengths(64, 10);
    let sampler = builder(4, 1, 2, true).build(&lengths).unwrap();
    let here = sampler.plan(1).unwrap().micro_batches();
    assert_send(&sampler);
    let there = std::thread::spawn(move || sampler.plan(1).unwrap())
        .join()
        .unwrap();
    assert_eq!(there.micro_batches(), here);
}

#[test]
fn the_version_is_the_loaded_library_of_major_one() {
    assert_eq!(brs::version_number() / 10000, brs::VERSION_MAJOR);
    let n = brs::version_number();
    assert_eq!(
        brs::version(),
        format!("{}.{}.{}", n / 10000, n / 100 % 100, n % 100)
    );
}
