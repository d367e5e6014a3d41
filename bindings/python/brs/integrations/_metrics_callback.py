"""The Trainer callback that records the brs/ metrics of every optimizer step.

It records the plan of each step as it ends; BatchRebalanceMixin.log adds the summary of the
steps since the last log to the Trainer's training log, so the metrics reach log_history and
every reporting integration (TensorBoard, W&B, ...) like the loss does.
"""

from transformers import TrainerCallback

from ._metrics import MetricsWindow, planned_time_name


class RebalanceMetricsCallback(TrainerCallback):
    """Added by BatchRebalanceMixin unless ``rebalance_metrics=False``."""

    def __init__(self):
        self.window = MetricsWindow()
        self._sampler = None

    def bind(self, sampler):
        self._sampler = sampler

    def on_step_end(self, args, state, control, **kwargs):
        sampler = self._sampler
        if sampler is None or state.global_step < 1:
            return
        # The epoch callback keeps the sampler's epoch at global_step // steps_per_epoch, so
        # the step that just ended is this one of the plan.
        done, steps = state.global_step - 1, sampler.steps_per_epoch
        self.window.record(sampler.plan(done % steps, epoch=done // steps),
                           planned_time_name(sampler))
