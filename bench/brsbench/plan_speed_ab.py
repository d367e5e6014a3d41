"""python -m brsbench plan_speed_ab: planning time of two builds of libbrs side by side: bench/plan_speed.c compiled against each,
run in interleaved rounds on the same configurations (B = 4096, K = 1024 as 64 x 16 x 4 by
default), under both sync models. Prints a markdown table of the medians per step.

    cc -O2 -std=c11 -I include bench/plan_speed.c OLD/libbrs/libbrs.so.1 -Wl,-rpath,OLD/libbrs -lm -o before
    cc -O2 -std=c11 -I include bench/plan_speed.c NEW/libbrs/libbrs.so.1 -Wl,-rpath,NEW/libbrs -lm -o after
    python3 -m brsbench plan_speed_ab --before ./before --after ./after
"""

import json
import statistics
import subprocess


def median_ms(binary: str, dist: str, sync: str, layout: list[str]) -> float:
    out = subprocess.run([binary, *layout, "--dist", dist, "--sync", sync, "--steps", "4", "--reps", "12"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["median_ns_per_step"] / 1e6


def add_arguments(ap) -> None:
    ap.add_argument("--before", required=True, help="plan_speed built against the old library")
    ap.add_argument("--after", required=True, help="plan_speed built against the new library")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved runs of each (default 5)")
    ap.add_argument("--layout", default="64x16x4", help="dp x grad_accum x batch size (default 64x16x4)")


def run(args) -> int:
    dp, ga, bs = args.layout.split("x")
    layout = ["--dp-size", dp, "--grad-accum", ga, "--batch-size", bs]
    print(f"| lengths | sync | before ms/step, median [min, max] | after ms/step, median [min, max] "
          f"| before / after, median of rounds |\n|---|---|---|---|---|")
    for dist in ("uniform", "lognormal", "longtail"):
        for sync in ("step", "micro_step"):
            before, after = [], []
            for _ in range(args.rounds):
                before.append(median_ms(args.before, dist, sync, layout))
                after.append(median_ms(args.after, dist, sync, layout))
            ratio = statistics.median(b / a for b, a in zip(before, after))
            cell = lambda xs: f"{statistics.median(xs):.1f} [{min(xs):.1f}, {max(xs):.1f}]"
            print(f"| {dist} | {sync.replace('_', '-')} | {cell(before)} | {cell(after)} | {ratio:.2f}x |",
                  flush=True)
    return 0
