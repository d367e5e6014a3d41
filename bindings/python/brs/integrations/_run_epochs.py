"""How many epochs a training loop will run, where it says so: the epochs that
BatchRebalanceSampler.check_epochs checks before the first step.

An epoch is ``sampler.steps_per_epoch`` optimizer steps in every loop here (the integrations
check that the loop's gradient accumulation is the sampler's grad_accum).
"""

import math


def _ceil_div(steps, steps_per_epoch):
    return -(-steps // max(1, steps_per_epoch))


def trainer_epochs(args, steps_per_epoch):
    """The transformers Trainer's: ``max_steps`` when positive (it wins over num_train_epochs,
    as in the Trainer), else ``num_train_epochs`` rounded up (a fraction starts an epoch)."""
    if args.max_steps > 0:
        return _ceil_div(args.max_steps, steps_per_epoch)
    return max(1, math.ceil(args.num_train_epochs))


def lightning_epochs(trainer, steps_per_epoch):
    """Lightning's: the fewer of ``max_epochs`` and the epochs ``max_steps`` spans; None when
    neither bounds the run (max_epochs=-1 with max_steps=-1: training until stopped)."""
    bounds = []
    if trainer.max_epochs is not None and trainer.max_epochs >= 0:
        bounds.append(max(1, trainer.max_epochs))
    if trainer.max_steps is not None and trainer.max_steps > 0:
        bounds.append(_ceil_div(trainer.max_steps, steps_per_epoch))
    return min(bounds) if bounds else None
