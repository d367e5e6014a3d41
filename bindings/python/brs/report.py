"""The data of `python -m brs report`'s figure: every planning strategy of libbrs over one epoch.

Each strategy's plans come from the library (``sampler.with_options(strategy=...).plan(step)``),
so their costs, padded tokens, synchronised step times and lower bounds are the library's one
cost model; this module only groups them by strategy and sums them over the steps, as the table
of `brs compare` does. The figure itself is drawn by _plot.py.
"""

from dataclasses import dataclass
from typing import Dict, List

from . import _options
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

    def padded_tokens(self):
        """Every micro-batch's padded tokens, in step, rank, micro-step order."""
        return [mb.padded_tokens for plan in self.plans for rank in plan.micro_batches
                for mb in rank]


@dataclass
class Comparison:
    sampler: object  # the sampler compared, with the library's default strategy's settings
    strategies: Dict[str, Strategy]  # by the library's strategy name, in its order

    @property
    def time_lower_bound(self):
        """Sum over the steps of the default strategy's bound (the one `brs compare` prints)."""
        return sum(self.strategies[default_strategy()].lower_bounds)


def compare(sampler, steps=None):
    """Plan ``steps`` (default: every step of the sampler's epoch) under every strategy."""
    steps = range(sampler.steps_per_epoch) if steps is None else steps
    strategies = {}
    for name in strategy_names():
        variant = sampler.with_options(strategy=name)
        strategies[name] = Strategy(name, [variant.plan(step) for step in steps])
    return Comparison(sampler, strategies)
