//! Where a step's time goes (PlanStats::step_time and its split): the
//! ranks' time is useful + padding + waiting, and waiting is the slowest
//! rank's time minus each rank's, from the micro-batches' own costs.

mod common;

use brs::Sampler;
use common::synthetic_lengths;

#[test]
fn the_ranks_time_is_useful_plus_padding_plus_waiting() {
    let lengths = synthetic_lengths(400, 7);
    let sampler = Sampler::builder()
        .per_device_batch_size(4)
        .grad_accum(2)
        .dp_size(3)
        .seed(2)
        .pad_to_multiple_of(16)
        .build(&lengths)
        .unwrap();
    for step in 0..3 {
        let plan = sampler.plan(step).unwrap();
        let stats = plan.stats();
        let costs: Vec<Vec<f64>> = (0..3)
            .map(|r| {
                (0..2)
                    .map(|m| plan.micro_batch_stats(r, m).unwrap().cost)
                    .collect()
            })
            .collect();
        // the default sync model, micro_step: each micro-step waits for its slowest rank
        let waiting: f64 = (0..2)
            .map(|m| {
                let slowest = costs.iter().map(|rank| rank[m]).fold(0.0, f64::max);
                costs.iter().map(|rank| slowest - rank[m]).sum::<f64>()
            })
            .sum();
        let whole = stats.useful_time + stats.padding_time + stats.waiting_time;
        assert!((stats.step_time - stats.micro_sync_time).abs() <= 1e-9 * stats.step_time);
        assert!((whole - 3.0 * stats.step_time).abs() <= 1e-9 * whole);
        assert!((stats.waiting_time - waiting).abs() <= 1e-6 * whole);
        assert!(stats.padding_time > 0.0 && stats.useful_time > 0.0);
    }
}
