"""From measured micro-batch times to what a dp-rank job would see, and how well each cost
model predicted those times.

Sync models (the same two the library optimises, docs/design.md):
- micro_step (FSDP/ZeRO/DDP syncing every backward): a step lasts the sum over micro-steps of
  the slowest rank's micro-batch;
- step (DDP under no_sync): the slowest rank's sum of its micro-batches.
The optimizer step, measured once per step, is added to both.
"""

import numpy as np


def step_times(run):
    micro, opt = run["micro"], run["optimizer"]
    per_micro = [sum(max(rank[m] for rank in step) for m in range(len(step[0])))
                 for step in micro]
    per_step = [max(sum(rank) for rank in step) for step in micro]
    return ([a + o for a, o in zip(per_micro, opt)], [a + o for a, o in zip(per_step, opt)])


def describe(run):
    """Totals of one sampler's measured steps."""
    micro_sync, step_sync = step_times(run)
    shapes = [mb for step in run["shapes"] for rank in step for mb in rank]
    real = sum(s[2] for s in shapes)
    padded = sum(s[0] * s[1] for s in shapes)
    busy = sum(t for step in run["micro"] for rank in step for t in rank)
    return {"steps": len(micro_sync),
            "step_time_micro_sync": float(np.mean(micro_sync)),
            "step_time_step_sync": float(np.mean(step_sync)),
            "real_tokens_per_s": real / sum(micro_sync),
            "padded_tokens_per_s": padded / sum(micro_sync),
            "real_tokens_per_s_step_sync": real / sum(step_sync),
            "padding_efficiency": real / padded,
            "rank_busy_fraction": busy / (len(run["micro"][0]) * sum(micro_sync)),
            "peak_bytes": run.get("peak_bytes"),
            "max_padded_tokens": max(s[0] * s[1] for s in shapes)}


