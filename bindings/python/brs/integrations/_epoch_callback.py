"""The Trainer callback that keeps a brs sampler in step with the training loop.

- At each epoch start it sets the sampler's epoch from the global step. The Trainer's own
  ``set_epoch`` call does not reach a batch sampler under accelerate's wrappers once
  ``skip_first_batches`` has added one (resume inside an epoch), which would replay epoch 0.
- It writes the plan's fingerprint (and the settings behind it) into every checkpoint's
  trainer state, and on resume refuses a run whose plan differs: other samples than the
  interrupted run's would be trained, silently. Another number of processes with the same
  global batch is the same sample stream and is accepted (accepts_other_split): the Trainer's
  checkpoints lie on optimizer steps, where such a resume starts.
"""

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState

from .accelerate import find_rebalance_sampler

# What the fingerprint depends on that a user changes between runs, for the error message.
_SETTINGS = ("dp_size", "grad_accum", "per_device_batch_size", "seed", "drop_last", "sync")
_SETTING_NAMES = {"dp_size": "world size (data-parallel processes)",
                  "grad_accum": "gradient_accumulation_steps",
                  "per_device_batch_size": "per_device_train_batch_size",
                  "seed": "seed (data_seed if set, else seed)",
                  "drop_last": "dataloader_drop_last",
                  "sync": "sync model (RebalanceOptions.sync; \"auto\" follows the job)"}


class RebalanceEpochCallback(TrainerCallback, ExportableState):
    """Added by BatchRebalanceMixin; not meant to be added by hand."""

    def __init__(self):
        self._sampler = None

    def bind(self, sampler):
        self._sampler = sampler

    def state(self):
        sampler = self._sampler
        if sampler is None:
            return {"args": {}, "attributes": {}}
        attributes = {"fingerprint": sampler.fingerprint,
                      "stream_fingerprint": sampler.stream_fingerprint}
        attributes.update({name: getattr(sampler, name) for name in _SETTINGS})
        if sampler.measurements is not None:  # online calibration: the model in force
            attributes["cost"] = sampler.cost_state()
        return {"args": {}, "attributes": attributes}

    def on_train_begin(self, args, state, control, train_dataloader=None, **kwargs):
        sampler = self._resolve(train_dataloader)
        saved = _saved_attributes(state, type(self).__name__)
        if "cost" in saved:  # before the comparison: the saved fingerprint covers that model
            sampler.load_cost_state(saved["cost"])
        if saved.get("fingerprint") in (None, sampler.fingerprint):
            return
        try:
            if sampler.accepts_other_split(_as_sampler_state(saved, state, sampler)):
                return
            hint = ""
        except ValueError as error:  # the same samples, but not resumable with this split
            hint = f" To resume on another number of processes instead: {error}"
        raise ValueError(_mismatch_message(saved, self.state()["attributes"]) + hint)

    def on_epoch_begin(self, args, state, control, train_dataloader=None, **kwargs):
        sampler = self._resolve(train_dataloader)
        sampler.set_epoch(state.global_step // sampler.steps_per_epoch)

    def _resolve(self, train_dataloader):
        # restore_callback_states_from_checkpoint=True replaces this callback by a fresh
        # instance, which finds the sampler again under the Trainer's dataloader.
        if self._sampler is None:
            self._sampler = find_rebalance_sampler(train_dataloader)
        if self._sampler is None:
            raise RuntimeError("RebalanceEpochCallback found no brs sampler: it only works "
                               "with BatchRebalanceMixin's train dataloader")
        return self._sampler


def _saved_attributes(state, name):
    """This callback's attributes in the trainer state (the checkpoint's, on resume)."""
    entry = (state.stateful_callbacks or {}).get(name) or {}
    if isinstance(entry, list):
        entry = entry[-1] if entry else {}
    return entry.get("attributes", {})


def _as_sampler_state(saved, state, sampler):
    """The checkpoint's plan settings in the form of a sampler state at its optimizer step."""
    epoch, step = divmod(state.global_step, sampler.steps_per_epoch)
    return {"fingerprint": saved["fingerprint"],
            "stream_fingerprint": saved.get("stream_fingerprint"), "epoch": epoch, "step": step,
            "micro": 0, **{key: saved.get(key) for key in sampler.split}}


def _mismatch_message(saved, current):
    changed = [f"{_SETTING_NAMES[key]} {saved[key]} -> {current[key]}"
               for key in _SETTINGS if key in saved and saved[key] != current[key]]
    what = "; ".join(changed) if changed else "the sample lengths or the rebalance options"
    return (
        f"cannot resume: the checkpoint's batch plan (fingerprint {saved['fingerprint']}) differs "
        f"from this run's ({current['fingerprint']}); changed: {what}. The resumed run would "
        "train other samples than the interrupted one. Resume with the checkpoint's settings "
        "(same number of processes, batch size, gradient accumulation, seed and dataset), or "
        "start a new run without resume_from_checkpoint.")
