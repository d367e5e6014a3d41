"""The Trainer callback of online calibration (brs/calibration/online.py).

BatchRebalanceMixin times each training_step; this callback refits at the boundaries every
rank knows in advance (on_epoch_end, or on_step_end every ``recalibrate_every`` optimizer
steps: callbacks run on every rank at the same global step), switches the sampler and logs the
switch through the Trainer's log (``brs/calibration_*`` keys) and the "brs" logger. The cost
model in force and the agreed statistics travel in the checkpoint with RebalanceEpochCallback's
state, which restores them before it compares fingerprints.
"""

from transformers import TrainerCallback

from brs.calibration.online import OnlineCalibration


class OnlineCalibrationCallback(TrainerCallback):
    """Added by BatchRebalanceMixin for RebalanceOptions(calibrate_online=True)."""

    def __init__(self, every, log):
        self.calibration = OnlineCalibration(every)
        self._log = log  # a weakref.WeakMethod of the Trainer's log: no reference cycle
        self._sampler = None

    def bind(self, sampler):
        self._sampler = sampler

    def on_train_begin(self, args, state, control, **kwargs):
        if self._sampler is not None:  # restored by RebalanceEpochCallback on resume
            self.calibration.restore(self._sampler)

    def on_step_end(self, args, state, control, **kwargs):
        if self.calibration.due(state.global_step, epoch_end=False):
            self._recalibrate(args)

    def on_epoch_end(self, args, state, control, **kwargs):
        if self.calibration.due(state.global_step, epoch_end=True):
            self._recalibrate(args)

    def _recalibrate(self, args):
        if self._sampler is None:
            return
        metrics = self.calibration.recalibrate(self._sampler, args.gradient_accumulation_steps)
        log = self._log()
        if log is not None:
            log(metrics)