def _ranks(x):
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x))
    values = np.asarray(x)[order]
    i = 0
    while i < len(x):  # average ranks of ties
        j = i
        while j + 1 < len(x) and values[j + 1] == values[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0
        i = j + 1
    return ranks


def spearman(a, b):
    ra, rb = _ranks(a), _ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def model_error(samples, models):
    """Per cost model: Spearman rank correlation of predicted cost vs measured time, and the
    mean absolute relative error once costs are scaled to seconds. A cost is in padded-token
    units, so each model gets its best single scale (the median of time/cost over the
    measurements); the calibrated model is also scored with its own calibrated scale."""
    bs = np.array([s[0] for s in samples], dtype=float)
    length = np.array([s[1] for s in samples], dtype=float)
    t = np.array([s[2] for s in samples], dtype=float)
    out = {}
    for name, cm in models.items():
        if cm is None:
            continue
        cost = cm.cost(bs, length)
        scale = float(np.median(t / cost))
        row = {"alpha": cm.alpha, "intercept": cm.intercept, "spearman": spearman(cost, t),
               "mare_fitted_scale": float(np.mean(np.abs(scale * cost - t) / t)),
               "seconds_per_unit_fitted": scale}
        if cm.seconds_per_unit:
            row["mare_own_scale"] = float(np.mean(np.abs(cm.seconds_per_unit * cost - t) / t))
        out[name] = row
    return out


def micro_samples(run):
    """(bs, padded length, seconds) of every measured micro-batch."""
    return [(shape[0], shape[1], sec)
            for step_shapes, step_times_ in zip(run["shapes"], run["micro"])
            for rank_shapes, rank_times in zip(step_shapes, step_times_)
            for shape, sec in zip(rank_shapes, rank_times)]


PEERS = ("group_by_length", "upstream", "random")
OURS = ("brs", "brs_calibrated")


def _fmt_bytes(b):
    return "n/a" if b is None else f"{b / 2**20:.0f} MiB"


def markdown(results):
    """The README/report table: per dataset and batch size, each sampler's measured numbers,
    then brs's ratios against each peer."""
    lines, dp = [], results["dp"]
    for block in results["runs"]:
        head = f"### {block['dataset']}, per-device batch {block['batch_size']}"
        lines += [head, "", f"| sampler | steps | dp={dp} step, micro-step sync | dp={dp} step, "
                  "step sync | real tok/s | padded tok/s | padding eff. | max bs*L | peak memory |",
                  "|---|---|---|---|---|---|---|---|---|"]
        ordered = sorted(block["samplers"].items(), key=lambda kv: (PEERS + OURS).index(kv[0]))
        for name, r in ordered:
            if "summary" not in r:
                why = (r.get("oom") or "").split("\n")[0] or r.get("skipped")  # one table line
                lines.append(f"| {name} | 0 | {why} | | | | | | |")
                continue
            s = r["summary"]
            lines.append(f"| {name} | {s['steps']} | {s['step_time_micro_sync'] * 1e3:.1f} ms | "
                         f"{s['step_time_step_sync'] * 1e3:.1f} ms | "
                         f"{s['real_tokens_per_s']:.0f} | {s['padded_tokens_per_s']:.0f} | "
                         f"{s['padding_efficiency']:.1%} | {s['max_padded_tokens']} | "
                         f"{_fmt_bytes(s['peak_bytes'])} |")
        lines += ["", *ratio_lines(block), ""]
    return "\n".join(lines)


def step_tokens(run):
    """Real tokens of each measured step."""
    return [sum(mb[2] for rank in step for mb in rank) for step in run["shapes"]]


def ratio_interval(ours, peer, sync_index, resamples=2000, seed=0):
    """ours / peer real tokens/s and its 95% bootstrap interval over steps.

    Steps are resampled with replacement; where both ran the same steps (brs and upstream
    train the same samples) the same draws are used for both, so the interval is that of the
    paired difference, not of two independent noises."""
    rng = np.random.default_rng(seed)
    tok_a, tok_b = np.array(step_tokens(ours), float), np.array(step_tokens(peer), float)
    t_a = np.array(step_times(ours)[sync_index])
    t_b = np.array(step_times(peer)[sync_index])
    point = (tok_a.sum() / t_a.sum()) / (tok_b.sum() / t_b.sum())
    if len(t_a) < 2 or len(t_b) < 2:
        return point, float("nan"), float("nan")
    paired = ours.get("steps") == peer.get("steps")
    ia = rng.integers(0, len(t_a), (resamples, len(t_a)))
    ib = ia if paired else rng.integers(0, len(t_b), (resamples, len(t_b)))
    ratios = ((tok_a[ia].sum(1) / t_a[ia].sum(1)) / (tok_b[ib].sum(1) / t_b[ib].sum(1)))
    low, high = np.percentile(ratios, [2.5, 97.5])
    return point, float(low), float(high)


#: Fewer measured steps than this give a bootstrap of too few distinct resamples to trust.
MIN_STEPS_FOR_VERDICT = 8


def verdict(low, high, steps):
    if steps < MIN_STEPS_FOR_VERDICT:
        return f"too few steps ({steps})"
    if low > 1:
        return "faster"
    if high < 1:
        return "slower"
    return "indistinguishable"


def _interval_cell(ours, peer, sync_index):
    point, low, high = ratio_interval(ours, peer, sync_index)
    steps = min(len(ours["micro"]), len(peer["micro"]))
    return f"{point:.3f}x [{low:.3f}, {high:.3f}] {verdict(low, high, steps)}"


def ratio_lines(block):
    """brs and brs_calibrated against each peer: real tokens/s (higher is better) under both
    sync models, as ratios ours / peer with 95% bootstrap intervals over the measured steps,
    and whether brs is faster, slower or indistinguishable at that confidence."""
    rows = ["| ours vs peer | real tok/s, micro-step sync [95%] | real tok/s, step sync [95%] | "
            "peak memory |", "|---|---|---|---|"]
    samplers = block["samplers"]
    for ours in OURS:
        for peer in PEERS:
            a, b = samplers.get(ours, {}), samplers.get(peer, {})
            if "summary" not in a or "summary" not in b:
                continue
            pa, pb = a["summary"]["peak_bytes"], b["summary"]["peak_bytes"]
            mem = "n/a" if not pa or not pb else f"{pa / pb:.2f}x"
            rows.append(f"| {ours} / {peer} | {_interval_cell(a, b, 0)} | "
                        f"{_interval_cell(a, b, 1)} | {mem} |")
    return rows


def error_markdown(errors):
    lines = ["| cost model | alpha | intercept | Spearman | mean abs. rel. error (fitted scale) | "
             "(own scale) |", "|---|---|---|---|---|---|"]
    for name, e in errors.items():
        own = f"{e['mare_own_scale']:.1%}" if "mare_own_scale" in e else "-"
        lines.append(f"| {name} | {e['alpha']:.3g} | {e['intercept']:.3g} | {e['spearman']:.3f} | "
                     f"{e['mare_fitted_scale']:.1%} | {own} |")
    return "\n".join(lines)


def plot(results, path):
    """Real tokens/s per sampler and dataset (micro-step sync), one bar group per run."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    blocks = results["runs"]
    names = PEERS + OURS
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(blocks)), 4))
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        values = [b["samplers"].get(name, {}).get("summary", {}).get("real_tokens_per_s", 0)
                  for b in blocks]
        ax.bar(np.arange(len(blocks)) + k * width, values, width, label=name)
    ax.set_xticks(np.arange(len(blocks)) + 0.4 - width / 2)
    ax.set_xticklabels([f"{b['dataset']}\nP={b['batch_size']}" for b in blocks], fontsize=8)
    ax.set_ylabel(f"real tokens/s of a simulated dp={results['dp']} job")
    ax.set_title(f"measured training throughput, {results['device']}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def readme_table(result_sets):
    """One row per (dataset, batch size, ours / peer) of several results.json: real tokens/s
    with its 95% interval under both sync models, and the measured peak memory ratio."""
    lines = ["| dataset, P | ours / peer | real tok/s, micro-step sync [95%] | "
             "real tok/s, step sync [95%] | peak memory |", "|---|---|---|---|---|"]
    for results in result_sets:
        for block in results["runs"]:
            lines += [f"| {block['dataset']}, {block['batch_size']} |" + row[1:]
                      for row in ratio_lines(block)[2:]]
    return "\n".join(lines)
