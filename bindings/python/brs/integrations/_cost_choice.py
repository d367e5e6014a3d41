"""Which cost model a Trainer plans with when the user did not pick one.

Order: RebalanceOptions(cost_model=...) (a calibrated or saved model); explicit alpha /
intercept; else the analytic model of the model's own config (brs.CostModel.from_config), which
follows the architecture's real ratio of attention to linear work; the library's fixed default
only when the model has no readable config. The choice is logged once.
"""

import logging

from brs import CostModel

logger = logging.getLogger("brs.integrations")


def choose(options, model):
    """The CostModel to pass to the sampler (None: the sampler's own defaults)."""
    if options.cost_model is not None:
        chosen = CostModel.coerce(options.cost_model, "RebalanceOptions.cost_model")
        logger.info("brs: planning with the %s cost model alpha=%.3g intercept=%.3g "
                    "max_tokens=%s", chosen.source, chosen.alpha, chosen.intercept,
                    chosen.max_tokens)
        return chosen
    if options.alpha is not None:
        return None  # the user's own numbers
    config = getattr(model, "config", None)
    try:
        chosen = CostModel.from_config(config)
    except (ValueError, TypeError, AttributeError, ZeroDivisionError):
        fixed = CostModel.fixed()
        logger.info("brs: the model's config does not describe a decoder; planning with the "
                    "fixed default alpha=%.3g", fixed.alpha)
        return None
    logger.info("brs: planning with alpha=%.3g derived from the %s config (CostModel."
                "from_config; calibrate for measured values: docs/calibration.md)",
                chosen.alpha, chosen.model)
    return chosen
