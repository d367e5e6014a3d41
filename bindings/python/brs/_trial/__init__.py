"""brs.trial: will brs pay on my setup? A paired A/B of brs against its peers on the user's own
model, lengths and device (docs/trial.md).

    results = brs.trial("model_dir", "train.lengths", per_device_batch_size=4, grad_accum=2,
                        dp_size=8, pad_to_multiple_of=64, steps=12, out="trial")
    print(results["verdict"])

plans.py gives each strategy's epoch (brs, transformers' upstream BatchRebalanceSampler on the
same samples, the library's length_grouped and random), measure.py builds the micro-batches
and times and measures them, largest.py finds the largest per-device batch under the memory
budget, stats.py holds the statistics, run.py is trial itself (its clock: the sync model's
arithmetic in one process, the wall clock between barriers under torchrun), distributed.py its
process group, and output.py writes results.json, report.md and trial.png; cli.py is
``python -m brs trial``.
"""

from .run import trial

__all__ = ["trial"]
