"""The trial's files: results.json (the schema of docs/trial.md), report.md and trial.png."""

import json
import math
import os


#: Where the figure comes from: pyproject.toml's extra that brings matplotlib.
PLOT_EXTRA = 'pip install "brs[plot]"'


def write(results, out):
    """Write results.json, report.md and trial.png (when matplotlib is installed) under ``out``,
    creating the folder; the names of the files written, in that order."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(_plain(results), f, indent=1)
        f.write("\n")
    if results.get("mode") == "context_parallel":  # its report has no figure
        with open(os.path.join(out, "report.md"), "w") as f:
            f.write(context_parallel_markdown(results))
        return ["results.json", "report.md"]
    figure = plot(results, os.path.join(out, "trial.png"))
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(markdown(results, figure))
    return ["results.json", "report.md"] + (["trial.png"] if figure else [])


def no_figure():
    """What the output says where matplotlib is missing."""
    return f"no trial.png: matplotlib is not installed ({PLOT_EXTRA} brings it)"


def next_step(results):
    """The sampler arguments the result supports, as report.md's last section says them."""
    s = results["strategies"]["brs"]
    cm = results.get("cost_model") or {}
    args = [f"per_device_batch_size={results['per_device_batch_size']}",
            f"grad_accum={results['grad_accum']}"]
    if results.get("pad_to_multiple_of"):
        args.append(f"pad_to_multiple_of={results['pad_to_multiple_of']}")
    options = []
    if cm:
        options += [f"alpha={cm['alpha']:.6g}", f"intercept={cm['intercept']:.6g}"]
    max_tokens = results.get("max_tokens") or cm.get("max_tokens") or _searched_max_tokens(s)
    if max_tokens:
        options.append(f"max_tokens={max_tokens}")
    sampler = f"brs.BatchRebalanceSampler(lengths, {', '.join(args + options)})"
    trainer = f"RebalanceOptions({', '.join(options)})"
    verdict = results["verdict"]
    if verdict.startswith("brs pays"):
        head = "brs paid here: train with"
    elif verdict.startswith("brs does not pay"):
        head = ("brs did not pay here: keep your sampler; a run on your training device or "
                "with your collator may differ. The arguments it was timed with:")
    else:
        head = ("no difference shown: run again with more --steps before switching; the "
                "arguments brs was timed with:")
    lines = [head, "", "```python", sampler,
             f"# under the transformers Trainer: BatchRebalanceTrainer(..., "
             f"rebalance_options={trainer})", "```"]
    if max_tokens and max_tokens == _searched_max_tokens(s):
        lines += ["", f"max_tokens {max_tokens} is the padded tokens of brs's largest "
                  f"micro-batch at its largest per-device batch under the memory budget "
                  f"({s['largest_batch']}), from the largest-batch search."]
    return lines


def _searched_max_tokens(strategy):
    """bs*L of the worst micro-batch at the largest per-device batch that fitted, or None."""
    for probe in strategy.get("largest_batch_probes") or []:
        if probe["fits"] and probe["per_device_batch_size"] == strategy.get("largest_batch"):
            size, length = probe.get("worst_micro_batch") or (0, 0)
            return size * length or None
    return None


