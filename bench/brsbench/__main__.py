"""python -m brsbench <study> [options]: the one entry of the benchmarks (bench/README.md).

`python -m brsbench --list` prints the studies; `python -m brsbench <study> --help` its options.
Needs the brs package on PYTHONPATH (bindings/python) and BRS_LIBRARY pointing at libbrs.so.1;
bench/run builds the library and the C timer, then runs the `compare` and `same_samples` studies.
"""

import argparse
import importlib
import sys

from .results import command

# name -> (module under brsbench, one line of what it measures). A study module defines
# add_arguments(parser) and run(args) -> exit status; its docstring is its --help.
STUDIES = {
    "compare": ("compare", "libbrs against the peers on every distribution and layout: quality "
                "and planning speed; report.md, plots, results.json (what bench/run runs)"),
    "same_samples": ("same_samples", "brs against upstream on the same samples of every step, "
                     "both sync models, and at upstream's peak memory"),
    "packed_vs_verl": ("packed_vs_verl", "brs packed mode against verl's Karmarkar-Karp on the "
                       "same samples"),
    "rollouts": ("rollouts", "RL rollout batches: brs.plan_batch against verl's KK and a "
                 "token-budget greedy"),
    "shapes": ("shapes", "distinct micro-batch shapes: pad_to_multiple_of, length buckets, "
               "what a new shape costs"),
    "vocabulary": ("vocabulary", "max_shapes: distinct shapes over all ranks and epochs against "
                   "modelled step time (brs, upstream, group_by_length)"),
    "vocabulary_packed": ("vocabulary_packed", "max_shapes in packed mode: distinct row "
                          "totals over all ranks and epochs against modelled step time"),
    "compile_shapes": ("compile_shapes", "max_shapes under torch.compile(dynamic=False) on the "
                       "CPU: compiles and seconds of 40 steps per sampler, and eager first runs"),
    "vlm": ("vlm", "vision-language steps: brs with image loads against text-only samplers, "
            "modelled and measured on a tiny Qwen2-VL"),
    "plan_speed_ab": ("plan_speed_ab", "planning time of two builds of libbrs side by side "
                      "(bench/plan_speed.c compiled against each)"),
    "iteration_overhead": ("iteration_overhead", "Python overhead of iterating a "
                           "BatchRebalanceSampler, C planning time subtracted"),
    "cost_model_accuracy": ("cost_model_accuracy", "a calibrated cost model against held-out "
                            "micro-batch shapes on the CPU"),
    "model_families": ("model_families", "brs.calibrate's training-path fit on held-out shapes "
                       "for tiny GPT-2, Qwen2, Llama, Mistral, Qwen2-MoE and Qwen2-VL (CPU)"),
    "train_e2e": ("e2e.train", "measured training throughput of a small decoder with each "
                  "sampler (CPU, or a GPU sweep until OOM)"),
    "same_shapes": ("e2e.same_shapes", "brs against upstream on the same samples, every "
                    "micro-batch shape's time measured"),
    "online": ("e2e.online", "online calibration: the refit cost model against the one it "
               "replaced, trained on the CPU"),
    "sweep": ("e2e.sweep", "the batch-size sweep of train_e2e results in the terms of "
              "upstream's claims (table, plot)"),
    "context_parallel": ("context_parallel", "dynamic context parallelism, modelled: brs "
                         "against a fixed CP degree and megatron-core's scheduler on long tails, "
                         "under the defaults and a CPU-fitted cost model"),
    "lengths": ("lengths", "print one of the training benchmarks' datasets, one length per line"),
}


def module(name: str):
    return importlib.import_module(f".{STUDIES[name][0]}", __package__)


def parser(study: str | None) -> argparse.ArgumentParser:
    """The one parser: a subparser per study, whose arguments (those of `study` only, so that
    --list and the other studies do not import it) its module adds."""
    ap = argparse.ArgumentParser(prog="python -m brsbench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the studies and what each measures")
    sub = ap.add_subparsers(dest="study", metavar="<study>")
    for name, (_, line) in STUDIES.items():
        if name == study:
            mod = module(name)
            p = sub.add_parser(name, help=line, description=mod.__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
            mod.add_arguments(p)
            p.set_defaults(run=mod.run)
        else:
            sub.add_parser(name, help=line, add_help=False)
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    study = next((a for a in argv if not a.startswith("-")), None)
    ap = parser(study if study in STUDIES else None)
    args = ap.parse_args(argv)
    if args.list:
        width = max(map(len, STUDIES))
        for name, (_, line) in STUDIES.items():
            print(f"{name:<{width}}  {line}")
        return 0
    if args.study is None:
        ap.print_help()
        return 2
    args.invocation = command(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
