"""brs.trial: will brs pay on my setup? A paired A/B of brs against its peers on the user's own
model, lengths and device (docs/trial.md).

    results = brs.trial("model_dir", "train.lengths", per_device_batch_size=4, grad_accum=2,
                        dp_size=8, pad_to_multiple_of=64, steps=12, out="trial")
    print(results["verdict"])

run.py is trial itself, its steps in order, and config.py its arguments checked into one
TrialConfig. plans.py gives each strategy's epoch (brs, transformers' upstream
BatchRebalanceSampler on the same samples, the library's length_grouped and random);
measure.py builds the micro-batches and runs them through calibration's measurement layer
(brs/calibration/timing.py's clock and training step, memory.py's peak probe, progress.py);
largest.py finds the largest per-device batch under the memory budget; rounds.py takes the
measurements in order, clocks.py times a step (the sync model's arithmetic in one process,
the wall clock between barriers under torchrun), distributed.py is the process group;
results.py and stats.py make the results and statistics, output.py writes results.json,
report.md and trial.png; cli.py is ``python -m brs trial``.
"""

from .run import trial

__all__ = ["trial"]
