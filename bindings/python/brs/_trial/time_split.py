"""Where each strategy's step goes in the trial, modelled: the shares of the ranks' time that are
useful work, padding and waiting at the synchronisation, as `python -m brs report` gives them.

Every strategy's micro-batches of the timed steps are priced by brs's own sampler, the one the
trial planned with (its cost model, padding and sync model): brs's steps are its plans, the
others' are loaded into it (``sampler.describe``), and the split is the library's plan queries
(include/brs.h, BRS_PLAN_USEFUL_TIME ...) summed over the steps by brs/report.py's Strategy.
"""

from ..report import Strategy


def shares(planner, epochs, chosen):
    """{strategy: {"useful", "padding", "waiting"}} over the ``chosen`` steps of epoch 0."""
    sampler = planner.sampler("brs")
    split = {}
    for name, epoch in epochs.items():
        steps = [_plan(sampler, name, epoch[t], t) for t in chosen]
        useful, padding, waiting = Strategy(name, steps).time_shares
        split[name] = {"useful": useful, "padding": padding, "waiting": waiting}
    return split


def _plan(sampler, name, step_plan, step):
    if name == "brs":  # its own plan: the padded lengths it chose (a vocabulary's included)
        return sampler.plan(step, epoch=0)
    return sampler.describe([[list(mb.indices) for mb in rank] for rank in step_plan], step,
                            epoch=0)
