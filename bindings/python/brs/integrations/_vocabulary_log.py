"""The shape vocabulary an integration trains on, said once at INFO on the "brs" logger: how many
shapes, which, and the modelled step time against the unbounded plan (max_shapes=0) on the same
samples, so that a user sees what max_shapes chose and what it costs before step 0.

Choosing the vocabulary runs in the library and can take seconds (max_shapes_search): a line
says so before it starts and how long it took, as the package's other slow stages do."""

import logging
import time

logger = logging.getLogger("brs")

_SAMPLED_STEPS = 8  # steps spread over the epoch: enough for a ratio, milliseconds to plan
_LOGGED = set()  # id of each sampler already described


def describe(sampler, steps=_SAMPLED_STEPS):
    """(shapes, ratio): the vocabulary and the planned step time of up to ``steps`` steps of
    the sampler's epoch over the same steps planned without it (1.0: it costs nothing)."""
    search = getattr(sampler, "max_shapes_search", 0) or 0
    if search:
        logger.info("brs: choosing the shape vocabulary (max_shapes=%s, max_shapes_search=%s "
                    "moves): this can take seconds", sampler.max_shapes, search)
    began = time.monotonic()
    shapes = sampler.shape_vocabulary()
    if search:
        logger.info("brs: shape vocabulary chosen in %.1f s", time.monotonic() - began)
    total = sampler.steps_per_epoch
    picked = sorted({round(i * (total - 1) / max(1, steps - 1)) for i in range(min(steps, total))})
    unbounded = sampler.with_options(max_shapes=0)
    bounded_time = sum(sampler.plan(t).step_time for t in picked)
    unbounded_time = sum(unbounded.plan(t).step_time for t in picked)
    return shapes, bounded_time / unbounded_time if unbounded_time > 0 else 1.0


def log_once(sampler, framework):
    """Logs the sampler's vocabulary once (INFO); nothing without max_shapes."""
    if not getattr(sampler, "max_shapes", 0) or id(sampler) in _LOGGED:
        return
    _LOGGED.add(id(sampler))
    shapes, ratio = describe(sampler)
    shown = ", ".join(f"{b}x{length}" for b, length in shapes)
    logger.info("brs: %s trains on %d shapes (max_shapes=%s; batch x padded length): %s; "
                "modelled step time %.3fx the unbounded plan's on the same samples (%d steps "
                "of epoch %d)", framework, len(shapes), sampler.max_shapes, shown, ratio,
                min(_SAMPLED_STEPS, sampler.steps_per_epoch), sampler.epoch)
