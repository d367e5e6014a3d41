"""max_shapes="auto": the shape count that makes the whole run fastest by the cost model.

A vocabulary of K shapes costs each step some balance (its modelled step time rises as K falls)
and costs the run K first runs (compiles, captures: the calibrated ``first_shape_seconds`` each,
paid once, warm-up included). So the run takes about

    run_steps * mean step seconds(K) + shapes(K) * first_shape_seconds

and "auto" picks the K among CANDIDATES, or no bound (0), that makes that least. The mean step
seconds are the plans' own synchronised step times (the sampler's sync) over steps spread evenly
through epoch 0, in seconds by the cost model's seconds_per_unit. Without a bound, shapes(0) is
the distinct shapes of epoch 0 over every rank: a lower bound for a longer run, which favours
no bound a little on runs of several epochs.
"""

import logging

logger = logging.getLogger("brs")

CANDIDATES = (4, 8, 16, 32, 64, 128, 256)
SAMPLED_STEPS = 16


def choose(sampler, cost_model, run_steps):
    """(the chosen max_shapes, the table of every candidate). ValueError, saying what to give,
    when the cost model cannot price a shape against a step or the run's length is unknown."""
    _check(cost_model, run_steps)
    table = [_price(sampler, 0, cost_model, run_steps)]
    for count in CANDIDATES:
        try:
            table.append(_price(sampler.with_options(max_shapes=count), count, cost_model,
                                run_steps))
        except ValueError:  # fewer shapes than every step needs: not a candidate
            continue
    best = min(table, key=lambda row: (row["run_seconds"], row["max_shapes"]))
    logger.info("brs: max_shapes=\"auto\" chose %s for %d steps at %.3g s a new shape: %s",
                best["max_shapes"] or "no bound", run_steps, cost_model.first_shape_seconds,
                ", ".join(f"{row['max_shapes'] or 'none'}: {row['run_seconds']:.4g} s"
                          for row in table))
    return best["max_shapes"], table


def _check(cost_model, run_steps):
    import numbers

    if cost_model is None or cost_model.seconds_per_unit is None:
        raise ValueError('max_shapes="auto" needs a calibrated cost_model= (brs.calibrate or '
                         'python -m brs calibrate), whose seconds_per_unit and '
                         'first_shape_seconds price a new shape against a step; or give '
                         'max_shapes a number')
    if cost_model.first_shape_seconds <= 0:
        raise ValueError('max_shapes="auto": the cost model measured no first_shape_seconds '
                         '(calibrate with warm-up timing on), so no shape count pays; give '
                         'max_shapes a number')
    if (isinstance(run_steps, bool) or not isinstance(run_steps, numbers.Integral)
            or run_steps < 1):
        raise ValueError(f'max_shapes="auto" needs run_steps=, the optimizer steps the run '
                         f'takes (an int >= 1); got {run_steps!r}')


def _price(sampler, count, cost_model, run_steps):
    steps = sampler.steps_per_epoch
    picked = sorted({i * steps // SAMPLED_STEPS for i in range(min(SAMPLED_STEPS, steps))})
    key = "step_sync_time" if sampler.sync == "step" else "micro_sync_time"
    units = [getattr(sampler.plan(step, epoch=0), key) for step in picked]
    step_seconds = cost_model.seconds_per_unit * sum(units) / max(1, len(units))
    if count:
        shapes = len(sampler.shape_vocabulary())
    else:
        shapes = len({_shape(mb, sampler.packed) for step in range(steps)
                      for rank in sampler.plan(step, epoch=0).micro_batches for mb in rank})
    return {"max_shapes": count, "shapes": shapes, "step_seconds": step_seconds,
            "run_seconds": run_steps * step_seconds + shapes * cost_model.first_shape_seconds}


def _shape(mb, packed):
    return (1, mb.padded_tokens) if packed else (mb.num_samples, mb.padded_length)
