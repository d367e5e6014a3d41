//! Prints the plan of one step for a lengths file (one positive integer a line):
//!
//!     cargo run --example plan -- data/gsm8k_train.lengths [dp_size] [grad_accum] [per_device_batch_size] [max_tokens]

use brs::Sampler;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("plan: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or("usage: plan LENGTHS [dp_size] [grad_accum] [batch_size] [max_tokens]")?;
    let number = |i: usize, default: u64| args.get(i).map_or(Ok(default), |a| a.parse::<u64>());
    let lengths = std::fs::read_to_string(path)?
        .lines()
        .map(|line| line.trim().parse::<u32>())
        .collect::<Result<Vec<u32>, _>>()?;
    let cap = number(4, 0)?;
    let sampler = Sampler::builder()
        .dp_size(number(1, 4)?)
        .grad_accum(number(2, 2)?)
        .per_device_batch_size(number(3, 8)?)
        .max_tokens(Some(cap).filter(|&c| c > 0))
        .build_borrowed(&lengths)?;
    println!(
        "libbrs {}, {} samples, {} steps per epoch, fingerprint {:016x}",
        brs::version(),
        lengths.len(),
        sampler.steps_per_epoch()?,
        sampler.fingerprint()?
    );
    let plan = sampler.plan(0)?;
    for rank in 0..plan.dp_size() {
        for micro in 0..plan.grad_accum() {
            let stats = plan.micro_batch_stats(rank, micro)?;
            let batch = plan.micro_batch(rank, micro)?;
            println!(
                "rank {rank} micro {micro}: {:3} samples, {:6} padded tokens, cost {:10.1}",
                batch.len(),
                stats.padded_tokens,
                stats.cost
            );
        }
    }
    println!("{:#?}", plan.stats());
    Ok(())
}
