"""The data of `python -m brs report`: every planning strategy of libbrs over one epoch, and
transformers' batch_rebalance on the same samples when transformers is installed.

Each strategy's plans come from the library (``sampler.with_options(strategy=...).plan(step)``),
and batch_rebalance's micro-batches are loaded into it (_batch_rebalance.py), so their costs,
padded tokens, synchronised step times, lower bounds and the split of the ranks' time into useful
work, padding and waiting (include/brs.h, BRS_PLAN_STEP_TIME) are the library's one cost model;
this module only groups them by strategy and sums them over the steps, as the table of
`brs compare` does. The figure itself is drawn by _plot.py.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import _batch_rebalance, _options
from .plan import Plan


def strategy_names():
    """The library's strategies, in its order (the figure's columns)."""
    return _options.BY_NAME["strategy"].value_names


def default_strategy():
    return _options.BY_NAME["strategy"].default_value


@dataclass
class Strategy:
    """One strategy's plans of the compared steps."""

    name: str
    plans: List[Plan]

    @property
    def peak_padded_tokens(self):
        return max(plan.max_padded_tokens for plan in self.plans)

    @property
    def padding_efficiency(self):
        padded = sum(plan.total_padded_tokens for plan in self.plans)
        return sum(plan.total_real_tokens for plan in self.plans) / padded if padded else 1.0

    @property
    def micro_sync_time(self):
        return sum(plan.micro_sync_time for plan in self.plans)

    @property
    def step_sync_time(self):
        return sum(plan.step_sync_time for plan in self.plans)

    @property
    def lower_bounds(self):
        """Per step, the library's proven bound on both synchronised step times."""
        return [plan.time_lower_bound for plan in self.plans]

    def rank_costs(self):
        """[step][rank]: the sum of a rank's micro-batch costs in the step."""
        return [[sum(mb.cost for mb in rank) for rank in plan.micro_batches]
                for plan in self.plans]

    @property
    def shapes_per_rank(self):
        """Distinct (batch size, padded tokens) pairs of the rank with most: the shapes a rank
        runs (each new one can cost a compilation or a CUDA graph capture)."""
        shapes = {}
        for plan in self.plans:
            for rank, micro_batches in enumerate(plan.micro_batches):
                shapes.setdefault(rank, set()).update(
                    (mb.num_samples, mb.padded_tokens) for mb in micro_batches)
        return max((len(s) for s in shapes.values()), default=0)

    @property
    def time_shares(self):
        """(useful, padding, waiting): the shares of the ranks' time over the steps, summing to 1
        (each step's ranks x step time under the sampler's sync model)."""
        parts = [sum(getattr(plan, name) for plan in self.plans)
                 for name in ("useful_time", "padding_time", "waiting_time")]
        whole = sum(parts)
        return tuple(part / whole for part in parts) if whole > 0 else (1.0, 0.0, 0.0)

    @property
    def step_time(self):
        """The step times of the sampler's sync model, summed over the steps."""
        return sum(plan.step_time for plan in self.plans)

    def padded_tokens(self):
        """Every micro-batch's padded tokens, in step, rank, micro-step order."""
        return [mb.padded_tokens for plan in self.plans for rank in plan.micro_batches
                for mb in rank]


@dataclass
class Comparison:
    sampler: object  # the sampler compared, with the library's default strategy's settings
    strategies: Dict[str, Strategy]  # by the library's strategy name, in its order
    peers: Dict[str, Strategy] = field(default_factory=dict)  # batch_rebalance, when compared
    peers_missing: Optional[str] = None  # why batch_rebalance is not compared, else None

    @property
    def columns(self):
        """Every strategy compared, the library's then the peers': the figure's columns."""
        return {**self.strategies, **self.peers}

    @property
    def time_lower_bound(self):
        """Sum over the steps of the default strategy's bound (the one `brs compare` prints)."""
        return sum(self.strategies[default_strategy()].lower_bounds)


def compare(sampler, steps=None, peers=True):
    """Plan ``steps`` (default: every step of the sampler's epoch) under every strategy, and
    with ``peers`` transformers' batch_rebalance on brs's samples of the same steps."""
    steps = range(sampler.steps_per_epoch) if steps is None else steps
    strategies = {}
    for name in strategy_names():
        variant = sampler.with_options(strategy=name)
        strategies[name] = Strategy(name, [variant.plan(step) for step in steps])
    comparison = Comparison(sampler, strategies)
    if peers:
        _add_batch_rebalance(comparison)
    return comparison


def _add_batch_rebalance(comparison):
    cls, why = _batch_rebalance.peer_class()
    if cls is None:
        comparison.peers_missing = why
        return
    brs = comparison.strategies[default_strategy()]
    name = _batch_rebalance.NAME
    comparison.peers[name] = Strategy(name, _batch_rebalance.plans(comparison.sampler, brs.plans))


def time_table(comparison):
    """The lines of "where the time goes" for every strategy compared (the C table's columns,
    with batch_rebalance), and one line saying why batch_rebalance is missing when it is."""
    sync = "step" if comparison.sampler.sync == "step" else "micro-step"
    # seconds where the cost model knows how long a unit takes, as the C table shows them
    scale = getattr(comparison.sampler.cost_model, "seconds_per_unit", None) or 1.0
    lines = [f"where the time goes: shares of the ranks' time (dp x step time, {sync} sync)",
             f"{'strategy':<15}  {'useful':>8}  {'padding':>8}  {'waiting':>8}  {'step time':>15}"]
    order = [n for n in comparison.strategies if n != default_strategy()] + [default_strategy()]
    columns = comparison.columns
    for name in order + list(comparison.peers):
        strategy = columns[name]
        shown = name if name in comparison.peers else (
            "brs" if name == default_strategy() else name.replace("_", "-"))
        useful, padding, waiting = (100 * share for share in strategy.time_shares)
        lines.append(f"{shown:<15}  {useful:7.1f}%  {padding:7.1f}%  {waiting:7.1f}%  "
                     f"{strategy.step_time * scale:15.6g}")
    if comparison.peers_missing:
        lines.append(f"transformers' batch_rebalance: not compared: {comparison.peers_missing}")
    else:
        peer = comparison.peers[_batch_rebalance.NAME]
        brs = comparison.strategies[default_strategy()]
        lines += ["batch_rebalance: transformers' sampler, on brs's samples of each step",
                  f"brs's step time is {brs.step_time / peer.step_time:.3f}x batch_rebalance's; "
                  f"peak tokens {brs.peak_padded_tokens} against {peer.peak_padded_tokens}"]
    return lines