def _plain(value):
    """JSON without NaN: a NaN becomes null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _loads(results):
    return ", ".join("n/a" if x is None else f"{x:.2f}" for x in results.get("load_average", []))


def _bytes(value):
    return "n/a" if value is None else f"{value / 2**20:.1f} MiB"


def _ci(ci):
    low, high = ci
    if low is None or (isinstance(low, float) and math.isnan(low)):
        return "n/a"
    return f"{low:.3f}-{high:.3f}"


def markdown(results, figure=None):
    s = results["strategies"]
    lines = ["# brs trial", ""]
    if results.get("command"):
        lines += ["```sh", results["command"], "```", ""]
    lines += [f"**Verdict.** {results['verdict']}", "",
              f"Device {results['device']}, torch {results['torch']}, model "
              f"{results.get('model')}; dp {results['dp_size']} "
              f"({results.get('processes', 'one process simulates the dp ranks')}) x "
              f"grad_accum {results['grad_accum']} x per-device batch "
              f"{results['per_device_batch_size']}, pad_to_multiple_of "
              f"{results.get('pad_to_multiple_of')}, max_tokens {results.get('max_tokens')}, "
              f"memory_budget {results.get('memory_budget')}, seed {results['seed']}. "
              f"{len(results['timed_steps'])} steps of {results['steps_per_epoch']} timed "
              f"(steps {results['timed_steps']}), sync model {results['sync']}; clock "
              f"{results['clock']}.", "",
              f"**The verdict's clock.** {results['verdict_clock_why']}.", "",
              _cost_line(results), ""]
    for warning in results.get("warnings", []):
        lines.append(f"**Warning.** {warning}.")
        lines.append("")
    lines += [
              "| strategy | median step s | real tokens/s | peak memory | distinct shapes "
              "(epoch) | first-run cost per shape | largest per-device batch |",
              "|---|---|---|---|---|---|---|"]
    for name, r in s.items():
        lines.append(f"| {name} | {r['median_step_seconds']:.4f} | "
                     f"{r['real_tokens_per_second']:.0f} | {_bytes(r['peak_reserved_bytes'])} | "
                     f"{r['distinct_shapes']} | {r['first_shape_seconds'] * 1e3:.2f} ms "
                     f"({r['first_shape_epoch_seconds']:.2f} s over the epoch) | "
                     f"{r['largest_batch'] if r['largest_batch'] is not None else 'n/a'} |")
    lines += [""] + time_split_table(results)
    lines += ["", "## brs against the others", "",
              "| comparison | ratio (brs / other, step time) | 95% interval | test |",
              "|---|---|---|---|"]
    clock = ("thread CPU time" if results.get("verdict_clock") == "thread_time"
             else "step clock")
    for key, p in results["paired"].items():
        lines.append(f"| {key}, paired, {clock} (the verdict's) | {p['ratio']:.4f} | {_ci(p['ci95'])} (t) | sign test "
                     f"p = {p['sign_test_p']:.3g}, brs faster on {p['faster_steps']} of "
                     f"{p['steps']} |")
    other = "step" if results["sync"] == "micro_step" else "micro_step"
    for key, p in results.get(f"paired_{other}_sync", {}).items():
        lines.append(f"| {key}, paired, {other} sync | {p['ratio']:.4f} | {_ci(p['ci95'])} (t) | "
                     f"sign test p = {p['sign_test_p']:.3g}, brs faster on {p['faster_steps']} "
                     f"of {p['steps']} |")
    for key, p in results.get("paired_wall_clock", {}).items():
        lines.append(f"| {key}, paired, wall clock | {p['ratio']:.4f} | {_ci(p['ci95'])} (t) "
                     f"| sign test p = {p['sign_test_p']:.3g}, brs faster on "
                     f"{p['faster_steps']} of {p['steps']} |")
    for key, p in results["unpaired"].items():
        lines.append(f"| {key}, unpaired | {p['ratio']:.4f} | {_ci(p['ci95'])} (bootstrap, "
                     f"{p['resamples']} resamples) | - |")
    e = results["prediction_error"]
    lines += ["", "## The cost model against the measured micro-batches", ""]
    if e.get("median") is not None:
        lines.append(f"brs's cost model fitted (brs.calibration's fit) to "
                     f"{e['fitted_micro_batches']} warm micro-batches predicts the {e['held_out_micro_batches']} held out "
                     f"({e['held_out']}) with median relative error {e['median']:.1%}, p90 "
                     f"{e['p90']:.1%}" + (f" (alpha {e['cost_model']['alpha']:.4g}, intercept "
                                          f"{e['cost_model']['intercept']:.4g})"
                                          if "cost_model" in e else "") + ".")
    else:
        lines.append(f"No prediction error: {e.get('note')}.")
    lines += ["", "## How it was measured", "",
              f"- processes: {results.get('processes', 'one process simulates the dp ranks')}",
              f"- memory: {results['memory_method']}",
              f"- allocator: {results.get('allocator') or 'as the process found it'}",
              f"- load average before and after timing: {_loads(results)} on "
              f"{results.get('cpus')} CPUs (other processes share a CPU; the thread-time rows "
              "are immune to their preemption, the wall clock is not)",
              "- each distinct shape of the timed steps ran once before timing (its first-run "
              "seconds are recorded apart); strategies interleaved in a fresh random order every "
              "round; brs and upstream planned the same samples every step",
              f"- step time, {results['sync']} sync: "
              f"{results.get('step_clock', 'the sync model over the measured micro-batches')} "
              "(the other sync model, the arithmetic over the measured micro-batches, is in "
              "results.json)"]
    for note in results.get("notes", []):
        lines.append(f"- note: {note}")
    if figure:
        lines += ["", f"![step times and memory]({os.path.basename(figure)})"]
    else:
        lines += ["", f"- {no_figure()}"]
    lines += ["", "## Next step", ""] + next_step(results)
    return "\n".join(lines) + "\n"


#: The trial's strategy names as `python -m brs report` calls them, where they differ.
_REPORT_NAMES = {"upstream": "transformers' batch_rebalance"}


def time_split_table(results):
    """report.md's "where the time goes": each strategy's modelled useful, padding and waiting
    shares of the ranks' time on the timed steps (brs/_trial/time_split.py)."""
    sync = "step" if results["sync"] == "step" else "micro-step"
    lines = ["## Where the time goes (modelled)", "",
             f"Shares of the ranks' time (dp x step time, {sync} sync) on the timed steps, by "
             "the cost model brs planned with, as `python -m brs report` splits them.", "",
             "| strategy | useful | padding | waiting |", "|---|---|---|---|"]
    for name, r in results["strategies"].items():
        split = r.get("time_split")
        if split is None:
            continue
        shown = f"{name} ({_REPORT_NAMES[name]})" if name in _REPORT_NAMES else name
        lines.append(f"| {shown} | {split['useful']:.1%} | {split['padding']:.1%} | "
                     f"{split['waiting']:.1%} |")
    return lines


