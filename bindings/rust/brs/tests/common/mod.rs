//! Helpers shared by the integration tests: test data and per-rank runs.
#![allow(dead_code)] // each test file uses a part

pub mod json;

use brs::SamplerBuilder;
use std::path::PathBuf;

/// The repository root (bindings/rust/brs is three levels below it).
pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// The first `count` lengths of data/<name>.lengths (real token counts).
pub fn data_lengths(name: &str, count: usize) -> Vec<u32> {
    let path = repository().join("data").join(format!("{name}.lengths"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let lengths: Vec<u32> = text
        .lines()
        .take(count)
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(lengths.len(), count, "{} is too short", path.display());
    lengths
}

/// Long-tailed lengths in [1, 2048] from a fixed SplitMix64 stream, so a
/// failure reproduces.
pub fn synthetic_lengths(count: usize, seed: u64) -> Vec<u32> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            (((z % 64) + 1) << ((z >> 32) % 6)) as u32
        })
        .collect()
}

/// Every rank's micro-batches of `epoch`, as each rank's iterator yields them.
pub fn run_all_ranks(builder: &SamplerBuilder, lengths: &[u32], epoch: u64) -> Vec<Vec<Vec<u64>>> {
    let dp_size = builder.build(lengths).unwrap().dp_size();
    (0..dp_size)
        .map(|rank| {
            let mut sampler = builder.clone().rank(rank).build(lengths).unwrap();
            sampler.set_epoch(epoch);
            sampler
                .micro_batches()
                .unwrap()
                .map(Result::unwrap)
                .collect()
        })
        .collect()
}

/// How often each dataset index appears in `batches`.
pub fn occurrences(batches: &[Vec<Vec<u64>>], n: usize) -> Vec<usize> {
    let mut seen = vec![0; n];
    for index in batches.iter().flatten().flatten() {
        seen[*index as usize] += 1;
    }
    seen
}
