"""torchrun --nproc_per_node=2 (gloo, CPU): brs.trial with one process per dp rank on a tiny
GPT-2 (test_trial_torchrun.py).

    trial_torchrun.py api OUT   the script's own process group (as a training script has):
                                brs.trial with a dp_size that disagrees with the world size,
                                then with a memory budget no batch fits (their ValueErrors
                                recorded), then dp_size 2 with out=OUT/rankR;
                                each rank writes what it got to OUT/returned-R.json
    trial_torchrun.py cli OUT   python -m brs trial's main, the group left to the trial (it
                                creates it from torchrun's environment) on OUT/tiny-gpt2 and
                                OUT/tiny.lengths: --dp-size 3 (exit status recorded), then the
                                default dp_size with --out OUT/cli; each rank writes its exit
                                statuses and what it printed to OUT/status-R.json
"""

import contextlib
import io
import json
import os
import pathlib
import sys

import brs_testing

TINY_GPT2 = {"n_layer": 1, "n_embd": 32, "n_head": 2, "vocab_size": 100, "n_positions": 1024,
             "bos_token_id": 0, "eos_token_id": 0}
LENGTHS = [12, 40, 7, 90, 33, 150, 18, 64, 25, 110, 9, 48, 71, 15, 200, 30, 55, 22, 80, 13,
           37, 95, 28, 60, 44, 17, 130, 26, 52, 11, 75, 39]
STRATEGIES = ("brs", "upstream", "random")
JOB = {"per_device_batch_size": 2, "grad_accum": 2, "steps": 2, "pad_to_multiple_of": 16,
       "device": "cpu", "progress": False}


def api(out):
    import brs
    from transformers import GPT2Config

    config = GPT2Config(**TINY_GPT2)
    with brs_testing.process_group() as dist:
        rank = dist.get_rank()
        refused = _refusal(brs.trial, config, LENGTHS, dp_size=3, strategies=STRATEGIES, **JOB)
        too_small = _refusal(brs.trial, config, LENGTHS, strategies=("brs",),
                             memory_budget="64KiB", **JOB)
        results = brs.trial(config, LENGTHS, dp_size=2, strategies=STRATEGIES,
                            out=out / f"rank{rank}", **JOB)
        (out / f"returned-{rank}.json").write_text(json.dumps(
            {"rank": rank, "refused": refused, "too_small": too_small, "results": results},
            default=repr))
    brs_testing.leave_after_teardown()


def _refusal(call, *args, **kwargs):
    """The ValueError's message of call(*args, **kwargs), or None where it ran."""
    try:
        call(*args, **kwargs)
    except ValueError as exc:
        return str(exc)
    return None


def cli(out):
    """OUT holds tiny-gpt2/config.json and tiny.lengths (the test writes them)."""
    from brs._trial import cli as trial_cli

    job = ["--model", str(out / "tiny-gpt2"), "--lengths", str(out / "tiny.lengths"),
           "--per-device-batch-size", "2", "--grad-accum", "2", "--steps", "2",
           "--pad-to-multiple-of", "16", "--device", "cpu", "--no-progress"]
    runs = {"refused": [*job, "--out", str(out / "refused"), "--dp-size", "3"],
            "run": [*job, "--out", str(out / "cli")]}
    got = {}
    for what, argv in runs.items():
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = trial_cli.main(argv)
        got[what] = {"status": status, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}
    (out / f"status-{os.environ['RANK']}.json").write_text(json.dumps(got))
    # no os._exit here: the trial created and destroyed the group itself, and the command
    # must then end cleanly on its own, as it does for a user


if __name__ == "__main__":
    {"api": api, "cli": cli}[sys.argv[1]](pathlib.Path(sys.argv[2]))
