"""The ``brs/`` metrics of an optimizer step, as the integrations log them during training.

Every value is read from the sampler's plan of the step (the library's own queries), never
recomputed here, so the training logs agree with ``python -m brs report`` on the same step.
The plan is the same on every rank, so the metrics describe the whole step, all ranks.
"""

from brs import options

PADDING_EFFICIENCY = "brs/padding_efficiency"
REAL_TOKENS = "brs/real_tokens"
PEAK_PADDED_TOKENS = "brs/peak_padded_tokens"
TIME_OVER_BOUND = "brs/step_time_over_bound"
# With max_shapes: the step time over the bound of the same samples planned without the shape
# vocabulary (the unbounded plan's), i.e. what the vocabulary costs; TIME_OVER_BOUND is then the
# bound within the vocabulary, how well the step is balanced on its shapes.
TIME_OVER_UNBOUNDED = "brs/step_time_over_unbounded_bound"
MICRO_BATCHES = "brs/micro_batches"
NAMES = (PADDING_EFFICIENCY, REAL_TOKENS, PEAK_PADDED_TOKENS, TIME_OVER_BOUND, MICRO_BATCHES)

_UNBOUNDED = {}  # id(sampler) -> (sampler, its clone with max_shapes=0)


def unbounded_bound(sampler, step, epoch):
    """The time_lower_bound of step ``step`` planned without the shape vocabulary (the same
    samples: the vocabulary only changes the split), or None when the sampler has none."""
    if not getattr(sampler, "max_shapes", 0):
        return None
    kept = _UNBOUNDED.get(id(sampler))
    if kept is None or kept[0] is not sampler:
        kept = _UNBOUNDED[id(sampler)] = (sampler, sampler.with_options(max_shapes=0))
    return kept[1].plan(step, epoch=epoch).time_lower_bound


def step_metrics(sampler, step, epoch):
    """The metrics of optimizer step ``step`` (0-based, within ``epoch``) of ``sampler``."""
    return plan_metrics(sampler.plan(step, epoch=epoch), planned_time_name(sampler),
                        unbounded_bound(sampler, step, epoch))


def planned_time_name(sampler):
    """Which of the plan's sync times is the step time the sampler optimises."""
    # A sampler that does not expose its sync model (BRS_OPT_SYNC) plans for the library's default.
    sync = getattr(sampler, "sync", options.BY_NAME["sync"].default_value)
    return "step_sync_time" if sync in ("step", 1) else "micro_sync_time"


def plan_metrics(plan, time_name="micro_sync_time", unbounded=None):
    """name -> value for one Plan (see brs.plan.Plan for the fields); ``unbounded`` the bound of
    its samples without the shape vocabulary (unbounded_bound), None without max_shapes."""
    bound = plan.time_lower_bound
    extra = {} if unbounded is None else {
        TIME_OVER_UNBOUNDED: getattr(plan, time_name) / unbounded if unbounded > 0 else 1.0}
    return extra | {
        # real / padded tokens of all micro-batches: 1.0 means no padding at all
        PADDING_EFFICIENCY: plan.total_real_tokens / max(1, plan.total_padded_tokens),
        REAL_TOKENS: plan.total_real_tokens,
        # the largest micro-batch's padded tokens: what memory follows
        PEAK_PADDED_TOKENS: plan.max_padded_tokens,
        # planned step time over the proven lower bound: 1.0 is a perfect balance
        TIME_OVER_BOUND: getattr(plan, time_name) / bound if bound > 0 else 1.0,
        MICRO_BATCHES: sum(1 for rank in plan.micro_batches for mb in rank if mb.num_samples),
    }


class MetricsWindow:
    """Steps recorded since the last log, summarised when the framework next logs.

    With one step per log (Trainer ``logging_steps=1``) the summary is that step's metrics.
    Over several steps: efficiency and time ratio of the window's sums, real tokens and
    micro-batch count per step on average, and the window's peak.
    """

    def __init__(self):
        self._plans = []

    def record(self, plan, time_name, unbounded=None):
        self._plans.append((plan, time_name, unbounded))

    def flush(self):
        plans, self._plans = self._plans, []
        if len(plans) <= 1:
            return plan_metrics(*plans[0]) if plans else {}
        each = [plan_metrics(plan, name) for plan, name, _ in plans]
        count = len(plans)
        real = sum(plan.total_real_tokens for plan, _, _ in plans)
        padded = sum(plan.total_padded_tokens for plan, _, _ in plans)
        time = sum(getattr(plan, name) for plan, name, _ in plans)
        bound = sum(plan.time_lower_bound for plan, _, _ in plans)
        unbounded = [u for _, _, u in plans if u is not None]
        extra = {TIME_OVER_UNBOUNDED: time / sum(unbounded)} if len(unbounded) == count and \
            sum(unbounded) > 0 else {}
        return extra | {
            PADDING_EFFICIENCY: real / max(1, padded),
            REAL_TOKENS: real / count,
            PEAK_PADDED_TOKENS: max(m[PEAK_PADDED_TOKENS] for m in each),
            TIME_OVER_BOUND: time / bound if bound > 0 else 1.0,
            MICRO_BATCHES: sum(m[MICRO_BATCHES] for m in each) / count,
        }