def context_parallel_markdown(results):
    """report.md of the context-parallel trial (brs/_trial/context_parallel.py's results)."""
    s, fixed = results["strategies"], results["fixed_degree"]
    lines = ["# brs trial: context parallelism", ""]
    if results.get("command"):
        lines += ["```sh", results["command"], "```", ""]
    cm = results.get("cost_model")
    cost = ("the library's default cost model" if not cm else
            f"the cost model given ({cm['source']}: alpha {cm['alpha']:.4g}, intercept "
            f"{cm['intercept']:.4g}, cp_comm_cost {cm['cp_comm_cost']:.4g}, cp_latency "
            f"{cm['cp_latency']:.4g})")
    lines += [f"**Verdict.** {results['verdict']}", "",
              f"Device {results['device']}, torch {results['torch']}, model "
              f"{results['model']}; {results['processes']}: dp {results['dp_size']} x cp "
              f"{results['cp_size']}, grad_accum {results['grad_accum']} x per-device batch "
              f"{results['per_device_batch_size']}, max_tokens_per_rank "
              f"{results['max_tokens_per_rank']}, seed {results['seed']}. "
              f"{len(results['timed_steps'])} steps of {results['steps_per_epoch']} timed "
              f"(steps {results['timed_steps']}), the same samples for every strategy. brs and "
              f"fixed CP planned with {cost}.", "",
              f"**The clock.** {results['clock']}: {results['verdict_clock_why']}.", ""]
    for warning in results.get("warnings", []):
        lines += [f"**Warning.** {warning}.", ""]
    lines += ["| strategy | median step s | real tokens/s | peak tokens a rank holds "
              "(tensors built) | degrees used | syncs per step (median) | every sample once |",
              "|---|---|---|---|---|---|---|"]
    names = {"brs": "brs (dynamic CP)", "fixed": f"fixed CP (degree {fixed})",
             "megatron": "Megatron BalancedCPScheduler"}
    for name, r in s.items():
        syncs = sorted(r["syncs_per_step"])[len(r["syncs_per_step"]) // 2]
        lines.append(f"| {names.get(name, name)} | {r['median_step_seconds']:.4f} | "
                     f"{r['real_tokens_per_second']:.0f} | {r['peak_tokens_per_rank']} of "
                     f"{results['max_tokens_per_rank']} | {r['degrees']} | {syncs} | "
                     f"{'yes' if r['every_sample_once'] else 'NO'} |")
    lines += ["", "## Paired step-time ratios", "",
              "| comparison | ratio (step time) | 95% interval (t) | speed-up (inverse) | "
              "sign test | first faster on | steps where brs is slower |",
              "|---|---|---|---|---|---|---|"]
    for key, p in results["paired"].items():
        low, high = p["ci95"]
        inverse = "n/a" if low is None or low != low else f"{1 / p['ratio']:.3f}x " \
            f"({1 / high:.3f}-{1 / low:.3f})"
        peer = key.split("/")[1]
        slower = results["brs_slower_steps"].get(peer) if key.startswith("brs/") else None
        lines.append(f"| {key} | {p['ratio']:.4f} | {_ci(p['ci95'])} | {inverse} | "
                     f"p = {p['sign_test_p']:.3g} | {p['faster_steps']} of {p['steps']} | "
                     f"{'-' if slower is None else (slower or 'none')} |")
    m = results.get("modelled_brs_over_fixed")
    if m:
        lines += ["", f"The library's cost model predicted brs / fixed at {m['ratio']:.4f} "
                  f"(geometric mean of its step times over the same steps, "
                  f"{m['faster_steps']} of {m['steps']} steps faster), against "
                  f"{results['paired']['brs/fixed']['ratio']:.4f} measured."]
    lines += ["", "## How it was measured", "",
              "- brs: the library's plan (BatchRebalanceSampler with cp_size and "
              "max_tokens_per_rank), each rank's micro-batch and token ranges from its CP "
              f"queries; fixed CP: the same planner with cp_degrees {fixed}, the least degree "
              "the dataset's longest sample needs; Megatron: megatron-core's "
              "BalancedCPScheduler on the samples brs drew, each sub-sample cut by the "
              "library's head-tail split at its degree",
              "- each rank runs its pieces with the reference CP attention "
              "(brs/context_parallel.py: keys and values all-gathered in the group), forward "
              "and backward; a barrier ends every brs micro-step and every Megatron group (its "
              "runtime's); no gradient all-reduce or optimizer step (the same for every "
              "strategy)",
              "- peak tokens: the longest shard a rank built (its padded tokens); every sample "
              "once: the token ranges computed over the ranks cover each sample of the step "
              "exactly",
              "- one warm step per strategy before timing; strategies interleaved in a fresh "
              "seeded order every round",
              f"- load average before and after timing: {_loads(results)} on "
              f"{results.get('cpus')} CPUs"]
    return "\n".join(lines) + "\n"


def _cost_line(results):
    cm = results.get("cost_model")
    if not cm:
        return "brs planned with the library's default cost model."
    how = ("fitted by brs.calibrate on this model and device before timing"
           if cm["source"] == "fitted here" else "given (--cost-model / cost_model=)")
    return (f"**brs's cost model** {how}: alpha {cm['alpha']:.4g}, intercept "
            f"{cm['intercept']:.4g}, max_tokens {cm['max_tokens']}.")


def plot(results, path):
    """Step-time distribution per strategy and memory bars; the path, or None without
    matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    s = results["strategies"]
    names = list(s)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    data = [s[n]["step_seconds"] for n in names]
    left.boxplot(data, showfliers=False)
    left.set_xticks(range(1, len(names) + 1), names)
    for i, values in enumerate(data, start=1):
        left.scatter([i] * len(values), values, s=10, alpha=0.6)
    left.set_ylabel(f"step seconds ({results['sync']} sync)")
    left.set_title("step time per strategy")
    peaks = [s[n]["peak_reserved_bytes"] for n in names]
    right.bar(names, [(p or 0) / 2**20 for p in peaks])
    for i, n in enumerate(names):
        size = s[n]["largest_batch"]
        if size is not None:
            right.annotate(f"largest P {size}", (i, (peaks[i] or 0) / 2**20), ha="center",
                           va="bottom", fontsize=8)
    right.set_ylabel("peak memory, MiB")
    right.set_title("peak memory per strategy")
    fig.suptitle(results["verdict"], fontsize=8, wrap=True)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
