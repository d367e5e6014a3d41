"""The cost model brs plans with in the trial: the one the user would train with.

Unless one is given (``cost_model=``, ``--cost-model``), brs.calibrate fits it on the same model
and device before anything is timed, with torch on one thread on CPU so that its clock is the
thread's CPU time, which other processes cannot inflate (calibration/timing.py's Clock). Under
torchrun rank 0 fits it and every rank plans with rank 0's, so the ranks' plans agree. The
library's default alpha was fitted to no model: planning a model whose attention costs more
(or less) per bs*L^2 balances the wrong cost, and the trial would measure that mistake rather
than brs.
"""

import warnings

#: The timed rounds over the calibration grid: fewer than calibrate's default, as the trial's
#: own timing follows; the minimum of interleaved rounds resists bursts of load.
REPEATS = 3


def resolve(config, module, group, torch):
    """(CostModel, how it was chosen: "given" or "fitted here", notes)."""
    from ..cost_model import CostModel

    if config.cost_model is not None:
        return CostModel.coerce(config.cost_model), "given", []
    fitted, notes = None, []
    if group.rank == 0:
        fitted, notes = _fit(config, module, torch)
    return group.broadcast(fitted), "fitted here", group.broadcast(notes)


# The fit is of time only (alpha, intercept): memory_budget is the largest-batch search's, which
# measures every strategy's peak under it (largest.py) and gives the max_tokens report.md names.


def _fit(config, module, torch):
    from ..calibration import calibrate

    threads = torch.get_num_threads()
    if config.device.type == "cpu":
        torch.set_num_threads(1)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fitted = calibrate(module, config.lengths if config.dataset is None
                               else config.dataset, collate_fn=config.collate_fn,
                               forward=config.forward, device=config.device,
                               repeats=REPEATS, memory_budget=None,
                               progress=config.progress)
    finally:
        torch.set_num_threads(threads)
    notes = [f"while fitting the cost model: {' '.join(str(w.message).split())}"
             for w in caught if issubclass(w.category, UserWarning)]
    return fitted, notes

