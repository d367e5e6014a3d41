"""The cost model a sampler plans with, and online calibration's switches of it from a step on.

A sampler plans with the alpha, intercept and encoder numbers it was built with (a CostModel's,
the caller's own, or the library's defaults). Online calibration (brs/calibration/online.py)
switches them from a step on: the steps a DataLoader has drawn already (it prefetches) keep the
previous model, and the state_dict records where the switch lies, so that a resume replans both
sides alike. CostModelSchedule holds that: the CostModel given or switched to (its source and
evidence), the latest switch, the measurements behind it, and the twin sampler that plans the
steps before the switch. The sampler holds one; it sets the library's options, this decides.
"""

from . import cost_model as _cost_model

#: The options a switch of cost model changes from a step on; the caps stay.
SWITCHED = ("alpha", "intercept", "encoder_weight", "encoder_alpha", "encoder_intercept")


class CostModelSchedule:
    """Which cost model plans which step of one sampler.

    ``model``: the brs.CostModel given or switched to, for its source and evidence (None: none
    given). ``switch``: None, or {"epoch", "step", "previous"}: from (epoch, step) on the
    current model plans, before it ``previous`` ({option: value} of SWITCHED). ``measurements``:
    the JSON-able summary an online calibration keeps here.
    """

    def __init__(self, model=None):
        self.model = model
        self.switch = None
        self.measurements = None
        self._twin = None  # a sampler holding the previous model, made on first need

    def cost_model(self, sampler):
        """The brs.CostModel ``sampler`` plans with: its options as the library stores them,
        with the source and evidence of the model given or switched to, if any."""
        data = (self.model or _cost_model.CostModel.fixed()).to_dict()
        data.update(alpha=sampler.alpha, intercept=sampler.intercept,
                    max_tokens=sampler.max_tokens or None, encoder_weight=sampler.encoder_weight,
                    encoder_alpha=sampler.encoder_alpha,
                    encoder_intercept=sampler.encoder_intercept,
                    max_encoder_tokens=sampler.max_encoder_tokens or None)
        if self.model is None and sampler.was_given("alpha"):
            data["model"] = ""  # the caller's own numbers, not the library's default
        return _cost_model.CostModel.from_dict(data)

    @staticmethod
    def start(since, earliest):
        """Where a switch asked for at ``since`` takes over: ``earliest`` (the first step not
        planned yet) when None; ValueError when it lies before that."""
        since = earliest if since is None else tuple(since)
        if since < earliest:
            raise ValueError(f"switch_cost_model: since={since} lies before {earliest}, the "
                             "first (epoch, step) this sampler has not planned yet")
        return since

    def switched(self, model, since, previous):
        """Records that ``model`` plans from ``since`` on, ``previous`` before it."""
        self.model = model
        self.switch = {"epoch": since[0], "step": since[1], "previous": previous}
        self._twin = None

    def before_switch(self, epoch, step):
        """True when (epoch, step) lies before the latest switch: the previous model plans it."""
        switch = self.switch
        return switch is not None and (epoch, step) < (switch["epoch"], switch["step"])

    def twin(self, sampler, topology):
        """The sampler that plans the steps before the switch: ``sampler`` with the previous
        model, on ``topology`` (dp_size, rank); made once."""
        if self._twin is None:
            dp_size, rank = topology
            self._twin = sampler.with_options(**self.switch["previous"], dp_size=dp_size,
                                              rank=rank)
        return self._twin

    def state(self, sampler):
        """The cost model in force, the latest switch and the measurements, as state_dict saves
        them."""
        return {"cost_model": self.cost_model(sampler).to_dict(), "cost_switch": self.switch,
                "measurements": self.measurements}

    @staticmethod
    def parse(state):
        """(model, switch) of a state saved under online calibration (it carries measurements);
        None for a state without them. ValueError for a malformed one."""
        if state.get("measurements") is None or state.get("cost_model") is None:
            return None
        model = _cost_model.CostModel.from_dict(state["cost_model"], "state['cost_model']")
        switch = state.get("cost_switch")
        if switch is not None and not (isinstance(switch, dict)
                                       and {"epoch", "step", "previous"} <= switch.keys()):
            raise ValueError("state['cost_switch'] must be None or the dict state_dict() wrote")
        return model, switch

    def adopt(self, model, switch, measurements):
        """Takes a parsed state's model, switch and measurements."""
        self.model = model
        self.switch = None if switch is None else dict(switch)
        self.measurements = measurements
        self._twin = None

    def saved(self):
        """What restore puts back: (model, switch, measurements)."""
        return self.model, self.switch, self.measurements

    def restore(self, saved):
        self.model, self.switch, self.measurements = saved
        self._twin = None
