"""The report's one-page figure: what a person would rather look at than read.

Top, one stacked bar per strategy (transformers' batch_rebalance included when compared): the
shares of the ranks' time that are useful work, padding and waiting at the synchronisation
(include/brs.h, BRS_PLAN_STEP_TIME). Then per strategy: each rank's cost per step (the sum over its micro-steps: what a rank works
before DDP's per-step synchronisation), with libbrs's per-step lower bound; a flat band means
nobody waits. Bottom row: padded tokens of every micro-batch (the activation memory), with the
max_tokens cap; the peak is what decides an OOM. Rows share their y axis so the strategies
compare at a glance. Uses matplotlib's object API with the Agg canvas: no pyplot global state,
no display needed. The file is written under a temporary name and renamed, so a failure leaves
no half-written figure.
"""

import os
import tempfile

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

_MAX_RANK_LINES = 16  # beyond this, draw the min-max band and the mean instead of every rank


def save_figure(comparison, path):
    _save_atomically(_draw(comparison), path)


def _save_atomically(figure, path):
    """Renders into a temporary file beside ``path``, then renames it: a failed write (no such
    directory, no permission, a full disk, an unknown format) leaves no half-written figure."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    extension = os.path.splitext(path)[1]
    try:
        handle, temporary = tempfile.mkstemp(prefix=".brs-figure-", suffix=extension,
                                             dir=directory)
    except OSError as exc:
        raise OSError(exc.errno, f"{exc.strerror}: the directory '{directory}' must exist and be "
                      "writable") from None
    try:
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 is not what savefig gives
        with os.fdopen(handle, "wb") as out:
            figure.savefig(out, format=extension[1:] or None, dpi=110)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _draw(comparison):
    strategies = list(comparison.columns.values())
    figure = Figure(figsize=(5.5 * len(strategies), 11.5), layout="constrained")
    FigureCanvasAgg(figure)
    grid = figure.add_gridspec(3, len(strategies), height_ratios=[0.8, 1, 1])
    _time_shares(figure.add_subplot(grid[0, :]), comparison)
    axes = [[], []]
    for row in range(2):
        for column in range(len(strategies)):
            share = axes[row][0] if column else None
            axes[row].append(figure.add_subplot(grid[row + 1, column], sharey=share))
    max_tokens = comparison.sampler.max_tokens
    # seconds where the cost model knows how long a unit takes (a calibrated one)
    seconds = getattr(comparison.sampler.cost_model, "seconds_per_unit", None)
    for column, strategy in enumerate(strategies):
        _rank_costs(axes[0][column], strategy, seconds)
        _padded_tokens(axes[1][column], strategy, max_tokens)
        axes[0][column].set_title(f"{strategy.name}: {'seconds' if seconds else 'cost'} per "
                                  "step and rank")
        axes[1][column].set_title(f"{strategy.name}: padded tokens per micro-batch "
                                  f"(peak {strategy.peak_padded_tokens:,})")
    s = comparison.sampler
    figure.suptitle(f"brs report: {len(s.lengths)} samples, batch_size={s.per_device_batch_size}, "
                    f"grad_accum={s.grad_accum}, dp_size={s.dp_size}, epoch {s.epoch}")
    return figure


_SHARES = (("useful", "tab:green"), ("padding", "tab:orange"), ("waiting", "tab:red"))


def _time_shares(ax, comparison):
    """One horizontal bar per strategy, stacked: useful, padding, waiting (% of the ranks' time)."""
    names = list(comparison.columns)
    shares = [comparison.columns[name].time_shares for name in names]
    left = [0.0] * len(names)
    for part, (label, colour) in enumerate(_SHARES):
        widths = [100 * share[part] for share in shares]
        bars = ax.barh(names, widths, left=left, color=colour, label=label)
        ax.bar_label(bars, labels=[f"{w:.1f}%" if w >= 4 else "" for w in widths],
                     label_type="center", fontsize="small")
        left = [a + b for a, b in zip(left, widths)]
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    sync = "step" if comparison.sampler.sync == "step" else "micro-step"
    ax.set_xlabel(f"% of the ranks' time (dp x step time, {sync} sync)")
    ax.set_title("where the time goes: useful work, padding, waiting at the synchronisation")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")


def _rank_costs(ax, strategy, seconds_per_unit):
    scale = seconds_per_unit or 1.0
    per_rank = [[cost * scale for cost in step] for step in strategy.rank_costs()]
    steps = range(len(per_rank))
    ranks = len(per_rank[0])
    if ranks <= _MAX_RANK_LINES:
        for r in range(ranks):
            ax.plot(steps, [step[r] for step in per_rank], linewidth=0.7, alpha=0.8)
    else:
        ax.fill_between(steps, [min(step) for step in per_rank], [max(step) for step in per_rank],
                        alpha=0.3, label="min-max over ranks")
        ax.plot(steps, [sum(step) / ranks for step in per_rank], linewidth=0.8, label="mean")
    ax.plot(steps, [bound * scale for bound in strategy.lower_bounds], "k--", linewidth=0.8,
            label="lower bound")
    ax.set_xlabel("step")
    ax.set_ylabel("seconds (sum over micro-steps)" if seconds_per_unit
                  else "cost (sum over micro-steps)")
    ax.legend(loc="upper right", fontsize="small")


def _padded_tokens(ax, strategy, max_tokens):
    padded = strategy.padded_tokens()
    ax.plot(range(len(padded)), padded, ".", markersize=2)
    if max_tokens:
        ax.axhline(max_tokens, color="red", linewidth=0.8, label=f"max_tokens {max_tokens}")
        ax.legend(loc="upper right", fontsize="small")
    ax.set_xlabel("micro-batch (step, rank, micro-step order)")
    ax.set_ylabel("padded tokens")
