//! Context parallelism through the safe crate: every global rank of a
//! dp_size x cp_size world reads its micro-batch, its group (aligned, the
//! same indices on every rank of it) and its token ranges; the ranges of a
//! group cover each sample once and every sample of the epoch is planned
//! once.

mod common;

use brs::Sampler;
use common::synthetic_lengths;

#[test]
fn every_rank_reads_its_group_and_ranges() {
    let lengths = synthetic_lengths(480, 7);
    let (dp, cp, ga) = (2u64, 4u64, 2u64);
    let sampler = Sampler::builder()
        .per_device_batch_size(4)
        .grad_accum(ga)
        .dp_size(dp)
        .packed(true)
        .option("cp_size", cp as i64)
        .option("max_tokens_per_rank", 2048i64)
        .seed(3)
        .build(&lengths)
        .unwrap();
    let mut seen = vec![0u64; lengths.len()];
    let mut covered = vec![0u64; lengths.len()];
    for step in 0..sampler.steps_per_epoch().unwrap() {
        let plan = sampler.plan(step).unwrap();
        assert_eq!(plan.cp_micro_steps().unwrap(), ga);
        for micro in 0..ga {
            for rank in 0..dp * cp {
                let mb = plan.cp_micro_batch(rank, micro).unwrap();
                assert!(mb.first_rank % mb.degree == 0);
                assert!(mb.first_rank <= rank && rank < mb.first_rank + mb.degree);
                let first = plan.cp_micro_batch(mb.first_rank, micro).unwrap();
                assert_eq!(first.indices, mb.indices);
                let stats = plan.cp_micro_batch_stats(rank, micro).unwrap();
                assert!(stats.padded_tokens <= 2048);
                let ranges = plan.cp_token_ranges(rank, micro).unwrap();
                let mut real = 0;
                for (index, start, end) in ranges {
                    assert!(mb.indices.contains(&index));
                    assert!(start < end && end <= lengths[index as usize] as u64);
                    covered[index as usize] += end - start;
                    real += end - start;
                }
                assert_eq!(real, stats.real_tokens);
                if rank == mb.first_rank {
                    for &index in mb.indices {
                        seen[index as usize] += 1;
                    }
                }
            }
        }
    }
    for (i, &length) in lengths.iter().enumerate() {
        assert_eq!(seen[i], 1);
        assert_eq!(covered[i], length as u64);
    }
    assert!(plan_out_of_range(&sampler, dp * cp));
}

fn plan_out_of_range(sampler: &Sampler<'_>, ranks: u64) -> bool {
    let plan = sampler.plan(0).unwrap();
    plan.cp_micro_batch(ranks, 0).is_err() && plan.cp_token_ranges(0, 99).is_err()
}
